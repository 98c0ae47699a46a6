// `semsim run --export-steps`, `semsim live` (here without a GPU) and `semsim compare-live` on live
// results written by the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/replay/step_export.hpp"
#include "cli_runner.hpp"
#include "sim/run_plan.hpp"
#include "tests/step_export_fixture.hpp"

namespace semsim::cli_test {
namespace {

// 16 requests of 32 output tokens: about 200 steps, a fraction of a second.
const std::vector<std::string> kSmallRun{
    "run", "default", "--set", "workload.requests=16", "--set", "workload.output_len.value=32"};

CliResult export_steps(const TempDir& dir, const std::string& name, const std::string& window) {
  std::vector<std::string> args = kSmallRun;
  args.insert(args.end(), {"--out", dir / (name + "-run"), "--export-steps", dir / name, "--steps", window});
  return run_semsim(args);
}

TEST(StepExport, IsDeterministicAndHoldsTheWindowsWork) {
  TempDir dir;
  const CliResult first = export_steps(dir, "a.steps", "5:3");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(export_steps(dir, "b.steps", "5:3").exit_code, 0);
  EXPECT_EQ(read_file(dir / "a.steps"), read_file(dir / "b.steps"));
  const StepExport data = read_step_export(dir / "a.steps");
  ASSERT_EQ(data.steps.size(), 3u);
  EXPECT_EQ(data.steps.front().index, 5);
  EXPECT_EQ(data.ranks, 8);
  EXPECT_EQ(data.rate, 20);
  // The export's step times are the run's own (steps.csv, 9 significant digits).
  const std::vector<std::string> csv = split_lines(read_file(fs::path(dir / "a.steps-run") / "steps.csv"));
  for (const ExportedStep& step : data.steps) {
    ASSERT_LT(static_cast<std::size_t>(step.index + 1), csv.size());
    std::istringstream row(csv[static_cast<std::size_t>(step.index + 1)]);
    std::vector<double> fields;
    for (std::string field; std::getline(row, field, ',');) fields.push_back(std::stod(field));
    EXPECT_EQ(fields[0], step.index);
    EXPECT_NEAR(fields[1], step.start_s, 1e-8 * step.end_s);
    EXPECT_NEAR(fields[1] + fields[2], step.end_s, 1e-8 * step.end_s);
    // attention_s, dispatch_s, experts_s, combine_s, other_s: the export's phases in its order.
    for (int phase = 0; phase < kExportedPhaseCount; ++phase)
      EXPECT_NEAR(fields[static_cast<std::size_t>(3 + phase)], step.phase_s[phase], 1e-8 * step.end_s)
          << kExportedPhases[phase];
  }
  for (const ExportedStep& step : data.steps) {
    ASSERT_EQ(step.layers.size(), data.model.moe_layers.size());
    long long tokens = 0;
    for (const ExportedRank& r : step.ranks) tokens += r.tokens();
    for (const ExportedLayer& l : step.layers) {
      long long activations = 0;
      for (const ExportedExperts& e : l.ranks) activations += e.activations();
      EXPECT_EQ(activations, tokens * data.model.top_k);  // every routed activation served once
      double dispatched = 0;
      for (const double b : l.dispatch_bytes) dispatched += b;
      EXPECT_GT(dispatched, 0);
      EXPECT_GT(l.dispatch_s, 0);
    }
  }
}

// What the replay runs is what the simulator priced: every exported phase time of every rank is the
// run's cost model over the exported batch, layer by layer (as the replay planner reads them).
TEST(StepExport, PhaseTimesAreTheCostModelOverTheExportedWork) {
  TempDir dir;
  ASSERT_EQ(export_steps(dir, "a.steps", "0:6").exit_code, 0);
  const StepExport data = read_step_export(dir / "a.steps");
  const Scenario scenario =
      load_scenario_file("default", {"workload.requests=16", "workload.output_len.value=32"});
  const RunPlan plan = build_run(scenario);
  const CostModel& cost = *plan.cost;
  int prefills = 0;
  for (const ExportedStep& step : data.steps)
    for (int r = 0; r < data.ranks; ++r) {
      const ExportedRank& rank = step.ranks[static_cast<std::size_t>(r)];
      std::vector<SequenceChunk> batch;
      for (const ExportedChunk& c : rank.chunks) {
        batch.push_back({c.new_tokens, c.prior_context});
        prefills += c.new_tokens > 1;
      }
      double other = lm_head_with_elementwise(cost, rank.logits);
      for (int layer = 0; layer < data.model.layers; ++layer)
        if (!std::binary_search(data.model.moe_layers.begin(), data.model.moe_layers.end(), layer))
          other += attention_with_elementwise(cost, layer, batch) +
                   dense_ffn_with_elementwise(cost, rank.tokens());
      EXPECT_NEAR(rank.other_s, other, 1e-9 * other) << "step " << step.index << " rank " << r;
      for (const ExportedLayer& l : step.layers) {
        const ExportedExperts& e = l.ranks[static_cast<std::size_t>(r)];
        const double attention = attention_with_elementwise(cost, l.layer, batch) + cost.gate(rank.tokens());
        const double experts =
            cost.routed_experts(e.tokens) + shared_experts_with_elementwise(cost, rank.tokens());
        EXPECT_NEAR(e.attention_s, attention, 1e-9 * attention) << "step " << step.index << " rank " << r;
        EXPECT_NEAR(e.experts_s, experts, 1e-9 * experts) << "step " << step.index << " rank " << r;
      }
    }
  EXPECT_GT(prefills, 0);  // the window holds prefill chunks as well as decodes
}

TEST(StepExport, RefusesAWindowPastTheRunAndLeavesNoFile) {
  TempDir dir;
  const CliResult r = export_steps(dir, "late.steps", "1000000:2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--steps 1000000:2: the run has"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "late.steps"));
}

TEST(StepExport, RefusesADisaggregatedScenarioBeforeSimulating) {
  TempDir dir;
  const CliResult r = run_semsim({"run", "default", "--set", "cluster={preset: h200-ib, nodes: 2}", "--set",
                                  "disaggregation={prefill: {nodes: 1}, decode: {nodes: 1}}", "--out",
                                  dir / "run", "--export-steps", dir / "d.steps"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--export-steps: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is disaggregated; the step export replays one server's steps"), std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Live, WithoutAGpuExitsTwoAndWritesNothing) {
  TempDir dir;
  ASSERT_EQ(export_steps(dir, "x.steps", "0:1").exit_code, 0);
  const CliResult r = run_semsim({"live", dir / "x.steps", "--out", dir / "live"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("live: no"), std::string::npos) << r.err;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"x.steps", "x.steps-run"}));  // no live folder, staged or not
}

TEST(Live, CorruptExportIsALocatedErrorBeforeAnything) {
  TempDir dir;
  std::ofstream(dir / "bad.steps")
      << "semsim-steps version=1\nrun scenario=x seed=1 rate=1 ranks=two first_step=0 steps=1\n";
  const CliResult r = run_semsim({"live", dir / "bad.steps", "--out", dir / "live"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir / "bad.steps" + ":2: run ranks: 'two' is not an integer"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "live"));
}

// The replay's outputs: --out checked before the replay starts (never the export), the replay's files
// staged in it and put in place when it succeeded, nothing left when it failed. A script stands in
// for semsim-live.
TEST(Live, OutputsAreCheckedBeforeTheReplayAndStaged) {
  TempDir dir;
  ASSERT_EQ(export_steps(dir, "x.steps", "0:1").exit_code, 0);
  const std::string replay = dir / "replay.sh";
  std::ofstream(replay) << "#!/bin/sh\n[ -n \"$FAIL\" ] && exit 1\nmkdir -p \"$3\"\n"
                           "echo step,rank,phase > \"$3/steps.csv\"\necho ok > \"$3/checks.csv\"\n";
  fs::permissions(replay, fs::perms::owner_all);
  const std::vector<std::string> live{"live", dir / "x.steps", "--binary", replay, "--out"};
  auto with_out = [&](const std::string& out) {
    std::vector<std::string> args = live;
    args.push_back(out);
    return args;
  };
  const std::string exported = read_file(dir / "x.steps");
  CliResult r = run_semsim(with_out(dir / "x.steps"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--out '" + dir / "x.steps" + "': is a file, not a folder"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(dir / "x.steps"), exported);
  r = run_semsim(with_out("/proc/semsim-live"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cannot create the output folder"), std::string::npos) << r.err;
  fs::create_directory(dir / "mixed");
  std::ofstream(dir / "mixed/notes.txt") << "mine";
  r = run_semsim(with_out(dir / "mixed"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("holds 'notes.txt', which semsim did not write"), std::string::npos) << r.err;

  r = run_semsim(with_out(dir / "live"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir / "live")) files.push_back(entry.path().filename());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"checks.csv", "steps.csv"})) << "no staging folder left";
  ::setenv("FAIL", "1", 1);
  r = run_semsim(with_out(dir / "failed"));
  ::unsetenv("FAIL");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "failed"));
}

TEST(CompareLive, ErrorsAndQuantilesOfFixtureResults) {
  TempDir dir;
  // The fixture's step 3 and two copies of it (steps 4 and 5). Rank 0 simulates attention 1 ms and
  // experts 2 ms over 6 new tokens a step; rank 1 idles and is not replayed.
  StepExport data = test::two_rank_export();
  for (const long long index : {4, 5}) {
    ExportedStep copy = data.steps.front();
    copy.index = index;
    data.steps.push_back(copy);
  }
  {
    std::ofstream out(dir / "r.steps");
    write_step_export(out, data);
  }
  // Live attention twice the simulated (error -0.5), experts 0.8, 0.5 and 1 times it (errors 0.25, 1
  // and 0); the step's sum then 3.6, 3 and 4 ms against 3 (errors -1/6, 0 and -1/4).
  fs::create_directory(dir / "live");
  std::ofstream(dir / "live/steps.csv") << "step,rank,phase,median_us,p10_us,p90_us,repeats,launch\n"
                                           "3,0,attention,2000,0,0,5,graph\n3,0,experts,1600,0,0,5,graph\n"
                                           "4,0,attention,2000,0,0,5,graph\n4,0,experts,1000,0,0,5,eager\n"
                                           "5,0,attention,2000,0,0,5,graph\n5,0,experts,2000,0,0,5,graph\n";
  // The live folder is an input: never the output, refused before the comparison.
  const std::string live_steps = read_file(dir / "live/steps.csv");
  const CliResult onto_input =
      run_semsim({"compare-live", dir / "r.steps", dir / "live", "--out", dir / "live"});
  EXPECT_EQ(onto_input.exit_code, 2);
  EXPECT_NE(onto_input.err.find("--out '" + dir / "live" + "': is also an input"), std::string::npos)
      << onto_input.err;
  EXPECT_EQ(read_file(dir / "live/steps.csv"), live_steps);
  const CliResult r = run_semsim({"compare-live", dir / "r.steps", dir / "live", "--out", dir / "cmp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> summary = split_lines(read_file(dir / "cmp/summary.csv"));
  ASSERT_EQ(summary.size(), 4u);
  EXPECT_EQ(summary[1], "attention,3,0.5,0.5");
  // |errors| 0, 0.25, 1: median 0.25, p90 0.25 + 0.8 x 0.75.
  EXPECT_EQ(summary[2], "experts,3,0.25,0.85");
  // |errors| 0, 1/6, 1/4: median 1/6, p90 1/6 + 0.8 x 1/12.
  EXPECT_EQ(summary[3], "step,3,0.166667,0.233333");
  EXPECT_NE(
      read_file(dir / "cmp/summary.md").find("Mixed: 1 of 6 live phase times were timed kernel by kernel"),
      std::string::npos);
  // 18 tokens over 3 x 3 ms simulated and 3.6 + 3 + 4 ms live.
  const std::vector<std::string> throughput = split_lines(read_file(dir / "cmp/throughput.csv"));
  ASSERT_EQ(throughput.size(), 2u);
  EXPECT_EQ(throughput[1], "12.5,3,18,0.009,0.0106,2000,1698.11321,1,2,attention+experts");
  EXPECT_NE(
      read_file(dir / "cmp/summary.md")
          .find("Partial at rate 12.5: the replay covered 1 of 2 ranks and the phases attention+experts;"),
      std::string::npos);
  for (const char* plot : {"step_time.png", "phase_error_cdf.png", "throughput.png"})
    EXPECT_TRUE(fs::exists(fs::path(dir / "cmp") / "plots" / plot)) << plot;

  std::ofstream(dir / "live/steps.csv")
      << "step,rank,phase,median_us,p10_us,p90_us,repeats\n5,0,gate,1,0,0,5\n";
  const CliResult bad = run_semsim({"compare-live", dir / "r.steps", dir / "live", "--out", dir / "cmp2"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("steps.csv:2: phase 'gate'"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "cmp2"));
  std::ofstream(dir / "live/steps.csv")
      << "step,rank,phase,median_us,p10_us,p90_us,repeats,launch\n5,0,experts,1,0,0,5,lazy\n";
  const CliResult launch = run_semsim({"compare-live", dir / "r.steps", dir / "live", "--out", dir / "cmp2"});
  EXPECT_EQ(launch.exit_code, 2);
  EXPECT_NE(launch.err.find("steps.csv:2: launch 'lazy': not graph or eager"), std::string::npos)
      << launch.err;
}

}  // namespace
}  // namespace semsim::cli_test
