// Property test over random valid scenarios (seeded): the console summary, summary.json and the
// bench_serving result agree on every number they share, and every step's compute phases are at
// least the launch floor of the kernels they stand for. Each scenario is tiny (a few short requests
// on DeepSeek-V2-Lite) and runs in-process as `semsim run` does: staged, simulated in a child
// process, committed, its console summary made from summary.json.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/input_error.hpp"
#include "sim/outputs/console_summary.hpp"
#include "sim/outputs/staged_run.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/scenario.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kScenarios = 200;

// A random valid scenario's overrides of the default: every choice below is one the default
// accepts with the others (a batch of at most 64 requests fits DeepEP's low-latency buffers).
std::vector<std::string> random_overrides(std::mt19937_64& rng) {
  auto pick = [&](std::vector<std::string> options) { return options[rng() % options.size()]; };
  auto between = [&](int low, int high) {
    return std::to_string(low + static_cast<int>(rng() % (high - low + 1)));
  };
  std::vector<std::string> o{
      "workload.requests=" + between(1, 6),
      "workload.seed=" + between(1, 1000),
      "workload.routing.vocabulary=16",
      "workload.routing.variants=1",
      "workload.input_len.value=" + between(1, 96),
      "workload.output_len.value=" + between(1, 5),
      "workload.arrival.rate=" + pick({"1", "50", "5000"}),
      "serving.max_running_requests=64",
      "serving.max_batch_tokens=" + pick({"32", "256", "8192"}),
      "parallelism.ep=" + pick({"1", "2", "4", "8"}),
      "parallelism.attention=" + pick({"dp", "tp"}),
      "policies.dispatch=" + pick({"dedup", "per_expert", "allgather", "auto", "normal"}),
      "serving.overlap=" + pick({"none", "two_batch"}),
      "serving.pool=" + pick({"colocated", "colocated", "prefill", "decode"}),
      "serving.batching=" + pick({"mixed", "prefill_first"}),
      "engine.name=" + pick({"none", "sglang"}),
      "calibration=" + pick({"measured", "datasheet"}),
      "network.fidelity=" + pick({"bottleneck", "flow"})};
  if (rng() % 4 == 0) o.push_back("serving.time_limit=0.002");  // a run stopped with requests unfinished
  if (rng() % 3 == 0)  // speculative decoding: 64 requests x 3 tokens fit DeepEP's buffers
    o.push_back("serving.speculative={method: mtp, tokens: " + between(1, 2) +
                ", acceptance: {dist: fixed, rate: " + pick({"0", "0.7", "1"}) + "}}");
  if (rng() % 3 == 0) {  // prefix caching: short shared prefixes in small blocks, so that some hit
    o.push_back("workload.prefix={groups: 2, length: 48, share: " + pick({"0", "0.5", "1"}) +
                ", block_tokens: 16}");
    o.push_back("serving.prefix_cache=true");
  }
  return o;
}

struct Outputs {
  Json summary, result;
  std::string console, steps_csv;
};

// `semsim run` of `scenario` into DIR/out with --result-json DIR/result.json, in-process.
Outputs run_in_process(const Scenario& scenario, const TempDir& dir) {
  StagedRun staged(scenario, dir / "out", {}, BenchServingOptions{{}, dir / "result.json"});
  Json summary = Json::parse(run_isolated([&] { return staged.simulate_and_write(); }));
  staged.commit(summary);
  return {summary, Json::parse(read_file(dir / "result.json")), summary_text(summary),
          read_file(fs::path(dir / "out") / "steps.csv")};
}

// The console's value on the line labelled `label` (bench_serving's layout: 40 columns of label).
std::string console_value(const std::string& console, const std::string& label) {
  for (const std::string& line : split_lines(console))
    if (line.starts_with(label) && line.size() >= 40 &&
        line.substr(label.size(), 40 - label.size()).find_first_not_of(' ') == std::string::npos)
      return line.substr(40);
  return "<no line '" + label + "'>";
}

