// `semsim place`, `semsim place eval` and `semsim place bound` end to end on a small DeepSeek-style trace: a
// placement file appears only on success, eval prints the documented JSON keys, bad input exits 2 with one
// message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

// 12 prompts of 8 tokens, one of each kind, over DeepSeek-V2-Lite's 26 MoE layers; token "tokN"
// always routes to the six experts 8N..8N+5, i.e. one EP8 device under contiguous placement.
void write_fixture(const fs::path& dir) {
  fs::create_directories(dir);
  for (int p = 1; p <= 12; ++p) {
    std::ofstream out(dir / ("prompt_" + std::to_string(p) + "_data.csv"));
    out << "Layer ID,Batch Number,Token,Activated Expert IDs\n";
    for (int layer = 1; layer <= 26; ++layer)
      for (int t = 0; t < 8; ++t) {
        const int kind = (p + t) % 8;
        out << layer << ",0,tok" << kind << ",\"[";
        for (int j = 0; j < 6; ++j) out << (j ? ", " : "") << 8 * kind + j;
        out << "]\"\n";
      }
  }
}

class cliPlace : public ::testing::Test {
 protected:
  void SetUp() override {
    write_fixture(dir_.path() / "ds");
    run_ok({"trace", "import", "--from", "deepseek-csv", dir_ / "ds", "--model", "deepseek-v2-lite", "--out",
            trace_});
    run_ok({"profile", trace_, "--split", "0.5", "--seed", "1", "--out", dir_ / "prof"});
  }
  void run_ok(const std::vector<std::string>& args) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  TempDir dir_;
  const std::string trace_ = dir_ / "ds.semtrace";
};

