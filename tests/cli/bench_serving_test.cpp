// `semsim run --result-json FILE --goodput ...`: the results in the files SGLang's and vLLM's
// bench_serving write (their keys, their units), consistent with summary.json and the console
// summary; vLLM's per-request goodput on a case checked by hand from requests.csv; bad --goodput
// and --result-json values rejected before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

// The shape of a real `python3 -m sglang.bench_serving --output-file F --output-details` line (three
// requests; the keys and their order as SGLang writes them).
const char* const kSglangResult = R"({"backend": "sglang", "dataset_name": "random", "request_rate": 20.0,
 "max_concurrency": null, "sharegpt_output_len": null, "random_input_len": 512, "random_output_len": 256,
 "random_range_ratio": 1.0, "duration": 13.41, "completed": 3, "total_input_tokens": 1536,
 "total_output_tokens": 768, "total_output_tokens_retokenized": 766, "request_throughput": 0.2237,
 "input_throughput": 114.5, "output_throughput": 57.27, "mean_e2e_latency_ms": 1012.3,
 "median_e2e_latency_ms": 1003.9, "std_e2e_latency_ms": 21.7, "p99_e2e_latency_ms": 1040.1,
 "mean_ttft_ms": 31.2, "median_ttft_ms": 30.8, "std_ttft_ms": 1.9, "p99_ttft_ms": 33.6,
 "mean_tpot_ms": 3.85, "median_tpot_ms": 3.83, "std_tpot_ms": 0.07, "p99_tpot_ms": 3.96,
 "mean_itl_ms": 3.85, "median_itl_ms": 3.71, "std_itl_ms": 1.12, "p95_itl_ms": 4.41, "p99_itl_ms": 9.87,
 "concurrency": 0.2265, "accept_length": null, "input_lens": [512, 512, 512], "output_lens": [256, 256, 256],
 "ttfts": [0.0298, 0.0308, 0.0336], "itls": [[0.0037, 0.0038], [0.0036, 0.0041], [0.0039, 0.0037]],
 "generated_texts": ["a", "b", "c"], "errors": ["", "", ""]})";

// The shape of a real `vllm bench serve --save-result --save-detailed` file (three requests, the
// default percentile metrics ttft,tpot,itl at p99).
const char* const kVllmResult =
    R"({"date": "20250611-101500", "backend": "vllm", "model_id": "deepseek-ai/DeepSeek-V2-Lite",
 "tokenizer_id": "deepseek-ai/DeepSeek-V2-Lite", "num_prompts": 3, "request_rate": 20.0, "burstiness": 1.0,
 "max_concurrency": null, "duration": 13.38, "completed": 3, "failed": 0, "total_input_tokens": 1536,
 "total_output_tokens": 768, "request_throughput": 0.2242, "request_goodput": null, "output_throughput": 57.4,
 "total_token_throughput": 172.2, "max_output_tokens_per_s": 81.0, "max_concurrent_requests": 2,
 "input_lens": [512, 512, 512], "output_lens": [256, 256, 256], "ttfts": [0.0301, 0.0311, 0.0339],
 "itls": [[0.0037, 0.0038], [0.0036, 0.0041], [0.0039, 0.0037]], "generated_texts": ["a", "b", "c"],
 "errors": ["", "", ""], "mean_ttft_ms": 31.7, "median_ttft_ms": 31.1, "std_ttft_ms": 1.6, "p99_ttft_ms": 33.8,
 "mean_tpot_ms": 3.86, "median_tpot_ms": 3.84, "std_tpot_ms": 0.06, "p99_tpot_ms": 3.97, "mean_itl_ms": 3.86,
 "median_itl_ms": 3.72, "std_itl_ms": 1.1, "p99_itl_ms": 9.9})";

