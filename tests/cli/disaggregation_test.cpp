// A disaggregated run's outputs: the requests end to end, the KV transfers one row per request,
// each pool's summary with its nodes, throughput per node and busy share; byte-identical reruns.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/csv.hpp"

namespace semsim::cli_test {
namespace {

const std::vector<std::string> kPoolsOnThreeNodes{
    "--set", "cluster={preset: h200-ib, nodes: 3}",
    "--set", "workload.requests=40",
    "--set", "calibration=datasheet",
    "--set", "workload.input_len.value=1024",
    "--set", "workload.output_len.value=16",
    "--set", "disaggregation={prefill: {nodes: 1}, decode: {nodes: 2, set: {parallelism.ep: 16}}}"};

CliResult run_pools(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run", "default", "--out", out};
  args.insert(args.end(), kPoolsOnThreeNodes.begin(), kPoolsOnThreeNodes.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return run_semsim(args);
}

TEST(cliDisaggregation, WritesEndToEndRequestsKvTransfersAndEachPoolsSummary) {
  TempDir tmp;
  const CliResult r = run_pools(tmp / "out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("decode pool: nodes / EP / busy:         2 (from node 1) / EP16"), std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_file(fs::path(tmp / "out") / "summary.json"));
  EXPECT_EQ(j["pool"], "disaggregated");
  EXPECT_EQ(j["requests_completed"], 40);
  EXPECT_EQ(j["ep_nodes"], 3.0);
  const nlohmann::json& d = j["disaggregation"];
  EXPECT_EQ(d["kv_transfers"], 40);
  EXPECT_EQ(d["kv_transfer"], "layerwise");
  EXPECT_EQ(d["pools"]["prefill"]["nodes"], 1);
  EXPECT_EQ(d["pools"]["decode"]["first_node"], 1);
  EXPECT_EQ(d["pools"]["decode"]["ep"], 16);
  EXPECT_EQ(d["pools"]["prefill"]["pool"], "prefill");
  // The prefill pool prefilled every prompt; the decode pool decoded all but each first token.
  EXPECT_EQ(d["pools"]["prefill"]["completed_tokens"]["input"], 40 * 1024);
  EXPECT_EQ(j["completed_tokens"]["output"], 40 * 16);
  for (const char* pool : {"prefill", "decode"}) {
    EXPECT_GT(d["pools"][pool]["busy_share"].get<double>(), 0) << pool;
    EXPECT_LE(d["pools"][pool]["busy_share"].get<double>(), 1) << pool;
  }
  // TTFT end to end includes the prefill pool's TTFT and the KV transfer.
  EXPECT_GT(j["ttft_s"]["mean"].get<double>(), d["pools"]["prefill"]["ttft_s"]["mean"].get<double>());
  const auto rows = split_lines(read_file(fs::path(tmp / "out") / "kv_transfers.csv"));
  ASSERT_EQ(rows.size(), 41u);
  EXPECT_EQ(rows[0], "id,prefill_rank,decode_rank,bytes,start_s,end_s,seconds");
  EXPECT_TRUE(fs::exists(fs::path(tmp / "out") / "prefill_steps.csv"));
}

TEST(cliDisaggregation, RerunsAreByteIdentical) {
  TempDir tmp;
  for (const char* out : {"a", "b"})
    ASSERT_EQ(
        run_pools(tmp / out, {"--set", "network.fidelity=flow", "--set", "workload.requests=12"}).exit_code,
        0);
  for (const char* file : {"requests.csv", "steps.csv", "prefill_steps.csv", "kv_transfers.csv"})
    EXPECT_EQ(read_file(fs::path(tmp / "a") / file), read_file(fs::path(tmp / "b") / file)) << file;
}

// A sweep over a disaggregated scenario gives each pool's values their own points.csv columns.
TEST(cliDisaggregation, SweepRecordsEachPoolsColumns) {
  TempDir tmp;
  std::ofstream(tmp / "sweep.yaml")
      << "sweep: 1\nbase: default\nset:\n  cluster: {preset: h200-ib, nodes: 2}\n"
         "  workload.requests: 16\n  calibration: datasheet\n"
         "  disaggregation: {prefill: {nodes: 1}, decode: {nodes: 1}}\n"
         "axes:\n  - workload.arrival.rate: [10, 40]\n";
  const std::vector<std::string> args{"sweep", tmp / "sweep.yaml", "--out", tmp / "out"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto rows = split_lines(read_file(fs::path(tmp / "out") / "points.csv"));
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> header = split_csv_line(rows[0]);
  const auto column = std::find(header.begin(), header.end(), "disaggregation.pools.decode.busy_share");
  ASSERT_NE(column, header.end());
  for (int row : {1, 2})
    EXPECT_FALSE(split_csv_line(rows[row])[column - header.begin()].empty()) << rows[row];
}

TEST(cliDisaggregation, TimelineIsRefusedBeforeAnythingIsWritten) {
  TempDir tmp;
  const CliResult r = run_pools(tmp / "out", {"--timeline", tmp / "t.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is disaggregated"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

}  // namespace
}  // namespace semsim::cli_test