TEST_F(cliPlace, PlaceThenEvalGivesTheDocumentedJson) {
  const std::string plan = dir_ / "contiguous.semplace";
  // --balance 100: the token table may follow affinity alone (the fixture's token kinds are uneven).
  run_ok({"place", "--policy", "contiguous", "--profile", dir_ / "prof", "--ep", "8", "--balance", "100",
          "--out", plan});
  // --balance 100: no load cap, so each request takes its best-voted device.
  const std::vector<std::string> eval{"place", "eval",   plan, "--trace",   trace_, "--split",
                                      "0.5",   "--seed", "1",  "--balance", "100",  "--json"};
  const CliResult r = run_semsim(eval);
  ASSERT_EQ(r.exit_code, 0) << describe(eval, r);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"lar_dp", "lar_tp", "imbalance_dp", "imbalance_tp", "solver_seconds",
                          "upper_bound_dp", "upper_bound_tp"})
    EXPECT_TRUE(j.contains(key)) << key << " missing in " << r.out;
  EXPECT_EQ(j["requests"], 6);
  // Each token's experts share one device, the tables name it, and the kinds fill equal slices.
  EXPECT_DOUBLE_EQ(j["lar_tp"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["imbalance_tp"].get<double>(), 1.0);
  EXPECT_LE(j["lar_tp"].get<double>(), j["upper_bound_tp"].get<double>() + 1e-9);
  // A request's 8 tokens are of 8 kinds, each on its own device: its one device serves an eighth.
  EXPECT_DOUBLE_EQ(j["lar_dp"].get<double>(), 0.125);
  EXPECT_LE(j["lar_dp"].get<double>(), j["upper_bound_dp"].get<double>() + 1e-9);
  // Hindsight cannot do better: the placement already serves every token locally, and no device
  // holds more than an eighth of any request.
  EXPECT_DOUBLE_EQ(j["lar_tp_hindsight"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["lar_dp_hindsight"].get<double>(), 0.125);
}

TEST_F(cliPlace, BoundAloneIsEvalsBoundAndNoBoundLeavesItOut) {
  const std::string plan = dir_ / "random.semplace";
  run_ok({"place", "--policy", "random", "--profile", dir_ / "prof", "--ep", "4", "--out", plan});
  // No triangle cuts: the fixture's identical layers make them slow, and lar_upper_bound_test
  // covers them.
  const std::vector<std::string> common{"--trace", trace_,   "--split",        "0.5", "--seed",
                                        "1",       "--json", "--bound-rounds", "0"};
  std::vector<std::string> eval{"place", "eval", plan}, bound{"place", "bound", "--ep", "4"};
  eval.insert(eval.end(), common.begin(), common.end());
  bound.insert(bound.end(), common.begin(), common.end());
  const CliResult with = run_semsim(eval), alone = run_semsim(bound);
  ASSERT_EQ(with.exit_code, 0) << describe(eval, with);
  ASSERT_EQ(alone.exit_code, 0) << describe(bound, alone);
  const auto e = nlohmann::json::parse(with.out), b = nlohmann::json::parse(alone.out);
  EXPECT_EQ(e["upper_bound_tp"], b["upper_bound_tp"]);
  EXPECT_EQ(e["upper_bound_dp"], b["upper_bound_dp"]);
  EXPECT_EQ(b["upper_bound_tp_layer"].size(), 26u);
  EXPECT_GE(e["lar_tp_hindsight"].get<double>(), e["lar_tp"].get<double>());

  eval.push_back("--no-bound");
  const CliResult without = run_semsim(eval);
  ASSERT_EQ(without.exit_code, 0) << describe(eval, without);
  const auto n = nlohmann::json::parse(without.out);
  EXPECT_FALSE(n.contains("upper_bound_tp"));
  EXPECT_EQ(n["lar_tp"], e["lar_tp"]);

  const std::vector<std::string> bad{"place", "bound", "--ep", "7", "--trace", trace_};
  const CliResult r = run_semsim(bad);
  EXPECT_EQ(r.exit_code, 2) << describe(bad, r);
  EXPECT_NE(r.err.find("--ep 7: must divide the trace's 64 experts"), std::string::npos) << describe(bad, r);
}

TEST_F(cliPlace, BadPolicyOrParameterExitsTwoAndWritesNothing) {
  const std::string plan = dir_ / "bad.semplace";
  struct Case {
    std::vector<std::string> extra;
    std::string message;
  };
  for (const Case& c :
       {Case{{"--policy", "semmo"}, "unknown placement policy 'semmo' (did you mean 'semmoe'?)"},
        Case{{"--policy", "semmoe", "--param", "tehta=1"}, "has no parameter 'tehta'"},
        Case{{"--policy", "semmoe", "--param", "theta=x"}, "'x' is not a number"},
        Case{{"--policy", "random", "--ep", "7"}, "--ep 7: must divide the profile's 64 experts"}}) {
    std::vector<std::string> args{"place", "--profile", dir_ / "prof", "--out", plan};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    if (std::find(args.begin(), args.end(), "--ep") == args.end()) args.insert(args.end(), {"--ep", "8"});
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << describe(args, r);
    EXPECT_FALSE(fs::exists(plan));
  }
}

TEST_F(cliPlace, EvalRejectsACorruptPlacementFileWithItsLine) {
  const std::string plan = dir_ / "broken.semplace";
  std::ofstream(plan) << "semsim-placement 1\npolicy contiguous\nmoe_layers x\n";
  const std::vector<std::string> eval{"place", "eval", plan, "--trace", trace_};
  const CliResult r = run_semsim(eval);
  EXPECT_EQ(r.exit_code, 2) << describe(eval, r);
  EXPECT_NE(r.err.find(plan + ":"), std::string::npos) << describe(eval, r);
}

// `place eval` places DP-style requests with the engine's own schedulers, so its DP LAR is the LAR a
// run replaying the same held-out requests (prefill only: every processed token is a routed token of
// the trace) reports with the same plan and scheduler: exactly, for load-blind semmoe_dp under Poisson
// arrivals, and for load-aware schedulers when every request arrives at once (the loads eval assumes).
TEST(cliPlaceEval, DpLarEqualsTheLarOfARunWithTheSameScheduler) {
  TempDir dir;
  const std::string model =
      "model: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n";
  std::ofstream(dir / "synthetic.yaml")
      << "schema: 1\n"
      << model
      << "workload:\n  requests: 160\n  arrival: {process: fixed, rate: 100}\n"
         "  input_len: {dist: uniform, min: 8, max: 48}\n  output_len: {dist: fixed, value: 1}\n"
         "  routing: {source: synthetic, vocabulary: 256, topics: 4}\n";
  const std::string trace = dir / "t.semtrace", plan = dir / "plan.semplace";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"trace", "synth", dir / "synthetic.yaml", "--requests", "160", "--out", trace},
           {"profile", trace, "--split", "0.5", "--seed", "1", "--out", dir / "prof"},
           {"place", "--policy", "semmoe", "--param", "shared_tokens=1", "--profile", dir / "prof", "--ep",
            "8", "--model", "deepseek-v2-lite", "--out", plan}}) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  struct Case {
    std::string scheduler;
    bool burst;  // every request arrives at time 0
  };
  std::set<double> lars;
  for (const Case& c :
       {Case{"semmoe_dp", false}, Case{"semmoe_dp_balanced", true}, Case{"shortest_queue", true}}) {
    SCOPED_TRACE(c.scheduler);
    const std::vector<std::string> eval{"place",     "eval",       plan,     "--trace", trace,
                                        "--split",   "0.5",        "--seed", "1",       "--scheduler",
                                        c.scheduler, "--no-bound", "--json"};
    const CliResult e = run_semsim(eval);
    ASSERT_EQ(e.exit_code, 0) << describe(eval, e);
    const auto evaluated = nlohmann::json::parse(e.out);
    const int requests = evaluated["requests"].get<int>();
    ASSERT_GT(requests, 40);

    if (c.burst) {
      std::ofstream arrivals(dir / "arrivals.txt");
      for (int i = 0; i < requests; ++i) arrivals << "0\n";
    }
    const std::string scenario = dir / (c.scheduler + ".yaml");
    std::ofstream(scenario)
        << "schema: 1\n"
        << model << "workload:\n  requests: " << requests << "\n"
        << (c.burst ? "  arrival: {process: trace, file: arrivals.txt}\n"
                    : "  arrival: {process: poisson, rate: 200}\n")
        << "  routing: {source: trace, file: t.semtrace, held_out: {split: 0.5, seed: 1}}\n"
           "policies: {placement: {file: plan.semplace}, request_scheduling: "
        << c.scheduler << "}\noutputs: {steps_csv: false}\n";
    const std::vector<std::string> run{"run", scenario, "--out", dir / c.scheduler};
    const CliResult r = run_semsim(run);
    ASSERT_EQ(r.exit_code, 0) << describe(run, r);
    const auto summary = nlohmann::json::parse(read_file(fs::path(dir / c.scheduler) / "summary.json"));
    EXPECT_EQ(summary["requests_completed"].get<int>(), requests);
    EXPECT_EQ(summary["lar"].get<double>(), evaluated["lar_dp"].get<double>());
    lars.insert(evaluated["lar_dp"].get<double>());
  }
  EXPECT_EQ(lars.size(), 3u) << "each scheduler places the requests its own way";
}

}  // namespace
}  // namespace semsim::cli_test
