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

}  // namespace
}  // namespace semsim::cli_test
