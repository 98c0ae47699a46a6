// Pinned values: the default scenario's key results, to the bit, and a few of its steps. A change of
// the engine that moves any of them fails here loudly; if the change is meant, say in its commit why
// the numbers moved and update them from a run of the new binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

struct GoldenRun {
  Json summary;
  std::vector<std::string> steps;  // steps.csv lines, header first
};

GoldenRun run_default(const TempDir& tmp, const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", "default", "--out", tmp / "out"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  const fs::path out = tmp / "out";
  GoldenRun run{Json::parse(read_file(out / "summary.json")), {}};
  std::istringstream steps(read_file(out / "steps.csv"));
  for (std::string line; std::getline(steps, line);) run.steps.push_back(line);
  return run;
}

void expect_distribution(const Json& d, double mean, double p50, double p90, double p99) {
  EXPECT_EQ(d["mean"].get<double>(), mean);
  EXPECT_EQ(d["p50"].get<double>(), p50);
  EXPECT_EQ(d["p90"].get<double>(), p90);
  EXPECT_EQ(d["p99"].get<double>(), p99);
}

// `semsim run default`: DeepSeek-V2-Lite, 8 x H200 (the embedded measured profile), Attention-DP, EP8,
// 2,000 requests.
TEST(cliGoldenValues, DefaultScenario) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {});
  const Json& s = run.summary;
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 106.28656822569184);
  EXPECT_EQ(s["requests_completed"].get<int>(), 2000);
  EXPECT_EQ(s["throughput_tok_s"]["total"].get<double>(), 14451.496794387182);
  expect_distribution(s["ttft_s"], 0.0147322278780352, 0.014242269446084421, 0.018172502062580524,
                      0.022500634131150433);
  expect_distribution(s["tpot_s"], 0.005557799581789338, 0.0055472422554058674, 0.006043780705890365,
                      0.006546601931239955);
  expect_distribution(s["e2e_s"], 1.4319711212343154, 1.4296001140192445, 1.555602428898257,
                      1.6846622484562757);
  EXPECT_EQ(s["lar"].get<double>(), 0.1250072669073647);
  EXPECT_EQ(s["a2a_bytes"]["scale_up"].get<double>(), 981452617728.0);
  EXPECT_EQ(s["imbalance"].get<double>(), 1.598784575268278);
  EXPECT_EQ(s["steps"].get<int>(), 19480);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.005454583351747447);
  EXPECT_EQ(s["phase_seconds"]["attention"].get<double>(), 25.08340587490983);
  EXPECT_EQ(s["phase_seconds"]["dispatch"].get<double>(), 7.226503566278241);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 61.529865855389694);
  EXPECT_EQ(s["phase_seconds"]["combine"].get<double>(), 8.519437688697916);
  EXPECT_EQ(s["phase_seconds"]["other"].get<double>(), 3.896070706764592);
  EXPECT_EQ(s["a2a_share_of_moe_time"].get<double>(), 0.15383022979320096);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 15.74594125497612);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 0.0);
  ASSERT_EQ(run.steps.size(), 19481u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.0110482751,0.00176439758,0.000813378163,0.00692636172,0.0012682358,"
            "0.000275901866,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.00208161397,0");
  EXPECT_EQ(run.steps[100],
            "99,0.47890272,0.00428566462,0.0012037277,0.000304999261,0.00225819169,0.000330137612,"
            "0.000188608363,0,11,7039872,0,0.121795,1.668998,0,0,0,0,0.000635136873,0");
  EXPECT_EQ(run.steps[1000],
            "999,4.9068007,0.00456109584,0.0011779839,0.000311012539,0.00253644883,0.000346645527,"
            "0.000189005045,0,20,12670528,0,0.130128,1.641026,0,0,0,0,0.000657658067,0");
}

// The same with two-batch overlap, 300 requests: micro-batches, hidden communication, SM slowdown.
TEST(cliGoldenValues, DefaultScenarioWithTwoBatchOverlap) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {"serving.overlap=two_batch", "workload.requests=300"});
  const Json& s = run.summary;
  EXPECT_EQ(s["overlap"], "two_batch");
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 18.23447436440338);
  EXPECT_EQ(s["steps"].get<int>(), 2120);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.008586410297726865);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 12.227016763194534);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 0.20763484975756466);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 2.8858198730067013);
  expect_distribution(s["tpot_s"], 0.008913196435144474, 0.008891504622585344, 0.009628077143399628,
                      0.009845970524611431);
  ASSERT_EQ(run.steps.size(), 2121u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.0165629299,0.00275839411,4.31630187e-05,0.0133357952,9.36232391e-05,"
            "0.000331954285,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.000136786258,0.00255409678");
  EXPECT_EQ(run.steps[200],
            "199,1.32848111,0.0171931818,0.0026688406,8.75332847e-05,0.0137607663,0.000220756864,"
            "0.000455284706,512,18,338770560,0,0.125907,1.633672,0,0,0,0,0.000308290148,0.00240733638");
}

}  // namespace
}  // namespace semsim::cli_test
