// `semsim calibrate --from-raw` of a multi-process run's per-rank raw folder: one profile with
// scale-out fits and the measured topology, and a run on two nodes with it says its scale-out was
// measured; a cluster of other nodes is an error naming the scenario's key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/calibrate/multi_rank_raw.hpp"
#include "tests/cli/cli_runner.hpp"

namespace semsim {
namespace {

using cli_test::describe;
using cli_test::run_semsim;
using cli_test::TempDir;

TEST(MultiRankCalibration, FromRawFitsScaleOutAndARunReportsItMeasured) {
  TempDir dir;
  test::write_multi_rank_raw(dir / "raw");
  const std::vector<std::string> fit{"calibrate", "--from-raw", dir / "raw", "--out", dir / "lab.yaml"};
  const auto fitted = run_semsim(fit);
  ASSERT_EQ(fitted.exit_code, 0) << describe(fit, fitted);
  EXPECT_NE(fitted.out.find("measured on 2 node(s) of 8 GPU(s), 8 NIC(s) per node"), std::string::npos)
      << fitted.out;
  EXPECT_NE(fitted.out.find("all_to_all      scaleout x16"), std::string::npos) << fitted.out;
  const std::string profile = cli_test::read_file(dir / "lab.yaml");
  EXPECT_NE(profile.find("level: scaleout"), std::string::npos);
  EXPECT_NE(profile.find("topology: {nodes: 2, gpus_per_node: 8"), std::string::npos) << profile;

  const std::vector<std::string> run{"run",   "default",
                                     "--set", "calibration=" + dir / "lab.yaml",
                                     "--set", "cluster=h200-2x8",
                                     "--set", "parallelism.ep=16",
                                     "--set", "workload.requests=5",
                                     "--out", dir / "run"};
  const auto simulated = run_semsim(run);
  ASSERT_EQ(simulated.exit_code, 0) << describe(run, simulated);
  const auto summary = nlohmann::json::parse(cli_test::read_file(dir / "run/summary.json"));
  EXPECT_EQ(summary["calibration"], "h200-sxm-measured");
  EXPECT_EQ(summary["calibration_links"],
            nlohmann::json({{"scaleup", "measured"}, {"scaleout", "measured"}, {"note", ""}}));

  const std::vector<std::string> preset{"run",   "default",     "--set", "workload.requests=5",
                                        "--out", dir / "preset"};
  ASSERT_EQ(run_semsim(preset).exit_code, 0);
  const auto embedded = nlohmann::json::parse(cli_test::read_file(dir / "preset/summary.json"));
  EXPECT_EQ(embedded["calibration_links"]["scaleout"], "preset") << "the embedded profile measured one node";
}

TEST(MultiRankCalibration, AProfileOfOtherNodesIsAnErrorNamingTheKey) {
  TempDir dir;
  test::MultiRankRaw four_per_node;
  four_per_node.gpus_per_node = 4;
  test::write_multi_rank_raw(dir / "raw", four_per_node);
  ASSERT_EQ(run_semsim({"calibrate", "--from-raw", dir / "raw", "--out", dir / "lab.yaml"}).exit_code, 0);
  const std::vector<std::string> run{
      "run",   "default",  "--set", "calibration=" + dir / "lab.yaml", "--set", "workload.requests=5",
      "--out", dir / "run"};
  const auto r = run_semsim(run);
  EXPECT_EQ(r.exit_code, 2) << describe(run, r);
  EXPECT_NE(
      r.err.find("measured its collectives on nodes of 4 GPUs (provenance.topology), but cluster 'h200-1x8' "
                 "has 8 per node"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("calibration"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace semsim
