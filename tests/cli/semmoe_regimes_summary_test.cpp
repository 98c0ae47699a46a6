// scripts/summarize-semmoe-regimes (results/semmoe-regimes) on a hand-made cell: Sem-MoE's mean
// step minus vanilla's splits into comm (dispatch + combine + permute), experts and the rest, and
// the three add up to the difference; a point whose phases do not add up to its steps is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

const std::string kScript = std::string(SEMSIM_SOURCE_DIR) + "/scripts/summarize-semmoe-regimes";

bool system_matplotlib_installed() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

// One point: `phases` are the run's totals (attention, dispatch, experts, combine, other,
// reduce_scatter, all_gather, permute, engine) over `steps` steps.
std::string point(const std::string& series, double throughput, int steps, const std::string& phases,
                  double mean_step) {
  return series + "-id,ok," + series + ",deepseek-v2-lite,dp,h200-1x8,auto,deepep auto,32,," +
         std::to_string(throughput) + ",0.002,0.05,0.125,1e9,1000,0.25,1.4," + std::to_string(steps) + "," +
         std::to_string(mean_step) + "," + phases + ",10,5,0.01,0.002\n";
}

std::string points_csv(double sem_moe_mean_step, bool cost_scored = false) {
  std::string csv =
      "point_id,status,series,model,attention,cluster,dispatch,dispatch_kernel,workload.concurrency,"
      "workload.arrival.rate,throughput_tok_s.output,tpot_s.mean,ttft_s.p99,lar,a2a_bytes.scale_up,"
      "completed_tokens.output,a2a_share_of_moe_time,imbalance,steps,mean_step_seconds,phase_seconds."
      "attention,"
      "phase_seconds.dispatch,phase_seconds.experts,phase_seconds.combine,phase_seconds.other,"
      "phase_seconds.reduce_scatter,phase_seconds.all_gather,phase_seconds.permute,phase_seconds.engine,"
      "request_throughput,simulated_seconds,ttft_s.p50,tpot_s.p50\n";
  // Vanilla: 100 steps of 5 ms (comm 1 ms, experts 2 ms, rest 2 ms).
  const std::string vanilla_phases = "0.1,0.05,0.2,0.05,0.1,0,0,0,0";
  csv += point("vanilla", 1000, 100, vanilla_phases, 0.005);
  csv += point("eplb", 990, 100, vanilla_phases, 0.005);
  csv += point("moetuner-ilp", 1010, 100, vanilla_phases, 0.005);
  // Sem-MoE: 50 steps of 5.3 ms (comm 0.9 ms with its permute, experts 2.4 ms, rest 2 ms).
  csv += point("sem-moe", 980, 50, "0.05,0.02,0.12,0.02,0.05,0,0,0.005,0", sem_moe_mean_step);
  // The cost-scored placement: vanilla's steps, 1.0 % above EPLB (the better of EPLB and Sem-MoE).
  if (cost_scored) csv += point("cost-scored", 999.9, 100, vanilla_phases, 0.005);
  return csv;
}

int summarize(const TempDir& study, double sem_moe_mean_step, const std::string& log,
              bool cost_scored = false) {
  const fs::path sweep = study.path() / "sweeps" / "deepseek-v2-lite-dp-closed";
  fs::create_directories(sweep);
  std::ofstream(sweep / "points.csv") << points_csv(sem_moe_mean_step, cost_scored);
  return std::system(
      ("/usr/bin/python3 " + kScript + " " + study.path().string() + " >" + log + " 2>&1").c_str());
}

TEST(cliSemmoeRegimesSummary, StepDifferenceSplitsIntoCommExpertsAndRest) {
  if (!system_matplotlib_installed())
    GTEST_SKIP() << "python3-matplotlib is not installed (scripts/bootstrap installs it)";
  TempDir study;
  ASSERT_EQ(summarize(study, 0.0053, study / "log"), 0) << read_file(study / "log");
  const std::string summary = read_file(study / "summary.csv");
  // Rows in SYSTEMS order: vanilla, eplb, moetuner-ilp, sem-moe.
  const auto step = column_of(summary, "step_change_ms"), comm = column_of(summary, "comm_change_ms"),
             experts = column_of(summary, "experts_change_ms"), rest = column_of(summary, "rest_change_ms");
  ASSERT_EQ(step.size(), 4u);
  EXPECT_NEAR(step[3], 0.3, 1e-9);
  EXPECT_NEAR(comm[3], -0.1, 1e-9);
  EXPECT_NEAR(experts[3], 0.4, 1e-9);
  EXPECT_NEAR(rest[3], 0.0, 1e-9);
  EXPECT_NEAR(comm[3] + experts[3] + rest[3], step[3], 1e-9);
  EXPECT_NEAR(column_of(summary, "throughput_change_pct")[3], -2.0, 1e-9);
  EXPECT_NE(read_file(study / "summary.md").find("| +0.300 = -0.100 +0.400 +0.000 |"), std::string::npos);
  EXPECT_TRUE(read_file(study / "plots/regimes.png").starts_with("\x89PNG"));
}

// A cell with the cost-scored placement: compared with the better of Sem-MoE and EPLB (here EPLB).
TEST(cliSemmoeRegimesSummary, CostScoredAgainstTheBetterOfSemMoeAndEplb) {
  if (!system_matplotlib_installed())
    GTEST_SKIP() << "python3-matplotlib is not installed (scripts/bootstrap installs it)";
  TempDir study;
  ASSERT_EQ(summarize(study, 0.0053, study / "log", true), 0) << read_file(study / "log");
  ASSERT_EQ(column_of(read_file(study / "summary.csv"), "step_change_ms").size(), 5u);
  const std::string md = read_file(study / "summary.md");
  EXPECT_NE(md.find("Cells: 1; cost-scored throughput >= max(Sem-MoE, EPLB) in 1."), std::string::npos) << md;
  EXPECT_NE(md.find("| eplb | 990 | +1.0 % | -0.0 % |"), std::string::npos) << md;
}

TEST(cliSemmoeRegimesSummary, RefusesPhasesThatDoNotAddUpToTheSteps) {
  TempDir study;
  EXPECT_NE(summarize(study, 0.006, study / "log"), 0);
  EXPECT_NE(read_file(study / "log").find("point sem-moe-id: phases do not add up to the mean step"),
            std::string::npos)
      << read_file(study / "log");
  EXPECT_FALSE(fs::exists(study / "summary.csv"));
}

}  // namespace
}  // namespace semsim::cli_test
