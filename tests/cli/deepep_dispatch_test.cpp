// DeepEP's dispatch modes end to end: across two nodes `normal` sends one RDMA copy per token and
// node and forwards inside it, so fewer bytes cross the NICs than NCCL-style dedup sends and the
// difference reappears as forwarded NVLink bytes; on one node it moves exactly dedup's copies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

nlohmann::json summary_with_dispatch(const TempDir& tmp, const std::string& dispatch,
                                     const std::vector<std::string>& sets) {
  const std::string out = tmp / dispatch;
  std::vector<std::string> args{"run",   "default",
                                "--set", "policies.dispatch=" + dispatch,
                                "--set", "workload.requests=30",
                                "--set", "calibration=datasheet",
                                "--out", out};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  return nlohmann::json::parse(read_file(fs::path(out) / "summary.json"));
}

TEST(cliDeepepDispatch, NormalAcrossNodesSendsOneRdmaCopyPerNodeAndForwardsTheRest) {
  TempDir tmp;
  const std::vector<std::string> two_nodes{"cluster=h200-2x8", "parallelism.ep=16"};
  const auto dedup = summary_with_dispatch(tmp, "dedup", two_nodes);
  const auto normal = summary_with_dispatch(tmp, "normal", two_nodes);
  EXPECT_EQ(dedup["a2a_bytes"]["forwarded"], 0.0);
  const double forwarded = normal["a2a_bytes"]["forwarded"];
  EXPECT_GT(forwarded, 0);
  EXPECT_LT(normal["a2a_bytes"]["scale_out"].get<double>(),
            0.6 * dedup["a2a_bytes"]["scale_out"].get<double>());
  EXPECT_LE(forwarded, normal["a2a_bytes"]["scale_up"].get<double>());
  EXPECT_EQ(normal["dispatch"], "normal");
  // The datasheet profile has no DeepEP tables: the measured H100/H200 kernels' link model prices it.
  EXPECT_NE(normal["dispatch_kernel"].get<std::string>().find("link model of the measured H100/H200 DeepEP"),
            std::string::npos)
      << normal["dispatch_kernel"];
}

TEST(cliDeepepDispatch, NormalOnOneNodeMovesDedupsCopies) {
  TempDir tmp;
  const auto dedup = summary_with_dispatch(tmp, "dedup", {});
  // Priced as its copies over the topology (serving.ep_kernel: nccl), as dedup's are.
  const auto normal = summary_with_dispatch(tmp, "normal", {"serving.ep_kernel=nccl"});
  EXPECT_EQ(normal["a2a_bytes"], dedup["a2a_bytes"]);
  EXPECT_EQ(normal["mean_step_seconds"], dedup["mean_step_seconds"]);
  EXPECT_EQ(normal["lar"], dedup["lar"]);
}

// Experts split over every device (moe.tp 8, moe.ep 1) dispatch no token: the default scenario's
// DeepEP dispatch, which the user did not choose, gives way (reported as none, no low-latency buffers
// reserved, the run as with the registry's dedup), while a DeepEP dispatch the user gives is refused.
TEST(cliDeepepDispatch, TheDefaultDispatchGivesWayToExpertsSplitOverEveryDevice) {
  TempDir tmp;
  const std::string experts_tp = "parallelism={attention: {dp: 8}, moe: {tp: 8}}";
  const std::vector<std::string> args{"run",   "default",
                                      "--set", experts_tp,
                                      "--set", "workload.requests=30",
                                      "--set", "calibration=datasheet",
                                      "--out", tmp / "default"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("no dispatch"), std::string::npos) << r.out;
  const auto by_default = nlohmann::json::parse(read_file(tmp / "default/summary.json"));
  EXPECT_EQ(by_default["dispatch"], "none");
  const auto dedup = summary_with_dispatch(tmp, "dedup", {experts_tp});
  EXPECT_EQ(dedup["dispatch"], "none");
  EXPECT_EQ(by_default["dispatch_buffer_bytes_per_device"], dedup["dispatch_buffer_bytes_per_device"]);
  EXPECT_EQ(by_default["mean_step_seconds"], dedup["mean_step_seconds"]);
  for (const std::string given : {"auto", "low_latency"}) {
    const std::vector<std::string> refused{"check",    "default", "--set",
                                           experts_tp, "--set",   "policies.dispatch=" + given};
    const CliResult e = run_semsim(refused);
    EXPECT_EQ(e.exit_code, 2) << describe(refused, e);
    EXPECT_NE(e.err.find("policies.dispatch"), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("no token is dispatched"), std::string::npos) << e.err;
  }
}

}  // namespace
}  // namespace semsim::cli_test