// bench_serving keys semsim leaves out, each for a reason (README.md, "What a run writes").
const std::set<std::string> kLeftOut{
    // the client's dataset options: the scenario's workload section says what the requests are
    "dataset_name", "sharegpt_output_len", "random_input_len", "random_output_len", "random_range_ratio",
    // no text, no tokenizer, no speculative decoding
    "total_output_tokens_retokenized", "generated_texts", "tokenizer_id", "accept_length",
    // a time stamp would make two identical runs' files differ
    "date",
    // one value per output token: as large as the run's output (the ITL statistics are there)
    "itls",
    // vLLM's busiest one-second window: not computed
    "max_output_tokens_per_s", "max_concurrent_requests"};

// A value of the same kind: a number (or null, where no value applies), a string, an array.
bool same_kind(const Json& theirs, const Json& ours) {
  if (theirs.is_number() || theirs.is_null()) return ours.is_number() || ours.is_null();
  if (theirs.is_array()) return ours.is_array();
  return theirs.type() == ours.type();
}

struct SemsimRun {
  CliResult cli;
  Json summary, result;
  std::string result_text, requests_csv;
};

SemsimRun run_default(const TempDir& tmp, const std::string& name, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"run",      "default",       "--out",
                                tmp / name, "--result-json", tmp / (name + ".json")};
  args.insert(args.end(), extra.begin(), extra.end());
  SemsimRun run;
  run.cli = run_semsim(args);
  EXPECT_EQ(run.cli.exit_code, 0) << describe(args, run.cli);
  EXPECT_EQ(run.cli.err, "") << describe(args, run.cli);
  if (run.cli.exit_code != 0) return run;
  run.summary = Json::parse(read_file(fs::path(tmp / name) / "summary.json"));
  run.result_text = read_file(tmp / (name + ".json"));
  run.result = Json::parse(run.result_text);
  run.requests_csv = read_file(fs::path(tmp / name) / "requests.csv");
  return run;
}

// A console line as the summary prints it: the label padded to 40 columns, then the value.
std::string padded(const std::string& label, const std::string& value) {
  return label + std::string(40 - label.size(), ' ') + value + "\n";
}

// The same with a number, printed with 2 decimals.
std::string console_line(const std::string& label, double value) {
  char number[64];
  std::snprintf(number, sizeof number, "%.2f", value);
  return padded(label, number);
}

void expect_ms(const Json& ms, const Json& seconds, const std::string& what) {
  ASSERT_TRUE(ms.is_number()) << what << ": " << ms;
  EXPECT_NEAR(ms.get<double>(), seconds.get<double>() * 1e3, 1e-9 * std::abs(ms.get<double>())) << what;
}

