// `semsim compare`: the verdict rules and the deltas on made-up summaries, then end to end — two run
// folders (one built to be all-to-all bound, one KV bound) and two sweep folders — and the folders
// it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/input_error.hpp"
#include "models/operator_costs.hpp"
#include "sim/outputs/comparison.hpp"
#include "sim/run_plan.hpp"
#include "sim/scenario.hpp"

namespace semsim::cli_test {
namespace {

using OrderedJson = nlohmann::ordered_json;

// A summary whose steps split as given, with the batch limits' step shares (KV, token budget,
// request cap) unless `with_limits` is false (a summary of an earlier semsim).
FlatSummary made_up_summary(double attention, double dispatch, double experts, double combine, double other,
                            double imbalance, double kv, double budget, double cap, bool with_limits = true) {
  FlatSummary s{{"scenario", "made-up"},
                {"simulated_seconds", 10.0},
                {"steps", 1000},
                {"mean_step_seconds", 0.005},
                {"imbalance", imbalance},
                {"phase_share.attention", attention},
                {"phase_share.dispatch", dispatch},
                {"phase_share.experts", experts},
                {"phase_share.combine", combine},
                {"phase_share.other", other}};
  if (with_limits)
    s.insert(s.end(), {{"batch_limits.kv_wait_step_share", kv},
                       {"batch_limits.token_budget_step_share", budget},
                       {"batch_limits.request_cap_step_share", cap},
                       {"batch_limits.kv_use_peak", 0.99},
                       {"batch_limits.kv_use_mean", 0.8}});
  return s;
}

TEST(CompareVerdict, TheLargestStepPartBoundsARunNoBatchLimitHeldBack) {
  const BoundVerdict a2a = bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, 0, 0.03, 0));
  EXPECT_EQ(a2a.bound, "all-to-all");
  EXPECT_EQ(a2a.text,
            "bound by all-to-all: dispatch+combine 46.0% of step time (experts 25.0%, attention 22.0%, other "
            "7.0%); no batch limit held work back in 25.0% of steps or more (KV wait 0.0%, token budget "
            "3.0%, request "
            "cap 0.0%); engine stepping 50.0% of the run");
  EXPECT_EQ(bound_verdict(made_up_summary(0.5, 0.1, 0.2, 0.1, 0.1, 1.1, 0, 0, 0)).bound, "attention");
  // The devices' expert times tell imbalance from compute: a skewed routed load need not cost time.
  auto expert_times = [](FlatSummary s, double slowest_over_mean) {
    s.insert(s.end(),
             {{"experts_device_seconds.slowest", slowest_over_mean}, {"experts_device_seconds.mean", 1.0}});
    return s;
  };
  const FlatSummary experts = made_up_summary(0.1, 0.1, 0.6, 0.1, 0.1, 1.8, 0, 0, 0);
  EXPECT_EQ(bound_verdict(expert_times(experts, kExpertImbalance - 0.01)).bound, "expert compute");
  const BoundVerdict slow = bound_verdict(expert_times(experts, kExpertImbalance));
  EXPECT_EQ(slow.bound, "expert imbalance");
  EXPECT_NE(
      slow.text.find("bound by expert imbalance: experts 60.0% of step time (all-to-all 20.0%, attention "
                     "10.0%, other 10.0%), the slowest device's expert time 1.50x the devices' mean "
                     "(routed load 1.80x); "),
      std::string::npos)
      << slow.text;
  // Without them (a summary of an earlier semsim) the verdict does not guess which.
  const BoundVerdict untimed = bound_verdict(experts);
  EXPECT_EQ(untimed.bound, "experts");
  EXPECT_NE(
      untimed.text.find("the busiest device serving 1.80x the mean routed load (device times not recorded: "
                        "imbalance and compute not told apart)"),
      std::string::npos)
      << untimed.text;
  EXPECT_EQ(bound_verdict(made_up_summary(0.1, 0.1, 0.1, 0.1, 0.6, 1.0, 0, 0, 0)).bound,
            "dense layers and LM head");
}

