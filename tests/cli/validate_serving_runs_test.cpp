// `semsim validate serving-runs`: measured serving runs (../shared/serving-runs format) as scenarios,
// run, compared and reported; bad files refused naming file, line and column.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/csv.hpp"
#include "sim/validation/serving_run_scenario.hpp"

namespace semsim::cli_test {
namespace {

// Small runs of the file's layouts: Qwen3-32B aggregated at TP2; disaggregated, a prefill pool of 2
// TP1 workers and a decode pool of one TP2 worker; and a row without its concurrency.
const std::string kAggregated =
    "agg_tp2,source_file=x.csv; silicon_concurrency=2,sglang,0.5.1,Qwen/Qwen3-32B,h100_sxm,,agg,128,8,,,"
    "2,2,1,,1,1,,,,,,,,,,,,,,,120.5,9.5";
const std::string kDisaggregated =
    "disagg_2p1d,image=x; silicon_concurrency=2,sglang,0.5.6,Qwen/Qwen3-32B,h100_sxm,fp8,disagg,128,8,"
    "fp8_block,fp8_block,,,,,,,1,2,1,1,1,1,1,4,1,2,1,1,1,1,80.25,11";
const std::string kNoConcurrency =
    "no_concurrency,source_file=x.csv,sglang,0.5.6,Qwen/Qwen3-32B,h100_sxm,,agg,128,8,,,2,2,1,,1,1,,,,,,,,,,"
    ",,,,,100,10";

std::string write_runs(const TempDir& tmp, const std::string& name, const std::vector<std::string>& lines) {
  std::ofstream out(tmp / name);
  for (const std::string& line : lines) out << line << "\n";
  return tmp / name;
}

bool matplotlib_installed() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0 ||
         std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

MeasuredServingRun measured_run(const std::string& model, const std::string& mode) {
  MeasuredServingRun run;
  run.line = 2;
  run.id = "row-1";
  run.backend = "sglang";
  run.backend_version = "0.5.8";
  run.model_path = model;
  run.system = "h100_sxm";
  run.mode = mode;
  run.isl = 1024;
  run.osl = 128;
  run.concurrency = 16;
  run.ttft_ms = 100;
  run.tpot_ms = 10;
  return run;
}

// The mapping, layout by layout: every value from the row, only scenario keys.
TEST(validateServingRuns, AnAggregatedDenseRowIsAClosedLoopOnOneNode) {
  MeasuredServingRun run = measured_run("Qwen/Qwen3-32B", "agg");
  run.server = {
      .batch_size = 16, .workers = {}, .tp = 2, .pp = 1, .attention_dp = {}, .moe_tp = 1, .moe_ep = 1};
  const RowScenario scenario = row_scenario(run);
  EXPECT_EQ(scenario.skipped, "");
  EXPECT_EQ(scenario.yaml,
            fmt::format("# Measured serving run row-1 (sglang 0.5.8, Qwen/Qwen3-32B agg): its scenario, from "
                        "semsim validate serving-runs.\n"
                        "schema: 1\n"
                        "name: row-1\n"
                        "model: qwen3-32b\n"
                        "cluster: h100-1x8\n"
                        "precision: {{weights: bf16}}\n"
                        "parallelism: {{attention: {{tp: 2, dp: 1}}}}\n"
                        "serving: {{batching: prefill_first, max_running_requests: 16}}\n"
                        "engine: {{name: sglang}}\n"
                        "workload:\n"
                        "  concurrency: 16\n"
                        "  requests: 64\n"
                        "  seed: {}\n"
                        "  input_len: {{dist: fixed, value: 1024}}\n"
                        "  output_len: {{dist: fixed, value: 128}}\n"
                        "calibration: measured\n"
                        "outputs: {{requests_csv: false, steps_csv: false}}\n",
                        row_seed("row-1")));
  EXPECT_NE(row_scenario(run, "/profiles/engine.yaml").yaml.find("calibration: \"/profiles/engine.yaml\"\n"),
            std::string::npos);
}

TEST(validateServingRuns, AnMoeRowSplitsAttentionAndExpertsAsTheFileSays) {
  MeasuredServingRun run = measured_run("deepseek-ai/DeepSeek-R1", "agg");
  run.precision = "fp8";
  run.server = {
      .batch_size = 100, .workers = {}, .tp = 1, .pp = 1, .attention_dp = 8, .moe_tp = 1, .moe_ep = 8};
  std::string yaml = row_scenario(run).yaml;
  EXPECT_NE(yaml.find("model: deepseek-v3\ncluster: h100-1x8\nprecision: {weights: fp8}\n"
                      "parallelism: {attention: {tp: 1, dp: 8}, moe: {tp: 1, ep: 8}}\n"
                      // the engine's cap of 100 shared by 8 attention-DP groups
                      "serving: {batching: prefill_first, max_running_requests: 13}\n"),
            std::string::npos)
      << yaml;
  // More than a node: the multi-node preset at whole nodes.
  run.server = {
      .batch_size = {}, .workers = {}, .tp = 16, .pp = 1, .attention_dp = 1, .moe_tp = 16, .moe_ep = 1};
  yaml = row_scenario(run).yaml;
  EXPECT_NE(yaml.find("cluster: {preset: h100-ib, nodes: 2}\nprecision: {weights: fp8}\n"
                      "parallelism: {attention: {tp: 16, dp: 1}, moe: {tp: 16, ep: 1}}\n"
                      "serving: {batching: prefill_first}\n"),
            std::string::npos)
      << yaml;
}

TEST(validateServingRuns, ADisaggregatedRowHasAPoolPerRoleOnWholeNodes) {
  MeasuredServingRun run = measured_run("deepseek-ai/DeepSeek-R1", "disagg");
  run.prefill = {
      .batch_size = {}, .workers = {}, .tp = 16, .pp = 1, .attention_dp = 1, .moe_tp = 16, .moe_ep = 1};
  run.decode = run.prefill;
  std::string yaml = row_scenario(run).yaml;
  EXPECT_NE(yaml.find("cluster: {preset: h100-ib, nodes: 4}\n"), std::string::npos) << yaml;
  EXPECT_TRUE(yaml.ends_with(
      "disaggregation:\n"
      "  prefill: {nodes: 2, set: {parallelism: {attention: {tp: 16, dp: 1}, moe: {tp: 16, ep: 1}}}}\n"
      "  decode: {nodes: 2, set: {parallelism: {attention: {tp: 16, dp: 1}, moe: {tp: 16, ep: 1}}}}\n"))
      << yaml;
  // A dense model's workers are the pool's attention-DP groups, each capped by the worker's batch.
  run = measured_run("Qwen/Qwen3-32B", "disagg");
  run.prefill = {
      .batch_size = 1, .workers = 8, .tp = 1, .pp = 1, .attention_dp = 1, .moe_tp = 1, .moe_ep = 1};
  run.decode = {
      .batch_size = 256, .workers = 2, .tp = 4, .pp = 1, .attention_dp = 1, .moe_tp = 1, .moe_ep = 1};
  yaml = row_scenario(run).yaml;
  EXPECT_NE(yaml.find("cluster: {preset: h100-ib, nodes: 2}\n"), std::string::npos) << yaml;
  EXPECT_TRUE(
      yaml.ends_with("disaggregation:\n"
                     "  prefill: {nodes: 1, set: {parallelism: {attention: {tp: 1, dp: 8}}, "
                     "serving.max_running_requests: 1}}\n"
                     "  decode: {nodes: 1, set: {parallelism: {attention: {tp: 4, dp: 2}}, "
                     "serving.max_running_requests: 256}}\n"))
      << yaml;
}

TEST(validateServingRuns, ARowItCannotExpressIsSkippedWithItsReason) {
  const auto reason = [](MeasuredServingRun run) { return row_scenario(run).skipped; };
  MeasuredServingRun run = measured_run("Qwen/Qwen3-32B", "agg");
  run.server.tp = 2;
  EXPECT_EQ(reason(run), "");
  MeasuredServingRun changed = run;
  changed.concurrency.reset();
  EXPECT_NE(reason(changed).find("no concurrency recorded"), std::string::npos);
  changed = run;
  changed.model_path = "org/Unknown-7B";
  EXPECT_EQ(reason(changed), "model 'org/Unknown-7B': no preset");
  changed = run;
  changed.backend = "trtllm";
  EXPECT_EQ(reason(changed), "backend 'trtllm': only SGLang's engine is modelled");
  changed = run;
  changed.server.pp = 2;
  EXPECT_EQ(reason(changed), "the server: pipeline parallelism (pp_size 2) is not modelled");
  changed = run;
  changed.mode = "static";
  EXPECT_EQ(reason(changed), "mode 'static': expected agg or disagg");
  changed = measured_run("deepseek-ai/DeepSeek-R1", "agg");
  changed.server = {
      .batch_size = {}, .workers = {}, .tp = 8, .pp = 1, .attention_dp = 1, .moe_tp = 1, .moe_ep = 4};
  EXPECT_EQ(reason(changed),
            "the server: moe_tp_size 1 x moe_ep_size 4 is not the 8 GPUs of tp_size 8 x attention_dp_size 1");
  changed = measured_run("deepseek-ai/DeepSeek-R1", "disagg");
  changed.prefill = {
      .batch_size = {}, .workers = 2, .tp = 8, .pp = 1, .attention_dp = 1, .moe_tp = 8, .moe_ep = 1};
  changed.decode = changed.prefill;
  EXPECT_EQ(reason(changed),
            "the prefill pool: 2 workers of an MoE model are 2 expert groups; a pool is one here");
}

TEST(validateServingRuns, SeedsComeFromTheRowId) {
  EXPECT_EQ(row_seed("qwen_1"), row_seed("qwen_1"));
  EXPECT_NE(row_seed("qwen_1"), row_seed("qwen_2"));
  EXPECT_EQ(closed_loop_requests(1), 16);
  EXPECT_EQ(closed_loop_requests(64), 256);
}

// The fixture's rows through the command: each row of rows.csv, in the file's order, is simulated
// or skipped with a reason; the expressed rows' scenarios are written; the figure is drawn.
TEST(validateServingRuns, ReportsEveryRowSimulatedOrSkipped) {
  if (!matplotlib_installed())
    GTEST_SKIP() << "python3-matplotlib is not installed (scripts/bootstrap installs it)";
  TempDir tmp;
  const std::string runs =
      write_runs(tmp, "runs.csv", {kServingRunsHeader, kAggregated, kDisaggregated, kNoConcurrency});
  const std::vector<std::string> args{"validate", "serving-runs", runs, "--out", tmp / "out", "-j", "2"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const std::vector<std::string> lines = split_lines(read_file(tmp / "out/rows.csv"));
  ASSERT_EQ(lines.size(), 4u) << read_file(tmp / "out/rows.csv");
  EXPECT_EQ(lines[0],
            "id,model,mode,layout,isl,osl,concurrency,measured_ttft_ms,simulated_ttft_ms,ttft_error,"
            "measured_tpot_ms,simulated_tpot_ms,tpot_error,skipped");
  const std::vector<std::string> agg = split_csv_line(lines[1]), disagg = split_csv_line(lines[2]),
                                 skipped = split_csv_line(lines[3]);
  EXPECT_EQ(std::vector<std::string>(agg.begin(), agg.begin() + 8),
            (std::vector<std::string>{"agg_tp2", "Qwen/Qwen3-32B", "agg", "tp2", "128", "8", "2", "120.5"}));
  EXPECT_EQ(disagg[3], "prefill 2 x tp1 / decode tp2");
  EXPECT_EQ(skipped[0], "no_concurrency");
  EXPECT_EQ(skipped[8], "");
  EXPECT_NE(skipped[13].find("no concurrency recorded"), std::string::npos);
  for (const auto& row : {agg, disagg}) {
    // Simulated (both means and their errors), or skipped with why (on a branch without the keys the
    // scenarios use, the loader's message naming the key).
    EXPECT_EQ(row[8].empty(), !row[13].empty()) << lines[1] << "\n" << lines[2];
    EXPECT_EQ(row[9].empty(), row[8].empty());
    EXPECT_TRUE(fs::exists(tmp / ("out/scenarios/" + row[0] + ".yaml")));
  }
  EXPECT_FALSE(fs::exists(tmp / "out/scenarios/no_concurrency.yaml"));
  const std::string summary = read_file(tmp / "out/summary.md");
  EXPECT_NE(summary.find("| no_concurrency | no concurrency recorded"), std::string::npos) << summary;
  EXPECT_NE(summary.find("| Qwen/Qwen3-32B | agg | ttft |"), std::string::npos) << summary;
  EXPECT_TRUE(read_file(tmp / "out/validation.png").starts_with("\x89PNG\r\n"));

  // Again into the same folder, one row: the other rows' scenarios go.
  const CliResult again =
      run_semsim({"validate", "serving-runs", runs, "--out", tmp / "out", "--only", "^agg_"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(split_lines(read_file(tmp / "out/rows.csv")).size(), 2u);
  EXPECT_EQ(entries_under(tmp / "out/scenarios"), std::vector<std::string>{"agg_tp2.yaml"});
}

// Both expressed rows simulate: their errors are the simulated over the measured, less one.
TEST(validateServingRuns, SimulatesTheAggregatedAndDisaggregatedRows) {
  TempDir tmp;
  const std::string runs = write_runs(tmp, "runs.csv", {kServingRunsHeader, kAggregated, kDisaggregated});
  const CliResult r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "out"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = split_lines(read_file(tmp / "out/rows.csv"));
  ASSERT_EQ(lines.size(), 3u);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> row = split_csv_line(lines[i]);
    EXPECT_EQ(row[13], "") << lines[i];
    const double ttft = std::stod(row[8]), tpot = std::stod(row[11]);
    EXPECT_GT(ttft, 0);
    EXPECT_GT(tpot, 0);
    EXPECT_NEAR(std::stod(row[9]), ttft / std::stod(row[7]) - 1, 1e-4);
    EXPECT_NEAR(std::stod(row[12]), tpot / std::stod(row[10]) - 1, 1e-4);
  }
}

// --set: a what-if across the rows, in every row's written scenario; a row whose scenario refuses the
// value is skipped with the reason; a malformed value exits 2 before any row runs.
TEST(validateServingRuns, SetValuesGoIntoEveryRowsScenario) {
  TempDir tmp;
  const std::string runs = write_runs(tmp, "runs.csv", {kServingRunsHeader, kAggregated, kDisaggregated});
  const auto simulated_ttft = [&](const std::string& out, int line) {
    const std::vector<std::string> row =
        split_csv_line(split_lines(read_file(tmp / (out + "/rows.csv"))).at(line));
    return row[8].empty() ? -1.0 : std::stod(row[8]);
  };
  CliResult r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "plain", "--only", "^agg_"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "one", "--only", "^agg_", "--set",
                  "serving.max_running_requests=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two in flight, one running at a time: the second waits for the first, so the mean TTFT grows.
  EXPECT_GT(simulated_ttft("one", 1), 1.2 * simulated_ttft("plain", 1));
  const std::string scenario = read_file(tmp / "one/scenarios/agg_tp2.yaml");
  EXPECT_NE(scenario.find("# with validate --set serving.max_running_requests=1\n"), std::string::npos);
  EXPECT_NE(scenario.find("max_running_requests: 1"), std::string::npos) << scenario;

  r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "prealloc", "--set",
                  "disaggregation.decode_kv=preallocated"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = split_lines(read_file(tmp / "prealloc/rows.csv"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(split_csv_line(lines[1])[13].find("disaggregation"), std::string::npos) << lines[1];
  EXPECT_EQ(split_csv_line(lines[2])[13], "") << lines[2];
  EXPECT_GT(simulated_ttft("prealloc", 2), 0);

  r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "bad", "--set", "serving"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected key.path=value"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "bad/rows.csv"));
}

struct BadRuns {
  std::vector<std::string> lines;
  std::string message;  // a part of the one error line
};

TEST(validateServingRuns, BadFilesNameFileLineAndColumn) {
  const std::string row = kAggregated;
  const std::vector<BadRuns> cases = {
      {{kServingRunsHeader + ",extra_column", row + ",1"},
       ":1: column 35 ('extra_column'): not a column of measured serving runs"},
      {{"id,mode_path", "x,y"},
       ":1: column 2 ('mode_path'): not a column of measured serving runs (did you mean 'model_path'?)"},
      {{"id,backend", "x,sglang"}, ":1: no column 'silicon_data_source' (required: id, silicon_data_source,"},
      {{kServingRunsHeader, std::string(row).replace(row.find(",128,"), 5, ",1k,")},
       ":2: column 9 (isl): '1k' is not a whole number"},
      {{kServingRunsHeader, std::string(row).replace(row.find("concurrency=2"), 13, "concurrency=x")},
       ":2: column 2 (silicon_data_source): 'x' is not a whole number"},
      {{kServingRunsHeader, std::string(row).replace(row.find(",120.5,"), 7, ",-1,")},
       ":2: column 33 (silicon_ttft_ms): '-1' is not a positive number"},
      {{kServingRunsHeader, row, row}, ":3: column 1 (id): 'agg_tp2' is the id of line 2 too"},
      {{kServingRunsHeader, "../up" + row.substr(row.find(','))},
       ":2: column 1 (id): '../up': an id is letters"},
      {{kServingRunsHeader, row + ",1"}, ":2: 35 fields, but the header has 34"},
  };
  for (const BadRuns& c : cases) {
    TempDir tmp;
    const std::string runs = write_runs(tmp, "runs.csv", c.lines);
    const CliResult r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "out"});
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(runs + c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "out")) << c.message;
  }
  TempDir tmp;
  const std::string runs = write_runs(tmp, "runs.csv", {kServingRunsHeader, kAggregated});
  CliResult r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "out", "--only", "("});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--only '(': not a regular expression"), std::string::npos) << r.err;
  r = run_semsim({"validate", "serving-runs", runs, "--out", tmp / "out", "--only", "nothing"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--only 'nothing': no row's id matches"), std::string::npos) << r.err;
  std::ofstream(tmp / "stranger.txt") << "x";
  r = run_semsim({"validate", "serving-runs", runs, "--out", tmp.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("which semsim did not write"), std::string::npos) << r.err;
}

// The output folder is checked before any row runs: not an input, nor holding one where an output
// would replace it, and in a folder semsim can write in; the input is left as it was.
TEST(validateServingRuns, OutputsAreCheckedBeforeTheRowsRunAndNeverAnInput) {
  TempDir tmp;
  const std::string runs = write_runs(tmp, "runs.csv", {kServingRunsHeader, kAggregated});
  const std::string text = read_file(runs);
  CliResult r = run_semsim({"validate", "serving-runs", runs, "--out", runs});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--out '" + runs + "': is a file, not a folder"), std::string::npos) << r.err;
  fs::create_directory(tmp / "out");
  const std::string rows = write_runs(tmp, "out/rows.csv", {kServingRunsHeader, kAggregated});
  r = run_semsim({"validate", "serving-runs", rows, "--out", tmp / "out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("an input of this command that its outputs would replace"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(rows), text);
  r = run_semsim({"validate", "serving-runs", runs, "--out", "/proc/semsim-validation"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--out '/proc/semsim-validation': cannot create the output folder"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(runs), text);
}

}  // namespace
}  // namespace semsim::cli_test