TEST(cliBenchServing, ResultJsonHasBenchServingsKeysAndSummaryJsonsValues) {
  TempDir tmp;
  const SemsimRun a = run_default(tmp, "a", {"--set", "workload.requests=200"});
  const SemsimRun b = run_default(tmp, "b", {"--set", "workload.requests=200"});
  if (testing::Test::HasFailure()) return;
  EXPECT_TRUE(a.result_text == b.result_text) << "the result JSON differs between two identical runs";
  EXPECT_EQ(std::count(a.result_text.begin(), a.result_text.end(), '\n'), 1)
      << "one JSON line, as SGLang appends";
  EXPECT_NE(a.cli.out.find("bench_serving result in " + tmp / "a.json"), std::string::npos) << a.cli.out;

  // Every key either bench_serving writes is there, with a value of the same kind, or is left out
  // for a stated reason.
  for (const char* fixture : {kSglangResult, kVllmResult}) {
    const Json theirs = Json::parse(fixture);
    for (const auto& [key, value] : theirs.items()) {
      if (kLeftOut.contains(key)) {
        EXPECT_FALSE(a.result.contains(key)) << key;
        continue;
      }
      ASSERT_TRUE(a.result.contains(key)) << "bench_serving key '" << key << "' missing";
      EXPECT_TRUE(same_kind(value, a.result[key])) << key << ": " << value << " vs " << a.result[key];
    }
  }

  // The values are summary.json's, in bench_serving's units (ms).
  const Json& r = a.result;
  const Json& s = a.summary;
  EXPECT_EQ(r["backend"], "semsim");
  EXPECT_EQ(r["model_id"], s["model"]);
  EXPECT_EQ(r["num_prompts"], 200);
  EXPECT_EQ(r["request_rate"], 20.0);
  EXPECT_EQ(s["request_rate"], 20.0);
  EXPECT_EQ(r["burstiness"], 1.0);  // Poisson arrivals
  EXPECT_TRUE(r["max_concurrency"].is_null());
  EXPECT_TRUE(s["max_concurrency"].is_null());
  EXPECT_TRUE(r["request_goodput"].is_null()) << "no --goodput, no goodput";
  EXPECT_TRUE(s["request_goodput"]["req_s"].is_null());
  EXPECT_EQ(r["duration"], s["simulated_seconds"]);
  EXPECT_EQ(r["completed"], s["requests_completed"]);
  EXPECT_EQ(r["completed"], 200);
  EXPECT_EQ(r["failed"], 0);
  EXPECT_EQ(r["total_input_tokens"], s["completed_tokens"]["input"]);
  EXPECT_EQ(r["total_input_tokens"], 200 * 512);
  EXPECT_EQ(r["total_output_tokens"], 200 * 256);
  const double duration = r["duration"];
  EXPECT_EQ(r["request_throughput"], s["request_throughput"]);
  EXPECT_DOUBLE_EQ(r["request_throughput"].get<double>(), 200 / duration);
  // Every request completed, so bench_serving's token throughputs equal summary.json's.
  EXPECT_DOUBLE_EQ(r["input_throughput"].get<double>(), s["throughput_tok_s"]["input"].get<double>());
  EXPECT_DOUBLE_EQ(r["output_throughput"].get<double>(), s["throughput_tok_s"]["output"].get<double>());
  EXPECT_DOUBLE_EQ(r["total_throughput"].get<double>(), s["throughput_tok_s"]["total"].get<double>());
  EXPECT_EQ(r["total_token_throughput"], r["total_throughput"]);
  EXPECT_NEAR(r["concurrency"].get<double>(), s["e2e_s"]["mean"].get<double>() * 200 / duration,
              1e-9 * r["concurrency"].get<double>());
  for (const auto& [metric, dist] : {std::pair{"ttft", "ttft_s"},
                                     {"tpot", "tpot_s"},
                                     {"itl", "itl_s"},
                                     {"e2e_latency", "e2e_s"},
                                     {"e2el", "e2e_s"}}) {
    const std::string m(metric);
    for (const auto& [stat, key] : {std::pair{"mean", "mean"},
                                    {"median", "p50"},
                                    {"std", "std"},
                                    {"p90", "p90"},
                                    {"p95", "p95"},
                                    {"p99", "p99"}})
      expect_ms(r[std::string(stat) + "_" + m + "_ms"], s[dist][key], std::string(stat) + "_" + m + "_ms");
  }
  expect_ms(r["max_itl_ms"], s["itl_s"]["max"], "max_itl_ms");

  // Per-request details, in requests.csv's order.
  const std::vector<double> ttft = column_of(a.requests_csv, "ttft_s");
  ASSERT_EQ(r["ttfts"].size(), 200u);
  ASSERT_EQ(r["input_lens"].size(), 200u);
  ASSERT_EQ(r["output_lens"].size(), 200u);
  ASSERT_EQ(r["errors"].size(), 200u);
  double sum = 0, squares = 0;
  for (std::size_t i = 0; i < ttft.size(); ++i) {
    EXPECT_NEAR(r["ttfts"][i].get<double>(), ttft[i], 1e-8 * ttft[i]) << i;
    EXPECT_EQ(r["input_lens"][i], 512);
    EXPECT_EQ(r["output_lens"][i], 256);
    EXPECT_EQ(r["errors"][i], "");
    sum += r["ttfts"][i].get<double>();
  }
  const double mean = sum / 200;
  for (const Json& t : r["ttfts"]) squares += (t.get<double>() - mean) * (t.get<double>() - mean);
  EXPECT_NEAR(r["mean_ttft_ms"].get<double>(), mean * 1e3, 1e-9 * mean * 1e3);
  EXPECT_NEAR(r["std_ttft_ms"].get<double>(), std::sqrt(squares / 200) * 1e3,
              1e-6 * r["std_ttft_ms"].get<double>());

  // ITL: every gap between consecutive tokens; a request's gaps add up to E2E - TTFT.
  EXPECT_EQ(s["itl_s"]["count"], 200 * 255);
  const std::vector<double> e2e = column_of(a.requests_csv, "e2e_s");
  double decode_seconds = 0;
  for (std::size_t i = 0; i < e2e.size(); ++i) decode_seconds += e2e[i] - ttft[i];
  EXPECT_NEAR(r["mean_itl_ms"].get<double>(), decode_seconds / (200 * 255) * 1e3,
              1e-6 * r["mean_itl_ms"].get<double>());
  EXPECT_LE(r["median_itl_ms"].get<double>(), r["p99_itl_ms"].get<double>());
  EXPECT_LE(r["p99_itl_ms"].get<double>(), r["max_itl_ms"].get<double>());
}