TEST(CompareVerdict, ABatchLimitHoldingWorkBackInAQuarterOfTheStepsBoundsTheRun) {
  const BoundVerdict kv = bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, 0.6, 0.1, 0));
  EXPECT_EQ(kv.bound, "KV capacity");
  EXPECT_TRUE(
      kv.text.starts_with("bound by KV capacity: a request waited for KV cache in 60.0% of steps (KV "
                          "reserved: peak 99.0%, mean 80.0%; token budget full in 10.0%"))
      << kv.text;
  EXPECT_NE(kv.text.find("step time: all-to-all 46.0%, experts 25.0%"), std::string::npos) << kv.text;
  EXPECT_EQ(bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, 0.2, 0.4, 0)).bound,
            "batch cap");
  const BoundVerdict cap = bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, 0, 0, 0.3));
  EXPECT_EQ(cap.bound, "batch cap");
  EXPECT_NE(cap.text.find("max_running_requests were running with requests waiting in 30.0% of steps"),
            std::string::npos)
      << cap.text;
  // Just under the threshold, the step time decides.
  EXPECT_EQ(
      bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, kBatchLimitStepShare - 0.001, 0, 0))
          .bound,
      "all-to-all");
  const BoundVerdict old = bound_verdict(made_up_summary(0.22, 0.30, 0.25, 0.16, 0.07, 1.1, 0, 0, 0, false));
  EXPECT_EQ(old.bound, "all-to-all");
  EXPECT_NE(old.text.find("batch limits not recorded"), std::string::npos) << old.text;
  EXPECT_EQ(bound_verdict(made_up_summary(0, 0, 0, 0, 0, 1, 0, 0, 0)).bound, "none");
}

TEST(CompareMetrics, DeltasFromTheBaselineAndWhatOneFolderLacks) {
  const FlatSummary a{{"scenario", "a"}, {"lar", 0.25},    {"steps", 100},
                      {"zero", 0.0},     {"p99", nullptr}, {"same", "x"}};
  const FlatSummary b{{"scenario", "b"}, {"lar", 0.5},  {"steps", 80}, {"zero", 2.0},
                      {"p99", 1.5},      {"same", "x"}, {"new_key", 3}};
  const std::vector<MetricRow> rows = compare_metrics({&a, &b});
  std::vector<std::string> keys;
  for (const MetricRow& row : rows) keys.push_back(row.key);
  // "same" is equal everywhere and not a number: left out; null against a number is shown.
  EXPECT_EQ(keys, (std::vector<std::string>{"scenario", "lar", "steps", "zero", "p99", "new_key"}));
  EXPECT_DOUBLE_EQ(*rows[1].delta[1], 0.25);
  EXPECT_DOUBLE_EQ(*rows[1].delta_percent[1], 100.0);
  EXPECT_DOUBLE_EQ(*rows[2].delta[1], -20.0);
  EXPECT_DOUBLE_EQ(*rows[2].delta_percent[1], -20.0);
  EXPECT_DOUBLE_EQ(*rows[3].delta[1], 2.0);
  EXPECT_FALSE(rows[3].delta_percent[1]);  // of a zero baseline
  EXPECT_FALSE(rows[4].numeric());
  EXPECT_FALSE(rows[5].values[0]);  // absent from the baseline
  EXPECT_FALSE(rows[5].delta[1]);
  const std::string text = comparison_text(compare_runs({"dirA", "dirB"}, {a, b}));
  EXPECT_NE(text.find("semsim compare: A = dirA (baseline), B = dirB\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nmetric        A    B    Δ B      Δ% B\n"
                      "lar        0.25  0.5  +0.25  +100.00%\n"
                      "steps       100   80    -20   -20.00%\n"
                      "zero          0    2     +2       n/a\n"
                      "new_key  absent    3\n"
                      "Values that are not numbers, where they differ:\n"
                      "  scenario: A = a, B = b\n"
                      "  p99: A = null, B = 1.5\n"),
            std::string::npos)
      << text;
}

TEST(CompareSweeps, PointsMatchByTheirLabelsAndThoseInOneFolderOnlyAreListed) {
  const FlatSummary s10 = made_up_summary(0.5, 0.1, 0.2, 0.1, 0.1, 1.1, 0, 0, 0);
  const FlatSummary s20 = made_up_summary(0.2, 0.3, 0.2, 0.2, 0.1, 1.1, 0, 0, 0);
  SweepResults a{{"workload.arrival.rate"}, {{{"10"}, true, "", s10}, {{"20"}, true, "", s20}}, 0};
  SweepResults b{{"workload.arrival.rate"}, {{{"20"}, true, "", s10}, {{"40"}, false, "it broke", {}}}, 1};
  const Comparison c = compare_sweeps({"A", "B"}, {a, b});
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.entries[0].labels, std::vector<std::string>{"10"});
  EXPECT_EQ(c.entries[0].missing[1], "absent");
  EXPECT_TRUE(c.entries[0].metrics.empty());
  EXPECT_EQ(c.entries[0].verdicts[0]->bound, "attention");
  EXPECT_FALSE(c.entries[1].missing[0] || c.entries[1].missing[1]);
  EXPECT_EQ(c.entries[1].verdicts[0]->bound, "all-to-all");
  EXPECT_EQ(c.entries[1].verdicts[1]->bound, "attention");
  EXPECT_EQ(c.entries[2].missing[0], "absent");
  EXPECT_EQ(c.entries[2].missing[1], "failed: it broke");
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("B: 1 torn row(s)"), std::string::npos) << c.notes[0];
  const std::string text = comparison_text(c);
  EXPECT_NE(text.find("points matched by workload.arrival.rate: 1 in every folder, 2 in only some"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("== workload.arrival.rate=40 ==\nA: absent\nB: failed: it broke\n"), std::string::npos)
      << text;

  SweepResults other_axes{{"series", "workload.arrival.rate"}, {}, 0};
  EXPECT_THROW(compare_sweeps({"A", "C"}, {a, other_axes}), InputError);
  SweepResults twice{{"workload.arrival.rate"}, {{{"10"}, true, "", s10}, {{"10"}, true, "", s20}}, 0};
  EXPECT_THROW(compare_sweeps({"A", "D"}, {a, twice}), InputError);
}

