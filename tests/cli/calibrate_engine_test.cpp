// `semsim calibrate engine`: the engine costs fitted to measured serving runs, leave-one-configuration-
// out; its folds, the command on a tiny fixture and its refusals.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "sim/validation/engine_calibration.hpp"

namespace semsim::cli_test {
namespace {

// Two small Qwen3-32B configurations (TP2 and TP4), and a row of another system.
const std::string kFitTp2 =
    "agg_tp2,source_file=x.csv; silicon_concurrency=2,sglang,0.5.1,Qwen/Qwen3-32B,h100_sxm,,agg,128,8,,,"
    "2,2,1,,1,1,,,,,,,,,,,,,,,60.5,12.5";
const std::string kFitTp4 =
    "agg_tp4,source_file=x.csv; silicon_concurrency=2,sglang,0.5.1,Qwen/Qwen3-32B,h100_sxm,,agg,128,8,,,"
    "2,4,1,,1,1,,,,,,,,,,,,,,,40.25,8.5";
const std::string kFitOtherSystem =
    "b200_tp2,source_file=x.csv; silicon_concurrency=2,sglang,0.5.1,Qwen/Qwen3-32B,b200_sxm,,agg,128,8,,,"
    "2,2,1,,1,1,,,,,,,,,,,,,,,50,10";

std::string write_fit_runs(const TempDir& tmp, const std::vector<std::string>& lines) {
  std::ofstream out(tmp / "runs.csv");
  for (const std::string& line : lines) out << line << "\n";
  return tmp / "runs.csv";
}

TEST(calibrateEngine, EachFoldLeavesItsConfigurationOut) {
  const std::vector<std::string> configurations{"a", "b", "a", "c", "b"};
  const std::vector<EngineFold> folds = leave_one_configuration_out(configurations);
  ASSERT_EQ(folds.size(), 3u);
  EXPECT_EQ(folds[0].configuration, "a");
  EXPECT_EQ(folds[0].held_out, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(folds[0].training, (std::vector<std::size_t>{1, 3, 4}));
  for (const EngineFold& fold : folds) {
    EXPECT_EQ(fold.held_out.size() + fold.training.size(), configurations.size());
    for (const std::size_t i : fold.training) EXPECT_NE(configurations[i], fold.configuration);
    for (const std::size_t i : fold.held_out) EXPECT_EQ(configurations[i], fold.configuration);
  }
}

TEST(calibrateEngine, ConfigurationsAreModelModeAndLayoutWithoutWorkers) {
  MeasuredServingRun run;
  run.model_path = "deepseek-ai/DeepSeek-R1";
  run.mode = "disagg";
  run.prefill = {
      .batch_size = 1, .workers = 3, .tp = 16, .pp = 1, .attention_dp = {}, .moe_tp = {}, .moe_ep = {}};
  run.decode = {
      .batch_size = 8, .workers = 1, .tp = 16, .pp = 1, .attention_dp = {}, .moe_tp = {}, .moe_ep = {}};
  EXPECT_EQ(configuration_of(run), "deepseek-ai/DeepSeek-R1 disagg prefill tp16 / decode tp16");
  EXPECT_EQ(system_of_device("h100-sxm"), "h100_sxm");
}

// Two configurations: each fold trains on the other's row, the held-out row is re-timed and simulated
// again; the profile loads as a scenario's calibration.
TEST(calibrateEngine, FitsATinyFixtureAndWritesALoadableProfile) {
  TempDir tmp;
  const std::string runs = write_fit_runs(tmp, {kServingRunsHeader, kFitTp2, kFitTp4, kFitOtherSystem});
  const std::vector<std::string> args{"calibrate", "engine",   "--runs", runs,
                                      "--device",  "h100-sxm", "--out",  tmp / "fit/engine.yaml",
                                      "-j",        "2"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const std::string report = read_file(tmp / "fit/engine-fit.md");
  EXPECT_EQ(r.out.find(report), 0u) << r.out;
  for (const std::string part : {"## Fitted costs", "| request_seconds |", "Qwen/Qwen3-32B agg tp2",
                                 "Qwen/Qwen3-32B agg tp4", "| agg_tp2 |", "| agg_tp4 |"})
    EXPECT_NE(report.find(part), std::string::npos) << part << "\n" << report;
  EXPECT_EQ(report.find("b200_tp2"), std::string::npos) << "another system's row";
  EXPECT_TRUE(fs::exists(tmp / "fit/engine-runs/tables/agg_tp2/steps.csv"));
  EXPECT_NE(read_file(tmp / "fit/engine-runs/tables/agg_tp2/steps.csv").find(",engine_s,host_s,"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(tmp / "fit/engine-runs/folds/fold-2.yaml"));
  {
    std::ofstream scenario(tmp / "scenario.yaml");
    scenario << "schema: 1\nname: fitted\nmodel: qwen3-32b\ncluster: h100-1x8\n"
                "parallelism: {attention: {tp: 2, dp: 1}}\nengine: {name: sglang}\n"
                "workload: {concurrency: 2, requests: 4, input_len: {dist: fixed, value: 128}, "
                "output_len: {dist: fixed, value: 8}}\ncalibration: "
             << tmp / "fit/engine.yaml"
             << "\n";
  }
  const CliResult check = run_semsim({"check", tmp / "scenario.yaml"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
}

TEST(calibrateEngine, BadArgumentsExitTwo) {
  TempDir tmp;
  const std::string runs = write_fit_runs(tmp, {kServingRunsHeader, kFitTp2});
  const std::string out = tmp / "engine.yaml";
  const std::vector<std::vector<std::string>> cases = {
      {"calibrate", "engine", "--device", "h100-sxm", "--out", out},                     // no --runs
      {"calibrate", "engine", "--runs", runs, "--out", out},                             // no --device
      {"calibrate", "engine", "--runs", runs, "--device", "h100-sxm"},                   // no --out
      {"calibrate", "engine", "--runs", runs, "--device", "no-such-gpu", "--out", out},  // unknown device
      {"calibrate", "engine", "--runs", runs, "--device", "b200", "--out", out},         // no row of it
      {"calibrate", "engine", "--runs", runs, "--device", "h100-sxm", "--out", out, "--only", "^x"},
      {"calibrate", "engine", "--runs", runs, "--device", "h100-sxm", "--out", out, "--only", "("},
      {"calibrate", "engine", "--runs", tmp / "none.csv", "--device", "h100-sxm", "--out", out},
      {"calibrate", "engine", "--runs", runs, "--device", "h100-sxm", "--out", out, "-j", "0"},
  };
  for (const auto& args : cases) {
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_FALSE(fs::exists(out)) << describe(args, r);
  }
}

// The profile, engine-fit.md and the runs' folder are checked before any row runs: none may be the
// measured runs (which stay as they were), and a place no folder can be made is refused at once.
TEST(calibrateEngine, OutputsAreCheckedBeforeTheRowsRunAndNeverAnInput) {
  TempDir tmp;
  const std::string runs = write_fit_runs(tmp, {kServingRunsHeader, kFitTp2});
  const std::string text = read_file(runs);
  for (const std::string name : {"runs.yaml", "engine-fit.md"}) {
    fs::copy_file(runs, tmp / name);
    const std::string out = name == "runs.yaml" ? tmp / name : tmp / "engine.yaml";
    const std::vector<std::string> args{"calibrate", "engine",   "--runs", tmp / name,
                                        "--device",  "h100-sxm", "--out",  out};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find("is also an input"), std::string::npos) << describe(args, r);
    EXPECT_EQ(read_file(tmp / name), text) << name;
    EXPECT_FALSE(fs::exists(tmp / "engine-runs")) << name;
    EXPECT_FALSE(fs::exists(tmp / "runs-runs")) << name;
  }
  const std::vector<std::string> args{"calibrate", "engine",   "--runs", runs,
                                      "--device",  "h100-sxm", "--out",  "/proc/semsim-fit/engine.yaml"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_NE(r.err.find("cannot create the output folder"), std::string::npos) << describe(args, r);
  // Rows that ran but none fits (one output token: no TPOT): the runs' folder made for them goes too.
  std::string one_token = kFitTp2;
  one_token.replace(one_token.find(",agg,128,8,"), 11, ",agg,128,1,");
  const std::string unfit = write_fit_runs(tmp, {kServingRunsHeader, one_token});
  const std::vector<std::string> none{"calibrate", "engine",   "--runs", unfit,
                                      "--device",  "h100-sxm", "--out",  tmp / "fit/engine.yaml"};
  const CliResult failed = run_semsim(none);
  EXPECT_EQ(failed.exit_code, 2) << describe(none, failed);
  EXPECT_NE(failed.err.find("no row could be simulated"), std::string::npos) << describe(none, failed);
  EXPECT_FALSE(fs::exists(tmp / "fit")) << "nothing left: " << describe(none, failed);
}

}  // namespace
}  // namespace semsim::cli_test