// The console summary: bench_serving's lines in its order, then the simulation's own.
TEST(cliBenchServing, ConsoleSummaryFollowsBenchServingsOrder) {
  TempDir tmp;
  const SemsimRun run =
      run_default(tmp, "out", {"--set", "workload.requests=50", "--goodput", "e2el:100000"});
  if (testing::Test::HasFailure()) return;
  const std::string& out = run.cli.out;
  std::size_t at = 0;
  for (const std::string& label :
       std::vector<std::string>{padded("Backend:", "semsim"),
                                padded("Traffic request rate:", "20"),
                                padded("Max request concurrency:", "not set"),
                                padded("Successful requests:", "50 of 50"),
                                std::string("Benchmark duration (s):"),
                                padded("Total input tokens:", "25600"),
                                padded("Total generated tokens:", "12800"),
                                std::string("Request throughput (req/s):"),
                                "Request goodput (req/s):",
                                "50 of 50 completed requests meet e2el <= 100000 ms",
                                "Input token throughput (tok/s):",
                                "Output token throughput (tok/s):",
                                "Total token throughput (tok/s):",
                                "Concurrency:",
                                "Time to First Token",
                                "Mean TTFT (ms):",
                                "Median TTFT (ms):",
                                "Std TTFT (ms):",
                                "P90 TTFT (ms):",
                                "P95 TTFT (ms):",
                                "P99 TTFT (ms):",
                                "Time per Output Token (excl. 1st token)",
                                "Mean TPOT (ms):",
                                "P99 TPOT (ms):",
                                "Inter-token Latency",
                                "Mean ITL (ms):",
                                "Median ITL (ms):",
                                "P95 ITL (ms):",
                                "P99 ITL (ms):",
                                "Max ITL (ms):",
                                "End-to-End Latency",
                                "Mean E2E Latency (ms):",
                                "Median E2E Latency (ms):",
                                "P99 E2E Latency (ms):",
                                "Scenario:",
                                "Policies:",
                                "Expert slots:",
                                "Network fidelity / calibration:",
                                "Dispatch and combine timed by:",
                                "Local activation rate:",
                                "Step time attn/disp/expert/comb/other:",
                                "Wall time (s):"}) {
    const std::size_t found = out.find(label, at);
    ASSERT_NE(found, std::string::npos) << "'" << label << "' missing or out of order in:\n" << out;
    at = found;
  }
  EXPECT_NE(out.find(console_line("Mean TTFT (ms):", run.result["mean_ttft_ms"])), std::string::npos) << out;
  EXPECT_NE(out.find(console_line("P99 ITL (ms):", run.result["p99_itl_ms"])), std::string::npos) << out;
}