// A number as the console prints it, or n/a for null.
std::string printed(const Json& value, double scale = 1) {
  return value.is_null() ? "n/a" : fmt::format("{:.2f}", value.get<double>() * scale);
}

void expect_same(const Json& a, const Json& b, const std::string& what) {
  if (a.is_null() || b.is_null()) {
    EXPECT_EQ(a.is_null(), b.is_null()) << what << ": " << a << " vs " << b;
    return;
  }
  const double x = a.get<double>(), y = b.get<double>();
  EXPECT_NEAR(x, y, 1e-12 * std::max(std::abs(x), std::abs(y))) << what;
}

void expect_outputs_agree(const Outputs& o) {
  const Json& s = o.summary;
  const Json& r = o.result;
  const std::string& c = o.console;
  // Requests and tokens: the same counts in all three.
  EXPECT_EQ(r["num_prompts"], s["requests"]);
  EXPECT_EQ(r["completed"], s["requests_completed"]);
  EXPECT_EQ(console_value(c, "Successful requests:"),
            fmt::format("{} of {}", s["requests_completed"].get<int>(), s["requests"].get<int>()));
  EXPECT_EQ(r["total_input_tokens"], s["completed_tokens"]["input"]);
  EXPECT_EQ(r["total_output_tokens"], s["completed_tokens"]["output"]);
  EXPECT_EQ(console_value(c, "Total input tokens:"), r["total_input_tokens"].dump());
  EXPECT_EQ(console_value(c, "Total generated tokens:"), r["total_output_tokens"].dump());
  expect_same(r["duration"], s["simulated_seconds"], "duration");
  EXPECT_EQ(console_value(c, "Benchmark duration (s):"), printed(s["simulated_seconds"]));
  // Rates: bench_serving's over completed requests; summary.json's tokens processed equal them when
  // every request completed.
  expect_same(r["request_throughput"], s["request_throughput"], "request throughput");
  EXPECT_EQ(console_value(c, "Request throughput (req/s):"), printed(s["request_throughput"]));
  for (const auto& [key, label] : {std::pair{"input_throughput", "Input token throughput (tok/s):"},
                                   {"output_throughput", "Output token throughput (tok/s):"},
                                   {"total_throughput", "Total token throughput (tok/s):"}})
    EXPECT_EQ(console_value(c, label), printed(r[key])) << key;
  if (s["requests_completed"] == s["requests"]) {
    expect_same(r["output_throughput"], s["throughput_tok_s"]["output"], "output_throughput");
    if (s["pool"] != "decode") {
      expect_same(r["input_throughput"], s["throughput_tok_s"]["input"], "input_throughput");
      expect_same(r["total_throughput"], s["throughput_tok_s"]["total"], "total_throughput");
    }
  }
  EXPECT_EQ(console_value(c, "Concurrency:"), printed(r["concurrency"]));
  // Latencies: the statistics in ms (result, console) and in seconds (summary.json).
  for (const auto& [metric, dist, name] : {std::tuple{"ttft", "ttft_s", "TTFT"},
                                           {"tpot", "tpot_s", "TPOT"},
                                           {"itl", "itl_s", "ITL"},
                                           {"e2e_latency", "e2e_s", "E2E Latency"}})
    for (const auto& [stat, key, label] : {std::tuple{"mean", "mean", "Mean"},
                                           {"median", "p50", "Median"},
                                           {"std", "std", "Std"},
                                           {"p90", "p90", "P90"},
                                           {"p95", "p95", "P95"},
                                           {"p99", "p99", "P99"}}) {
      const std::string result_key = fmt::format("{}_{}_ms", stat, metric);
      const Json seconds = s[dist][key];
      expect_same(r[result_key], seconds.is_null() ? Json() : Json(seconds.get<double>() * 1e3), result_key);
      EXPECT_EQ(console_value(c, fmt::format("{} {} (ms):", label, name)), printed(seconds, 1e3))
          << result_key;
    }
  // Speculative decoding's realised acceptance: bench_serving's accept length is summary.json's tokens
  // per verification, and the console prints its counts.
  if (s.contains("speculative")) {
    const Json& spec = s["speculative"];
    expect_same(r["accept_length"], spec["tokens_per_verification"], "accept_length");
    const std::string line = console_value(c, "Speculative decoding (mtp):");
    EXPECT_NE(line.find(fmt::format("{} verifications", spec["verifications"].get<long long>())),
              std::string::npos)
        << line;
  } else {
    EXPECT_FALSE(r.contains("accept_length"));
  }
  // The prefix cache's counts: what it found is part of what the requests brought, and the console
  // prints both.
  if (s.contains("prefix_cache") && !s["prefix_cache"]["hit_rate"].is_null()) {
    const Json& cache = s["prefix_cache"];
    EXPECT_LE(cache["cached_tokens"].get<long long>(), cache["prompt_tokens"].get<long long>());
    EXPECT_LE(cache["hit_requests"].get<long long>(), cache["requests"].get<long long>());
    const std::string line = console_value(c, "Prefix cache hit rate:");
    EXPECT_NE(line.find(fmt::format("of {} prompt tokens", cache["prompt_tokens"].get<long long>())),
              std::string::npos)
        << line;
  }
  // A metric with no values is null (n/a), never 0: TPOT needs a request of two tokens or more.
  if (s["tpot_s"]["count"] == 0) {
    EXPECT_TRUE(r["mean_tpot_ms"].is_null());
  }
}