// Sweeps hold a table per point: by default `compare` gives, per series, the points compared, each
// kept metric's Δ% (median, least, most) and the points per verdict, then the points that differ most
// (largest |Δ%| first) and those failed or absent; --metrics keeps the metrics it names.
TEST(CompareSweeps, TheCompactTextSummarisesEachSeriesAndShowsThePointsThatDifferMost) {
  auto summary = [](double throughput, double attention) {
    FlatSummary s = made_up_summary(attention, 0.1, 0.2, 0.1, 0.1, 1.1, 0, 0, 0);
    s.push_back({"throughput_tok_s.output", throughput});
    s.push_back({"ttft_s.mean", 0.5});
    return s;
  };
  const std::vector<std::string> columns{"series", "workload.arrival.rate"};
  SweepResults a{columns,
                 {{{"ep", "10"}, true, "", summary(100, 0.5)},
                  {{"ep", "20"}, true, "", summary(200, 0.5)},
                  {{"tp", "10"}, true, "", summary(100, 0.5)},
                  {{"tp", "20"}, true, "", summary(100, 0.5)}},
                 0};
  // ep at 10: +10 %; ep at 20: -50 % and now attention-bound; tp at 10: +1 %; tp at 20 failed.
  SweepResults b{columns,
                 {{{"ep", "10"}, true, "", summary(110, 0.5)},
                  {{"ep", "20"}, true, "", summary(100, 0.1)},
                  {{"tp", "10"}, true, "", summary(101, 0.5)},
                  {{"tp", "20"}, false, "it broke", {}}},
                 0};
  Comparison c = compare_sweeps({"A", "B"}, {a, b});
  EXPECT_THROW(keep_metrics(c, {"throughput_tok_s.outptu"}), InputError);
  keep_metrics(c, headline_metrics(c));
  EXPECT_EQ(headline_metrics(c), (std::vector<std::string>{"throughput_tok_s.output", "ttft_s.mean"}));
  const std::string text = comparison_text(c, /*every_point=*/false);
  EXPECT_NE(text.find("== series=ep: 2 points, 2 compared in two folders or more ==\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("== series=tp: 2 points, 1 compared in two folders or more ==\nB: 1 point(s) failed or "
                      "absent"),
            std::string::npos)
      << text;
  // ep's Δ% of the output throughput: -50 and +10 (median -20).
  EXPECT_TRUE(
      std::regex_search(text, std::regex(R"(throughput_tok_s\.output +-20\.00% +-50\.00% +\+10\.00%)")))
      << text;
  EXPECT_NE(text.find("  the bound differs from A's at 1 point(s)"), std::string::npos) << text;
  // The points that differ most, largest first: ep at 20, ep at 10, tp at 10.
  const std::size_t most = text.find("The 3 point(s) of 3 compared that differ most");
  ASSERT_NE(most, std::string::npos) << text;
  const std::size_t first = text.find("== series=ep workload.arrival.rate=20 ==", most);
  const std::size_t second = text.find("== series=ep workload.arrival.rate=10 ==", most);
  const std::size_t third = text.find("== series=tp workload.arrival.rate=10 ==", most);
  EXPECT_LT(first, second) << text;
  EXPECT_LT(second, third) << text;
  EXPECT_NE(third, std::string::npos) << text;
  EXPECT_NE(text.find("Points failed or absent in a folder (1):\n  series=tp workload.arrival.rate=20: B: "
                      "failed: it broke\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("phase_share"), std::string::npos) << "only the metrics kept" << text;
}

// ---- End to end -------------------------------------------------------------------------------------

OrderedJson read_json(const std::string& path) {
  return OrderedJson::parse(read_file(path));
}

void run_scenario(const std::string& out, const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", "default", "--out", out};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
}

// The memory fraction that leaves the default scenario on one device KV room for `tokens` tokens.
std::string one_device_memory_fraction_for(double tokens) {
  const Scenario s =
      load_scenario(default_scenario_text(), "<default>", "", std::vector<std::string>{"parallelism.ep=1"});
  const double bytes =
      build_run(s).memory.weight_bytes_per_device + tokens * kv_bytes_per_token(s.model, s.precision);
  return std::to_string(bytes / s.cluster.device.hbm_bytes);
}

TEST(cliCompare, TwoRunsSideBySideWithTheirDeltasAndWhatBoundsEach) {
  TempDir tmp;
  // All-to-all bound: long prompts on two nodes, so dispatch and combine cross the NICs.
  run_scenario(tmp / "a2a", {"workload.requests=48", "workload.input_len.value=2048",
                             "workload.output_len.value=4", "workload.arrival.rate=400", "cluster=h200-2x8",
                             "parallelism.ep=16", "policies.dispatch=dedup"});
  // KV bound: one device with KV room for two and a half requests, all arriving at once.
  run_scenario(tmp / "kv",
               {"parallelism.ep=1", "workload.requests=12", "workload.input_len.value=200",
                "workload.output_len.value=100", "workload.arrival.rate=1000", "policies.dispatch=dedup",
                "serving.memory_fraction=" + one_device_memory_fraction_for(750)});
  if (testing::Test::HasFailure()) return;

  const std::vector<std::string> args{"compare", tmp / "a2a", tmp / "kv", "--json", tmp / "compare.json"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(r.err, "");
  const OrderedJson comparison = read_json(tmp / "compare.json");
  const OrderedJson a = read_json(fs::path(tmp / "a2a") / "summary.json"),
                    b = read_json(fs::path(tmp / "kv") / "summary.json");
  std::size_t checked = 0;
  for (const OrderedJson& m : comparison["entries"][0]["metrics"]) {
    const std::string key = m["key"];
    const OrderedJson::json_pointer pointer("/" + std::regex_replace(key, std::regex("\\."), "/"));
    ASSERT_TRUE(a.contains(pointer) && b.contains(pointer)) << key;
    EXPECT_EQ(m["values"][0], a[pointer]) << key;
    EXPECT_EQ(m["values"][1], b[pointer]) << key;
    if (!a[pointer].is_number() || !b[pointer].is_number()) continue;
    const double base = a[pointer].get<double>(), value = b[pointer].get<double>();
    EXPECT_DOUBLE_EQ(m["delta"][1].get<double>(), value - base) << key;
    if (base != 0) {
      EXPECT_DOUBLE_EQ(m["delta_percent"][1].get<double>(), (value - base) / std::abs(base) * 100) << key;
    }
    ++checked;
  }
  EXPECT_GT(checked, 60u);
  const OrderedJson& folders = comparison["entries"][0]["folders"];
  EXPECT_EQ(folders[0]["verdict"]["bound"], "all-to-all") << folders[0]["verdict"]["text"];
  EXPECT_EQ(folders[1]["verdict"]["bound"], "KV capacity") << folders[1]["verdict"]["text"];
  EXPECT_GT(b["batch_limits"]["kv_wait_step_share"].get<double>(), 0.5);
  EXPECT_EQ(a["batch_limits"]["kv_wait_step_share"].get<double>(), 0.0);
  // The table says the same.
  EXPECT_NE(r.out.find("  A: bound by all-to-all: dispatch+combine "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  B: bound by KV capacity: a request waited for KV cache in "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  cluster: A = h200-2x8, B = h200-1x8\n"), std::string::npos) << r.out;
}

TEST(cliCompare, SweepsPointByPoint) {
  TempDir tmp;
  auto sweep = [&](const std::string& name, const std::string& rates) {
    const std::string file = tmp / (name + ".yaml");
    std::ofstream(file) << "sweep: 1\nbase: default\nset: {workload.requests: 20}\naxes:\n"
                           "  - workload.arrival.rate: " +
                               rates + "\n";
    const std::vector<std::string> args{"sweep", file, "-j", "1", "--out", tmp / name};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  };
  sweep("a", "[10, 20]");
  sweep("b", "[20, 40]");
  if (testing::Test::HasFailure()) return;
  const std::vector<std::string> args{"compare", tmp / "a", tmp / "b", "--json", tmp / "compare.json"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("points matched by workload.arrival.rate: 1 in every folder, 2 in only some"),
            std::string::npos)
      << r.out;
  const OrderedJson comparison = read_json(tmp / "compare.json");
  ASSERT_EQ(comparison["entries"].size(), 3u);
  std::vector<std::string> rates, states;
  for (const OrderedJson& entry : comparison["entries"]) {
    rates.push_back(entry["labels"]["workload.arrival.rate"]);
    states.push_back(std::string(entry["folders"][0]["state"]) + "/" +
                     std::string(entry["folders"][1]["state"]));
  }
  EXPECT_EQ(rates, (std::vector<std::string>{"10", "20", "40"}));
  EXPECT_EQ(states, (std::vector<std::string>{"compared/absent", "compared/compared", "absent/compared"}));
  // Rate 20 is the same scenario in both: every delta is 0.
  for (const OrderedJson& m : comparison["entries"][1]["metrics"])
    if (m.contains("delta")) {
      EXPECT_EQ(m["delta"][1].get<double>(), 0.0) << m["key"];
    }
  EXPECT_FALSE(comparison["entries"][1]["metrics"].empty());
  // The text is a summary by default; --all-points gives every point's every metric; --metrics picks.
  EXPECT_NE(r.out.find("that differ most"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("phase_share.attention"), std::string::npos) << r.out;
  const CliResult every = run_semsim({"compare", tmp / "a", tmp / "b", "--all-points"});
  ASSERT_EQ(every.exit_code, 0) << every.err;
  EXPECT_NE(every.out.find("phase_share.attention"), std::string::npos) << every.out;
  EXPECT_GT(split_lines(every.out).size(), 3 * split_lines(r.out).size());
  const CliResult picked =
      run_semsim({"compare", tmp / "a", tmp / "b", "--all-points", "--metrics", "ttft_s.p99,steps"});
  ASSERT_EQ(picked.exit_code, 0) << picked.err;
  EXPECT_NE(picked.out.find("\nttft_s.p99 "), std::string::npos) << picked.out;
  EXPECT_NE(picked.out.find("\nsteps "), std::string::npos) << picked.out;
  EXPECT_EQ(picked.out.find("ttft_s.mean"), std::string::npos) << picked.out;
  const CliResult unknown = run_semsim({"compare", tmp / "a", tmp / "b", "--metrics", "ttft_s.p999"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--metrics: no compared folder has a metric 'ttft_s.p999'"), std::string::npos)
      << unknown.err;
}

TEST(cliCompare, RefusesWhatItCannotCompareAndWritesNothing) {
  TempDir tmp;
  run_scenario(tmp / "run", {"workload.requests=20"});
  if (testing::Test::HasFailure()) return;
  fs::create_directories(tmp / "sweep");
  std::ofstream(tmp / "sweep/points.csv") << "point_id,status,scenario,error\n";
  fs::create_directories(tmp / "empty");
  fs::create_directories(tmp / "broken");
  std::ofstream(tmp / "broken/summary.json") << "{\"simulated_seconds\": 1,";
  fs::create_directories(tmp / "other");
  std::ofstream(tmp / "other/summary.json") << "{\"simulated_seconds\": 1}";
  fs::create_directories(tmp / "table");
  std::ofstream(tmp / "table/points.csv") << "a,b,c\n";
  const std::string json = tmp / "out.json";
  struct Case {
    std::vector<std::string> folders;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{tmp / "run"}, "folders: At least 2 required"},
           {{tmp / "run", tmp / "sweep"}, "is a run folder but " + (tmp / "sweep") + " a sweep folder"},
           {{tmp / "run", tmp / "empty"},
            (tmp / "empty") + ": not a semsim output folder: it holds neither summary.json"},
           {{tmp / "run", tmp / "missing"}, (tmp / "missing") + ": no such folder"},
           {{tmp / "run", tmp / "broken"}, (tmp / "broken/summary.json") + ": not valid JSON"},
           {{tmp / "run", tmp / "other"},
            (tmp / "other/summary.json") + ": not a semsim run summary: no 'steps'"},
           {{tmp / "sweep", tmp / "table"},
            (tmp / "table/points.csv") + ":1: not a semsim sweep's points.csv"},
       }) {
    std::vector<std::string> args{"compare"};
    args.insert(args.end(), c.folders.begin(), c.folders.end());
    args.insert(args.end(), {"--json", json});
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << describe(args, r);
    EXPECT_EQ(r.out, "") << describe(args, r);
    EXPECT_FALSE(fs::exists(json)) << describe(args, r);
  }
}

}  // namespace
}  // namespace semsim::cli_test