// vLLM's goodput: completed requests meeting every SLO given, per second of the run. The SLOs
// are put between two requests' values read from requests.csv, so the good ones can be counted by
// hand; a TTFT SLO alone, then TTFT and E2E together, then every request and none.
TEST(cliBenchServing, GoodputCountsTheCompletedRequestsMeetingEverySlo) {
  TempDir tmp;
  const SemsimRun plain = run_default(tmp, "plain", {"--set", "workload.requests=60"});
  if (testing::Test::HasFailure()) return;
  const std::vector<double> ttft = column_of(plain.requests_csv, "ttft_s");
  const std::vector<double> e2e = column_of(plain.requests_csv, "e2e_s");
  const double duration = plain.summary["simulated_seconds"];
  // A threshold (ms) halfway between the k-th and k+1-th smallest of `values` with a clear gap.
  auto between = [](std::vector<double> values, std::size_t k) {
    std::sort(values.begin(), values.end());
    while (values[k] - values[k - 1] < 1e-6 * values[k]) ++k;
    char text[64];
    std::snprintf(text, sizeof text, "%.9g", (values[k - 1] + values[k]) / 2 * 1e3);
    return std::string(text);
  };
  const std::string ttft_slo = between(ttft, 30), e2e_slo = between(e2e, 20);
  auto count_good = [&](bool with_e2e) {
    int good = 0;
    for (std::size_t i = 0; i < ttft.size(); ++i)
      good += ttft[i] * 1e3 < std::stod(ttft_slo) && (!with_e2e || e2e[i] * 1e3 < std::stod(e2e_slo));
    return good;
  };
  struct Case {
    std::vector<std::string> slos;
    int good;
  };
  for (const Case& c : {Case{{"ttft:" + ttft_slo}, count_good(false)},
                        Case{{"ttft:" + ttft_slo, "e2el:" + e2e_slo}, count_good(true)},
                        Case{{"ttft:1e9", "tpot:1e9", "e2el:1e9"}, 60}, Case{{"tpot:0"}, 0}}) {
    std::vector<std::string> args{"--set", "workload.requests=60", "--goodput"};
    args.insert(args.end(), c.slos.begin(), c.slos.end());
    const SemsimRun run = run_default(tmp, "goodput", args);
    if (testing::Test::HasFailure()) return;
    SCOPED_TRACE(c.slos.front());
    EXPECT_EQ(run.summary["simulated_seconds"], duration) << "goodput must not change the run";
    const Json& g = run.summary["request_goodput"];
    EXPECT_EQ(g["good_requests"], c.good);
    EXPECT_DOUBLE_EQ(g["req_s"].get<double>(), c.good / duration);
    EXPECT_EQ(run.result["request_goodput"], g["req_s"]);
    EXPECT_EQ(g["slo_ms"]["ttft"].is_null(), c.slos.front().rfind("ttft:", 0) != 0);
    EXPECT_NE(run.cli.out.find(console_line("Request goodput (req/s):", c.good / duration)),
              std::string::npos)
        << run.cli.out;
    EXPECT_NE(run.cli.out.find(std::to_string(c.good) + " of 60 completed requests meet"), std::string::npos)
        << run.cli.out;
  }
  EXPECT_GT(count_good(false), count_good(true));
  EXPECT_GT(count_good(true), 0);
}

// A run stopped by its time limit: statistics over an empty set are null, not 0.
TEST(cliBenchServing, EmptyStatisticsAreNull) {
  TempDir tmp;
  const SemsimRun run = run_default(
      tmp, "out",
      {"--set", "serving.time_limit=0.05", "--set", "workload.arrival.rate=2000", "--goodput", "ttft:1000"});
  if (testing::Test::HasFailure()) return;
  const Json& r = run.result;
  EXPECT_EQ(r["completed"], 0);
  EXPECT_EQ(r["failed"], 2000);
  EXPECT_EQ(r["request_goodput"], 0.0);
  for (const char* key : {"mean_e2e_latency_ms", "p99_tpot_ms", "median_itl_ms", "max_itl_ms", "concurrency"})
    EXPECT_TRUE(r[key].is_null()) << key << ": " << r[key];
  EXPECT_TRUE(r["mean_ttft_ms"].is_number());
  EXPECT_TRUE(run.summary["itl_s"]["mean"].is_null());
  EXPECT_EQ(r["output_lens"][0], 0);
  EXPECT_NE(r["errors"][0], "");
  EXPECT_TRUE(r["ttfts"].back().is_null()) << "the last request never arrived";
}