// Every step with tokens runs at least one attention and one expert kernel per MoE layer, and the
// LM head: each phase at least that many launch floors (the profile's kernel overhead). Phases are
// shares of the step's critical path: under two-batch overlap a micro-batch's kernels may run off it
// (under the other's communication), so the bound holds for steps without overlap.
void expect_phases_above_launch_floors(const Scenario& scenario, const Outputs& o) {
  if (scenario.serving.overlap != Overlap::kNone) return;
  const double floor = scenario.calibration->kernel_overhead;
  const double layers = scenario.model.moe_layers();
  const std::vector<double> prefill = column_of(o.steps_csv, "prefill_tokens");
  const std::vector<double> decode = column_of(o.steps_csv, "decode_tokens");
  struct Bound {
    const char* column;
    double kernels;
  };
  for (const Bound& bound : {Bound{"attention_s", layers}, Bound{"experts_s", layers}, Bound{"other_s", 1}}) {
    const std::vector<double> seconds = column_of(o.steps_csv, bound.column);
    for (std::size_t i = 0; i < seconds.size(); ++i)
      if (prefill[i] + decode[i] > 0) {
        EXPECT_GE(seconds[i] * (1 + 1e-9), bound.kernels * floor) << bound.column << " of step " << i;
      }
  }
}

// A draw the scenario checks refuse (a combination of valid values that is no valid scenario, e.g.
// DeepEP's normal kernel under Attention-TP) is drawn again: the property is over valid scenarios,
// and most draws are (at most one refused draw per valid one, checked).
TEST(cliOutputAgreement, RandomScenariosAgreeAcrossOutputsAndPhasesExceedLaunchFloors) {
  std::mt19937_64 rng(35);
  int valid = 0, refused = 0;
  while (valid < kScenarios) {
    const std::vector<std::string> overrides = random_overrides(rng);
    std::string described;
    for (const std::string& o : overrides) described += " --set " + o;
    SCOPED_TRACE(fmt::format("scenario {}: semsim run default{}", valid, described));
    TempDir dir;
    std::optional<Scenario> scenario;
    std::optional<Outputs> outputs;
    try {
      scenario = load_scenario(default_scenario_text(), "<default>", "", overrides);
      outputs = run_in_process(*scenario, dir);
    } catch (const InputError&) {
      ++refused;
      continue;
    }
    ++valid;
    expect_outputs_agree(*outputs);
    expect_phases_above_launch_floors(*scenario, *outputs);
    if (testing::Test::HasFailure()) return;  // one scenario's failures, not two hundred
  }
  EXPECT_LE(refused, valid);
}

}  // namespace
}  // namespace semsim::cli_test
