// Closed-loop workloads (workload.concurrency, bench_serving's --max-concurrency) and SGLang's
// prefill-first batching (serving.batching), checked on what a run writes: requests.csv's arrival
// and end-to-end columns, steps.csv's token columns, summary.json and the bench_serving result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

// A small scenario: DeepSeek-V2-Lite on one H200 node (or two for the pools), `workload` and
// `extra` lines as given.
std::string loop_scenario_text(const std::string& workload, const std::string& extra = "",
                               const std::string& cluster = "h200-1x8") {
  return "schema: 1\nname: loop\nmodel: deepseek-v2-lite\ncluster: " + cluster +
         "\nparallelism: {ep: 8, attention: dp}\ncalibration: datasheet\nworkload: " + workload + "\n" +
         extra;
}

struct LoopRun {
  CliResult cli;
  Json summary, result;
  std::string requests_csv, steps_csv;
};

LoopRun run_loop_scenario(const TempDir& tmp, const std::string& name, const std::string& text) {
  const std::string file = tmp / (name + ".yaml");
  std::ofstream(file) << text;
  const std::vector<std::string> args{
      "run", file, "--out", tmp / name, "--result-json", tmp / (name + ".json")};
  LoopRun run;
  run.cli = run_semsim(args);
  EXPECT_EQ(run.cli.exit_code, 0) << describe(args, run.cli);
  if (run.cli.exit_code != 0) return run;
  run.summary = Json::parse(read_file(fs::path(tmp / name) / "summary.json"));
  run.result = Json::parse(read_file(tmp / (name + ".json")));
  run.requests_csv = read_file(fs::path(tmp / name) / "requests.csv");
  run.steps_csv = read_file(fs::path(tmp / name) / "steps.csv");
  return run;
}

// requests.csv of a closed loop of `n` that completed every request: the first n are sent at 0,
// request n + j when the (j+1)-th finishes, so exactly n are in flight until the tail.
void expect_closed_loop(const std::string& requests_csv, int n) {
  const std::vector<double> arrival = column_of(requests_csv, "arrival_s");
  const std::vector<double> e2e = column_of(requests_csv, "e2e_s");
  const int requests = static_cast<int>(arrival.size());
  ASSERT_GT(requests, n);
  std::vector<double> finish;
  for (int i = 0; i < requests; ++i) {
    ASSERT_FALSE(std::isnan(e2e[i])) << "request " << i << " unfinished";
    finish.push_back(arrival[i] + e2e[i]);
  }
  std::vector<double> finishes = finish;
  std::sort(finishes.begin(), finishes.end());
  for (int i = 0; i < n; ++i) EXPECT_EQ(arrival[i], 0.0) << "request " << i;
  // The (n+1)-th request leaves when the first finishes, and so on (CSV values carry 9 digits).
  for (int j = 0; j + n < requests; ++j)
    EXPECT_NEAR(arrival[j + n], finishes[j], 1e-7 * finishes[j]) << "request " << j + n;
  // In flight between any two events up to the last send: n.
  std::vector<double> events = finishes;
  events.resize(requests - n);
  for (std::size_t e = 0; e + 1 < events.size(); ++e) {
    const double t = (events[e] + events[e + 1]) / 2;
    if (events[e + 1] - events[e] < 1e-6 * t) continue;  // too close to tell apart after rounding
    int in_flight = 0;
    for (int i = 0; i < requests; ++i) in_flight += arrival[i] <= t && finish[i] > t;
    EXPECT_EQ(in_flight, n) << "at " << t << " s";
  }
}

const std::string kLoop =
    "{requests: 40, concurrency: 6, seed: 3, input_len: {dist: uniform, min: 64, max: 700}, "
    "output_len: {dist: uniform, min: 2, max: 24}}";

TEST(cliClosedLoop, HoldsNRequestsInFlightAndReportsMaxConcurrency) {
  TempDir tmp;
  const LoopRun run = run_loop_scenario(tmp, "loop", loop_scenario_text(kLoop));
  ASSERT_EQ(run.cli.exit_code, 0);
  expect_closed_loop(run.requests_csv, 6);
  EXPECT_EQ(run.summary["max_concurrency"], 6);
  EXPECT_EQ(run.summary["request_rate"], "inf");
  EXPECT_EQ(run.summary["workload"]["arrival"]["process"], "closed_loop");
  EXPECT_EQ(run.result["max_concurrency"], 6);
  EXPECT_EQ(run.result["request_rate"], "inf");
  EXPECT_EQ(run.result["completed"], 40);
  EXPECT_NE(run.cli.out.find("Max request concurrency:                6\n"), std::string::npos)
      << run.cli.out;
}

