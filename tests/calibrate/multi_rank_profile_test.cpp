// A multi-process run's per-rank raw results merged into one profile: the layout detected, the
// slowest rank's time kept, scale-out fits recovering known laws on message sizes held out of the
// fit, the topology recorded, and the merge's errors (missing, duplicate, mismatched ranks).
#include <gtest/gtest.h>

#include <filesystem>

#include "calibrate/fit/fit.hpp"
#include "calibrate/import/measured_profile.hpp"
#include "calibrate/import/raw_results.hpp"
#include "tests/calibrate/multi_rank_raw.hpp"
#include "tests/preset_fixtures.hpp"
#include "tests/unit_test_helpers.hpp"

namespace semsim {
namespace {

using test::error_of;
using test::h200;
using test::TempFolder;

const CollectiveFit& fit_of(const CalibrationProfile& p, const std::string& collective,
                            const std::string& level, int ranks) {
  for (const CollectiveFit& f : p.collectives)
    if (f.collective == collective && f.level == level && f.ranks == ranks) return f;
  throw std::runtime_error("no fit " + collective + " " + level);
}

// Relative error of the fit's prediction at message sizes the fit never saw (2 KiB * 4^k), against
// the law the samples came from (on the slowest rank).
double worst_held_out_error(const CollectiveFit& fit, const test::CollectiveLaw& law, double bus_share,
                            double message_share) {
  double worst = 0;
  for (double bytes = 2048; bytes < (1 << 30); bytes *= 4) {
    const double bus = bytes * bus_share, message = bytes * message_share;
    const double measured = law.seconds(bus, message) * (1 + test::kSlowestRankExtra);
    worst = std::max(worst, std::abs(collective_seconds(fit, bus, message) - measured) / measured);
  }
  return worst;
}

TEST(MultiRankProfile, MergesTheRanksAndFitsScaleOutBesideScaleUp) {
  TempFolder folder;
  const std::string raw = folder / "raw";
  test::write_multi_rank_raw(raw);
  ASSERT_TRUE(is_per_rank_raw(raw));
  const RawResults merged = read_raw_results(raw);
  EXPECT_EQ(merged.ranks, 16);
  EXPECT_EQ(merged.topology, (ProfileTopology{2, 8, 8, {"gpu-node-0", "gpu-node-1"}}));
  EXPECT_EQ(merged.checks.rows().size(), 16u) << "every rank's data checks";

  const CalibrationProfile p = fit_measured_profile(raw, h200());
  ASSERT_TRUE(p.provenance && p.provenance->topology);
  EXPECT_EQ(*p.provenance->topology, merged.topology);
  EXPECT_EQ(p.provenance->gpus, 16);
  // scale-up all-to-all of 8, scale-out all-to-all and all-gather of 16, same-rail send/recv of 2;
  // the cross-rail pair stays in the raw results.
  ASSERT_EQ(p.collectives.size(), 4u);
  const double slow = 1 + test::kSlowestRankExtra;
  // Recovered within 1 % (alpha: the smallest message's time less its few bytes' transfer), and
  // the efficiency curve predicts the held-out sizes within 3 %.
  const CollectiveFit& a2a = fit_of(p, "all_to_all", "scaleout", 16);
  EXPECT_NEAR(a2a.alpha, test::kScaleOutAllToAll.alpha * slow, 0.01 * a2a.alpha);
  EXPECT_NEAR(a2a.efficiency, 0.7 / slow, 0.01);
  EXPECT_LT(worst_held_out_error(a2a, test::kScaleOutAllToAll, 8.0 / 16, 1.0 / 16), 0.03);
  const CollectiveFit& gather = fit_of(p, "all_gather", "scaleout", 16);
  EXPECT_NEAR(gather.efficiency, 0.75 / slow, 0.01);
  EXPECT_LT(worst_held_out_error(gather, test::kScaleOutAllGather, 15.0 / 16, 1.0 / 16), 0.03);
  const CollectiveFit& rail = fit_of(p, "send_recv", "scaleout", 2);
  EXPECT_NEAR(rail.efficiency, 0.9 / slow, 0.01) << "the same-rail pair, not the cross-rail one (0.6)";
  EXPECT_LT(worst_held_out_error(rail, test::kSameRail, 1, 1), 0.03);
  const CollectiveFit& up = fit_of(p, "all_to_all", "scaleup", 8);
  EXPECT_NEAR(up.efficiency, 0.8 / slow, 0.01);
  // The profile's efficiencies: scale-up and scale-out from the all-to-alls.
  EXPECT_DOUBLE_EQ(p.scaleup_efficiency, up.efficiency);
  EXPECT_DOUBLE_EQ(p.scaleout_efficiency, a2a.efficiency);
  EXPECT_DOUBLE_EQ(p.collective_overhead, up.alpha);
  EXPECT_NE(p.notes.find("(2 node(s) of 8 GPU(s))"), std::string::npos) << p.notes;
  EXPECT_NE(p.notes.find("Efficiencies derived from the samples: scaleup, scaleout (the others are the "
                         "datasheet's)"),
            std::string::npos)
      << p.notes;
  const CalibrationProfile back =
      CalibrationProfile::from_yaml(YamlInput::parse(p.to_yaml(), "p.yaml"), h200());
  EXPECT_EQ(back, p) << "the topology reads back";
}

TEST(MultiRankProfile, ASingleNodeRunRecordsItsOneNode) {
  TempFolder folder;
  test::write_text(folder / "environment.csv", "key,value\ngpu,NVIDIA H200\ngpus,8\nnics,4\nhost,box\n");
  test::write_text(folder / "collectives.csv", test::kCollectiveHeader);
  EXPECT_FALSE(is_per_rank_raw(folder / ""));
  EXPECT_EQ(read_raw_results(folder / "").topology, (ProfileTopology{1, 8, 4, {"box"}}));
}

TEST(MultiRankProfile, MergeErrorsNameTheFileAndKey) {
  TempFolder folder;
  const std::string raw = folder / "raw";
  auto fresh = [&] {
    std::filesystem::remove_all(raw);
    test::write_multi_rank_raw(raw);
  };
  auto error = [&] { return error_of([&] { read_raw_results(raw); }); };
  fresh();
  std::filesystem::remove_all(raw + "/rank-5");
  EXPECT_EQ(error(),
            raw + ": rank 5 of 16 has no results (no rank-5/: it did not start, or its folder was lost)");
  fresh();
  std::filesystem::create_directories(raw + "/rank-05");
  EXPECT_EQ(error(), raw + "/rank-05 and " + raw + "/rank-5 are both rank 5");
  fresh();
  test::write_text(raw + "/rank-3/environment.csv",
                   test::rank_environment({}, 3) + "gpu,NVIDIA H100 80GB HBM3\n");  // the later entry wins
  EXPECT_EQ(error(),
            raw + "/rank-3/environment.csv: gpu: 'NVIDIA H100 80GB HBM3', but " + raw +
                "/rank-0/environment.csv says 'NVIDIA H200' (every rank must run the same GPU and software)");
  fresh();
  test::write_text(raw + "/rank-9/environment.csv", test::rank_environment({}, 9) + "nccl,2.21.5\n");
  EXPECT_EQ(error(),
            raw + "/rank-9/environment.csv: nccl: '2.21.5', but " + raw +
                "/rank-0/environment.csv says '2.28.9' (every rank must run the same GPU and software)");
  fresh();
  test::write_text(raw + "/rank-9/environment.csv", test::rank_environment({}, 9) + "run,4241.0\n");
  EXPECT_EQ(error(), raw + "/rank-9/environment.csv: run: '4241.0', but " + raw +
                         "/rank-0/environment.csv says '4242.0' (every rank must be of one run)");
  fresh();
  test::write_text(raw + "/rank-2/environment.csv", test::rank_environment({}, 6));
  EXPECT_EQ(error(), raw + "/rank-2/environment.csv: rank: 6, but the folder is rank 2");
  fresh();
  test::write_text(raw + "/rank-12/environment.csv", test::rank_environment({}, 12) + "host,gpu-node-0\n");
  EXPECT_EQ(error(), raw + "/rank-12/environment.csv: host: 'gpu-node-0', but " + raw +
                         "/rank-0/environment.csv says 'gpu-node-1' (ranks of one node run on one host)");
  fresh();
  test::write_text(
      raw + "/rank-4/collectives.csv",
      std::string(test::kCollectiveHeader) + "all_to_all,16,scaleout,,1024,64,512,fast,1,1,10,ok\n");
  EXPECT_EQ(error_of([&] { fit_measured_profile(raw, h200()); }),
            raw + "/rank-4/collectives.csv:2: seconds: expected a number, got 'fast'");
}

TEST(MultiRankProfile, AFailedPointOnAnyRankLeavesThePointOut) {
  TempFolder folder;
  const std::string raw = folder / "raw";
  test::write_multi_rank_raw(raw);
  std::string rows = test::kCollectiveHeader;
  for (double bytes = 1024; bytes <= (1 << 30); bytes *= 4)
    rows += fmt::format("all_to_all,16,scaleout,,{},{},{},,,,0,check_failed: 12 wrong elements\n", bytes,
                        bytes / 16, bytes / 2);
  test::write_text(raw + "/rank-7/collectives.csv", rows);
  const CalibrationProfile p = fit_measured_profile(raw, h200());
  for (const CollectiveFit& f : p.collectives)
    EXPECT_FALSE(f.collective == "all_to_all" && f.level == "scaleout") << "rank 7's data were wrong";
  EXPECT_DOUBLE_EQ(p.scaleout_efficiency, CalibrationProfile::datasheet(h200()).scaleout_efficiency);
}

}  // namespace
}  // namespace semsim