// A prefill-only pool ends each request at the token its prompt yields: one generated token each, no
// TPOT or ITL (n/a, null), and the console, summary.json and the result JSON count the same tokens.
TEST(cliBenchServing, PrefillPoolGeneratesOneTokenPerRequestAndHasNoTpot) {
  TempDir tmp;
  const SemsimRun run =
      run_default(tmp, "out", {"--set", "workload.requests=200", "--set", "serving.pool=prefill"});
  if (testing::Test::HasFailure()) return;
  const Json& r = run.result;
  const Json& s = run.summary;
  EXPECT_EQ(r["completed"], 200);
  EXPECT_EQ(r["total_output_tokens"], 200);
  EXPECT_EQ(s["completed_tokens"]["output"], 200);
  EXPECT_DOUBLE_EQ(r["output_throughput"].get<double>(), s["throughput_tok_s"]["output"].get<double>());
  EXPECT_DOUBLE_EQ(r["output_throughput"].get<double>(), 200 / r["duration"].get<double>());
  for (const char* key : {"mean_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "max_itl_ms"})
    EXPECT_TRUE(r[key].is_null()) << key << ": " << r[key];
  EXPECT_TRUE(s["tpot_s"]["mean"].is_null());
  EXPECT_EQ(s["tpot_s"]["count"], 0);
  EXPECT_EQ(r["output_lens"][0], 1);
  EXPECT_EQ(column_of(run.requests_csv, "output_tokens").at(0), 1.0);
  EXPECT_NE(run.cli.out.find(padded("Total generated tokens:", "200")), std::string::npos) << run.cli.out;
  EXPECT_NE(run.cli.out.find(console_line("Output token throughput (tok/s):",
                                          s["throughput_tok_s"]["output"].get<double>())),
            std::string::npos)
      << run.cli.out;
  EXPECT_NE(run.cli.out.find(padded("Mean TPOT (ms):", "n/a")), std::string::npos) << run.cli.out;
}
// Each bad --goodput or --result-json: exit 2, one error line naming the option, nothing written.
TEST(cliBenchServing, BadGoodputOrResultJsonExits2AndWritesNothing) {
  TempDir tmp;
  struct Bad {
    std::vector<std::string> args;
    std::string expects;
  };
  for (const Bad& bad : {Bad{{"--goodput", "ttft:abc"}, "--goodput 'ttft:abc': 'abc' is not a number"},
                         Bad{{"--goodput", "ttfb:100"}, "unknown metric 'ttfb' (did you mean 'ttft'?)"},
                         Bad{{"--goodput", "ttft"}, "--goodput 'ttft': not one METRIC:MS pair"},
                         Bad{{"--goodput", "ttft:1:2"}, "not one METRIC:MS pair"},
                         Bad{{"--goodput", "ttft:"}, "'' is not a number"},
                         Bad{{"--goodput", "e2el:-5"}, "--goodput 'e2el:-5': an SLO is not negative"},
                         Bad{{"--goodput", "tpot:nan"}, "'nan' is not a number"},
                         Bad{{"--goodput", "ttft:10", "ttft:20"}, "ttft is given twice"},
                         Bad{{"--result-json", tmp / "no-such-folder/r.json"}, "--result-json"},
                         Bad{{"--result-json", tmp.path().string()}, "is a folder"}}) {
    std::vector<std::string> args{"run", "default", "--set", "workload.requests=5", "--out", tmp / "out"};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    if (bad.args.front() == "--goodput") args.insert(args.end(), {"--result-json", tmp / "r.json"});
    const CliResult r = run_semsim(args);
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    const auto lines = split_lines(r.err);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_TRUE(lines[0].starts_with("error: --")) << lines[0];
    EXPECT_NE(lines[0].find(bad.expects), std::string::npos) << lines[0];
    EXPECT_FALSE(fs::exists(tmp / "out"));
    EXPECT_FALSE(fs::exists(tmp / "r.json"));
  }
}

}  // namespace
}  // namespace semsim::cli_test