TEST(cliClosedLoop, APrefillPoolsRequestsFinishAtTheirFirstToken) {
  TempDir tmp;
  const LoopRun run =
      run_loop_scenario(tmp, "prefill", loop_scenario_text(kLoop, "serving: {pool: prefill}\n"));
  ASSERT_EQ(run.cli.exit_code, 0);
  expect_closed_loop(run.requests_csv, 6);
  EXPECT_EQ(column_of(run.requests_csv, "e2e_s"), column_of(run.requests_csv, "ttft_s"));
}

TEST(cliClosedLoop, DisaggregatedTheDecodePoolsFinishesSendTheNextRequests) {
  TempDir tmp;
  const LoopRun run = run_loop_scenario(
      tmp, "pools",
      loop_scenario_text(kLoop, "disaggregation: {prefill: {nodes: 1}, decode: {nodes: 1}}\n",
                         "{preset: h200-ib, nodes: 2}"));
  ASSERT_EQ(run.cli.exit_code, 0);
  expect_closed_loop(run.requests_csv, 6);
  EXPECT_EQ(run.summary["requests_completed"], 40);
  EXPECT_EQ(run.summary["max_concurrency"], 6);
  // The prefill pool saw the same sends.
  const Json& prefill = run.summary["disaggregation"]["pools"]["prefill"];
  EXPECT_EQ(prefill["requests_completed"], 40);
}

TEST(cliClosedLoop, CheckDescribesTheClosedLoop) {
  TempDir tmp;
  const std::string file = tmp / "loop.yaml";
  std::ofstream(file) << loop_scenario_text(kLoop, "serving: {batching: prefill_first}\n");
  const CliResult r = run_semsim({"check", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("workload: 40 requests in a closed loop of 6 concurrent"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batching prefill_first"), std::string::npos) << r.out;
}

// One rank (Attention-TP, DP 1) so that steps.csv's rows are one rank's batches; loaded: prompts
// keep arriving while earlier requests decode.
std::string loaded_scenario(const std::string& batching) {
  return "schema: 1\nname: batching\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
         "parallelism: {ep: 8, attention: tp}\ncalibration: datasheet\n"
         "serving: {batching: " +
         batching +
         ", max_batch_tokens: 2048}\n"
         "workload: {requests: 120, seed: 5, arrival: {process: poisson, rate: 200}, "
         "input_len: {dist: uniform, min: 256, max: 3000}, output_len: {dist: uniform, min: 16, max: 96}}\n";
}

TEST(cliBatching, PrefillFirstNeverMixesAndTradesTpotForTtft) {
  TempDir tmp;
  const LoopRun mixed = run_loop_scenario(tmp, "mixed", loaded_scenario("mixed"));
  const LoopRun first = run_loop_scenario(tmp, "first", loaded_scenario("prefill_first"));
  ASSERT_EQ(mixed.cli.exit_code, 0);
  ASSERT_EQ(first.cli.exit_code, 0);
  const std::vector<double> prefill = column_of(first.steps_csv, "prefill_tokens");
  const std::vector<double> decode = column_of(first.steps_csv, "decode_tokens");
  int prefill_steps = 0, decode_steps = 0;
  for (std::size_t s = 0; s < prefill.size(); ++s) {
    EXPECT_TRUE(prefill[s] == 0 || decode[s] == 0)
        << "step " << s << " mixes " << prefill[s] << " prompt and " << decode[s] << " decode tokens";
    prefill_steps += prefill[s] > 0;
    decode_steps += decode[s] > 0;
  }
  EXPECT_GT(prefill_steps, 0);
  EXPECT_GT(decode_steps, 0);
  // The mixed run does mix (else the comparison says nothing).
  const std::vector<double> mixed_prefill = column_of(mixed.steps_csv, "prefill_tokens");
  const std::vector<double> mixed_decode = column_of(mixed.steps_csv, "decode_tokens");
  bool mixes = false;
  for (std::size_t s = 0; s < mixed_prefill.size(); ++s)
    mixes = mixes || (mixed_prefill[s] > 0 && mixed_decode[s] > 0);
  EXPECT_TRUE(mixes);
  EXPECT_EQ(first.summary["requests_completed"], 120);
  EXPECT_LT(first.summary["ttft_s"]["mean"].get<double>(), mixed.summary["ttft_s"]["mean"].get<double>());
  EXPECT_GT(first.summary["tpot_s"]["mean"].get<double>(), mixed.summary["tpot_s"]["mean"].get<double>());
}

}  // namespace
}  // namespace semsim::cli_test
