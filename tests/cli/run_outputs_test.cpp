// `semsim run`: determinism of the output files, the shape of summary.json, output switches, and the
// flow-level network agreeing with the bottleneck model on one node.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

// Runs `semsim run default ARGS --out DIR` and requires success.
CliResult run_default(const std::string& out_dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"run", "default"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--out", out_dir});
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(r.err, "") << describe(args, r);
  return r;
}

Json read_summary(const std::string& dir) {
  return Json::parse(read_file(fs::path(dir) / "summary.json"));
}

Json without_wall_time(Json j) {
  j.erase("wall_seconds");
  return j;
}

TEST(cliRunOutputs, SameSeedGivesIdenticalOutputsAndAnotherSeedDiffers) {
  TempDir tmp;
  const std::string a = tmp / "a", b = tmp / "b", c = tmp / "c";
  run_default(a, {"--set", "workload.requests=200"});
  run_default(b, {"--set", "workload.requests=200"});
  run_default(c, {"--set", "workload.requests=200", "--seed", "7"});
  if (testing::Test::HasFailure()) return;

  for (const char* file : {"requests.csv", "steps.csv"}) {
    const std::string first = read_file(fs::path(a) / file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_TRUE(first == read_file(fs::path(b) / file))
        << file << " differs between two runs with the same seed";
  }
  const Json sa = read_summary(a), sb = read_summary(b), sc = read_summary(c);
  EXPECT_EQ(without_wall_time(sa), without_wall_time(sb)) << "summary.json differs beyond wall_seconds";
  EXPECT_NE(read_file(fs::path(a) / "requests.csv"), read_file(fs::path(c) / "requests.csv"))
      << "--seed 7 gave the same requests.csv as seed 1";
  EXPECT_EQ(sa["seed"], 1);
  EXPECT_EQ(sc["seed"], 7);
  EXPECT_EQ(sc["requests_completed"], 200);
}

TEST(cliRunOutputs, SummaryHasTheDocumentedKeysAndCounts) {
  TempDir tmp;
  const std::string out = tmp / "out";
  const CliResult r = run_default(out, {"--set", "workload.requests=200"});
  if (testing::Test::HasFailure()) return;
  EXPECT_NE(r.out.find("Outputs in " + out + "/"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Successful requests:"), std::string::npos) << r.out;

  // Exactly the four outputs: no staging folder or temporary file left behind.
  std::vector<std::string> entries = entries_under(out);
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"requests.csv", "scenario.resolved.yaml", "steps.csv",
                                               "summary.json"}));

  const Json s = read_summary(out);
  for (const char* key :
       {"simulated_seconds", "wall_seconds", "requests_completed", "lar", "imbalance", "mean_step_seconds"}) {
    ASSERT_TRUE(s.contains(key)) << key;
    EXPECT_TRUE(s[key].is_number()) << key;
  }
  for (const char* key : {"input", "output", "total"}) {
    ASSERT_TRUE(s["throughput_tok_s"].contains(key)) << "throughput_tok_s." << key;
    EXPECT_GT(s["throughput_tok_s"][key].get<double>(), 0) << key;
  }
  for (const char* dist : {"ttft_s", "tpot_s", "e2e_s"})
    for (const char* key : {"mean", "p50", "p90", "p99"}) {
      ASSERT_TRUE(s.contains(dist) && s[dist].contains(key)) << dist << "." << key;
      EXPECT_GT(s[dist][key].get<double>(), 0) << dist << "." << key;
    }
  for (const char* key : {"scale_up", "scale_out"}) {
    ASSERT_TRUE(s["a2a_bytes"].contains(key)) << "a2a_bytes." << key;
    EXPECT_GE(s["a2a_bytes"][key].get<double>(), 0) << key;
  }
  EXPECT_EQ(s["requests_completed"], 200);
  EXPECT_GT(s["simulated_seconds"].get<double>(), 0);
  EXPECT_GE(s["wall_seconds"].get<double>(), 0);
  const double total = s["throughput_tok_s"]["total"];
  const double parts =
      s["throughput_tok_s"]["input"].get<double>() + s["throughput_tok_s"]["output"].get<double>();
  EXPECT_NEAR(total, parts, 1e-6 * total);

  // One header line plus one line per request, all completed, none with a cached prefix (no cache).
  const auto request_lines = split_lines(read_file(fs::path(out) / "requests.csv"));
  EXPECT_EQ(request_lines.size(), 201u);
  EXPECT_TRUE(request_lines[0].ends_with(",completed,cached_tokens")) << request_lines[0];
  for (std::size_t i = 1; i < request_lines.size(); ++i)
    EXPECT_TRUE(request_lines[i].ends_with(",1,0")) << "request not completed: " << request_lines[i];
  const auto step_lines = split_lines(read_file(fs::path(out) / "steps.csv"));
  EXPECT_EQ(step_lines.size(), s["steps"].get<std::size_t>() + 1);
}

// Every line of the console summary keeps a space between its label and its value, labels longer
// than bench_serving's 40 columns too ("Saturated prefill / decode tok/s per node:300538.45" had none).
// workload.sessions: requests.csv names each request's session and turn, summary.json counts the
// sessions and the early turns, and the console says both; without sessions neither column nor line.
TEST(cliRunOutputs, SessionsNameEachTurnAndCountTheEarlyOnes) {
  TempDir tmp;
  const std::vector<std::string> session{
      "--set",
      "workload.requests=6",
      "--set",
      "workload.arrival={process: fixed, rate: 1}",
      "--set",
      "workload.sessions={turns: {dist: fixed, value: 3}, think_time: {dist: fixed, seconds: 0.01}}"};
  const CliResult r = run_default(tmp / "sessions", session);
  const std::string csv = read_file(fs::path(tmp / "sessions") / "requests.csv");
  EXPECT_TRUE(
      csv.starts_with("id,arrival_s,rank,input_tokens,output_tokens,ttft_s,tpot_s,e2e_s,completed,"
                      "cached_tokens,session,turn\n"))
      << csv.substr(0, 120);
  EXPECT_EQ(column_of(csv, "session"), std::vector<double>({0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(column_of(csv, "turn"), std::vector<double>({0, 1, 2, 0, 1, 2}));
  const Json sessions = read_summary(tmp / "sessions")["workload"]["sessions"];
  EXPECT_EQ(sessions["sessions"], 2);
  EXPECT_EQ(sessions["early_turns"], 4);  // 10 ms after the turn before: none had finished
  EXPECT_EQ(sessions["think_time"], Json({{"dist", "fixed"}, {"seconds", 0.01}}));
  EXPECT_NE(r.out.find("Sessions / early later turns:           2 / 4 of 4"), std::string::npos) << r.out;

  const CliResult plain = run_default(tmp / "plain", {"--set", "workload.requests=6"});
  EXPECT_TRUE(read_summary(tmp / "plain")["workload"]["sessions"].is_null());
  EXPECT_EQ(plain.out.find("Sessions"), std::string::npos);
  EXPECT_TRUE(read_file(fs::path(tmp / "plain") / "requests.csv").starts_with("id,") &&
              read_file(fs::path(tmp / "plain") / "requests.csv").find(",session") == std::string::npos);
}

TEST(cliRunOutputs, EveryConsoleLabelIsFollowedByASpace) {
  TempDir tmp;
  const std::vector<std::string> args{"run",   "default",
                                      "--set", "workload.requests=60",
                                      "--set", "workload.arrival.rate=1000",
                                      "--set", "serving.max_running_requests=4",
                                      "--out", tmp / "out"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("Saturated prefill / decode tok/s per node: "), std::string::npos) << r.out;
  const std::regex glued("^[A-Za-z][^:]*:[^ :/]");
  for (const std::string& line : split_lines(r.out)) EXPECT_FALSE(std::regex_search(line, glued)) << line;
}

TEST(cliRunOutputs, OutputSwitchesLeaveOutTheCsvFiles) {
  TempDir tmp;
  const std::string out = tmp / "out";
  run_default(out, {"--set", "workload.requests=10", "--set", "outputs.requests_csv=false", "--set",
                    "outputs.steps_csv=false"});
  std::vector<std::string> entries = entries_under(out);
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"scenario.resolved.yaml", "summary.json"}));
}

// Nothing overlaps without two-batch overlap, and a lone collective takes its closed form in both.
TEST(cliRunOutputs, FlowFidelityEqualsBottleneckWithoutOverlap) {
  TempDir tmp;
  const std::string bottleneck = tmp / "bottleneck", flow = tmp / "flow";
  run_default(bottleneck, {"--set", "workload.requests=50"});
  run_default(flow, {"--set", "workload.requests=50", "--set", "network.fidelity=flow"});
  if (testing::Test::HasFailure()) return;
  const Json b = read_summary(bottleneck), f = read_summary(flow);
  EXPECT_EQ(b["fidelity"], "bottleneck");
  EXPECT_EQ(f["fidelity"], "flow");
  const double tb = b["mean_step_seconds"], tf = f["mean_step_seconds"];
  ASSERT_GT(tb, 0);
  EXPECT_EQ(tf, tb);
  EXPECT_EQ(read_file(fs::path(flow) / "steps.csv"), read_file(fs::path(bottleneck) / "steps.csv"));
  EXPECT_EQ(f["requests_completed"], 50);
}

// A run its time limit stops says so: how many requests arrived, finished or did not; latencies over
// the requests that have one, null where none has; requests.csv lists only those that arrived.
TEST(cliRunOutputs, ARunStoppedByItsTimeLimitSaysSo) {
  TempDir tmp;
  const std::string out = tmp / "out";
  const CliResult r =
      run_default(out, {"--set", "serving.time_limit=0.05", "--set", "workload.arrival.rate=2000"});
  const Json s = read_summary(out);
  EXPECT_EQ(s["stopped_at"], "time_limit");
  EXPECT_EQ(s["requests"], 2000);
  const int arrived = s["requests_arrived"];
  EXPECT_GT(arrived, 0);
  EXPECT_LT(arrived, 2000);
  EXPECT_EQ(s["requests_completed"].get<int>() + s["requests_unfinished"].get<int>(), arrived);
  EXPECT_GT(s["ttft_s"]["count"].get<int>(), 0);
  EXPECT_TRUE(s["ttft_s"]["mean"].is_number());
  EXPECT_EQ(s["e2e_s"]["count"], 0);
  EXPECT_TRUE(s["e2e_s"]["mean"].is_null());
  EXPECT_EQ(split_lines(read_file(fs::path(out) / "requests.csv")).size(),
            static_cast<std::size_t>(arrived) + 1);
  EXPECT_NE(r.out.find("stopped at the time limit: " + std::to_string(arrived) + " arrived"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Mean E2E Latency (ms):                  n/a"), std::string::npos) << r.out;

  // A run that completes is not stopped, and counts every request.
  const std::string full = tmp / "full";
  run_default(full, {"--set", "workload.requests=20"});
  const Json f = read_summary(full);
  EXPECT_EQ(f["stopped_at"], "");
  EXPECT_EQ(f["requests_arrived"], 20);
  EXPECT_EQ(f["requests_unfinished"], 0);
  EXPECT_EQ(f["e2e_s"]["count"], 20);
}

// What a run's progress line ends with: "run: 200/200 requests done, 10.57 s simulated, 1s".
std::string final_progress_pattern(const Json& summary) {
  char simulated[32];
  std::snprintf(simulated, sizeof simulated, "%.2f", summary["simulated_seconds"].get<double>());
  return "run: " + std::to_string(summary["requests_completed"].get<int>()) + "/" +
         std::to_string(summary["requests"].get<int>()) + " requests done, " + simulated +
         " s simulated, [0-9hms]+";
}

// --progress always draws the run's progress on stderr and nothing else changes: stdout and every
// output file are a run's without it. By default (stderr is no terminal here) nothing is drawn.
TEST(cliRunOutputs, ProgressIsDrawnOnStderrOnlyAndChangesNoOutput) {
  TempDir tmp;
  const std::vector<CliResult> runs = run_in_each_progress_mode(
      tmp.path(),
      {"run", "default", "--set", "workload.requests=200", "--result-json", "result.json", "--out", "out"});
  for (const std::string mode : {"never", "auto"}) {
    for (const char* file : {"out/requests.csv", "out/steps.csv", "result.json"})
      EXPECT_TRUE(read_file(tmp.path() / "always" / file) == read_file(tmp.path() / mode / file)) << file;
    EXPECT_EQ(without_wall_time(read_summary(tmp / "always/out")),
              without_wall_time(read_summary(tmp / mode + "/out")));
  }

  const std::vector<std::string> states = progress_states(runs[0].err);
  ASSERT_GE(states.size(), 2u) << runs[0].err;  // the first step's state at once, the final one
  const std::regex drawn(
      R"(run: [0-9]+/200 requests done, [0-9]+\.[0-9]{2} s simulated, [0-9hms]+, ETA ([0-9hms]+|--))");
  for (std::size_t i = 0; i + 1 < states.size(); ++i)
    EXPECT_TRUE(std::regex_match(states[i], drawn)) << states[i];
  EXPECT_TRUE(
      std::regex_match(states.back(), std::regex(final_progress_pattern(read_summary(tmp / "always/out")))))
      << states.back();
  EXPECT_TRUE(states.back().starts_with("run: 200/200 requests done, ")) << states.back();
  // Into a log (stderr is no terminal here) each state is a line of its own: no carriage return.
  EXPECT_EQ(std::count(runs[0].err.begin(), runs[0].err.end(), '\r'), 0) << runs[0].err;
  EXPECT_EQ(std::count(runs[0].err.begin(), runs[0].err.end(), '\n'), static_cast<long>(states.size()));
  EXPECT_TRUE(runs[0].err.ends_with("\n"));
}

// A run its time limit stops ends its progress at the requests done by then, at the limit.
TEST(cliRunOutputs, ProgressOfARunStoppedByItsTimeLimitEndsThere) {
  TempDir tmp;
  const std::string out = tmp / "out";
  const std::vector<std::string> args{"run",        "default",
                                      "--set",      "serving.time_limit=0.05",
                                      "--set",      "workload.arrival.rate=2000",
                                      "--progress", "always",
                                      "--out",      out};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const Json s = read_summary(out);
  ASSERT_EQ(s["stopped_at"], "time_limit");
  const std::vector<std::string> states = progress_states(r.err);
  ASSERT_FALSE(states.empty());
  EXPECT_TRUE(std::regex_match(states.back(), std::regex(final_progress_pattern(s)))) << states.back();
}

// A second run into the same --out replaces the first's outputs, leaving none of them stale; a
// folder holding anything semsim did not write is refused and left as it was.
TEST(cliRunOutputs, ARunReplacesAnEarlierRunsOutputsAndRefusesAForeignFolder) {
  TempDir tmp;
  const std::string out = tmp / "out";
  run_default(out, {"--set", "workload.requests=10", "--set", "outputs.layers_csv=true"});
  ASSERT_TRUE(fs::exists(fs::path(out) / "layers.csv"));
  run_default(out, {"--set", "workload.requests=12", "--set", "outputs.steps_csv=false"});
  EXPECT_FALSE(fs::exists(fs::path(out) / "layers.csv"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "steps.csv"));
  EXPECT_EQ(read_summary(out)["requests"], 12);

  const fs::path foreign = tmp / "foreign";
  fs::create_directories(foreign);
  std::ofstream(foreign / "notes.txt") << "mine\n";
  const std::vector<std::string> args{"run", "default", "--out", foreign.string()};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_NE(r.err.find("holds 'notes.txt', which semsim did not write"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(foreign / "notes.txt"), "mine\n");
  EXPECT_FALSE(fs::exists(foreign / "summary.json"));
}

// What a run killed by SIGKILL left (its staging folder with partial CSVs, a staged timeline beside
// its destination) is removed by the next run into the same places; a live process's is not.
TEST(cliRunOutputs, AKilledRunsLeftoversAreRemovedByTheNextRun) {
  TempDir tmp;
  const fs::path out = tmp / "out";
  // No process has these ids (above any pid_max); the test's own process is alive.
  const std::string dead = ".staging-2147483646", alive = ".staging-" + std::to_string(::getpid());
  fs::create_directories(out / dead);
  std::ofstream(out / dead / "requests.csv") << "id,arr";
  fs::create_directories(out / alive);
  std::ofstream(tmp / ".partial-2147483646-timeline.json") << "{\"traceEv";
  run_default(out.string(), {"--set", "workload.requests=5", "--timeline", tmp / "timeline.json"});
  EXPECT_FALSE(fs::exists(out / dead));
  EXPECT_FALSE(fs::exists(tmp / ".partial-2147483646-timeline.json"));
  EXPECT_TRUE(fs::exists(out / alive));
  EXPECT_TRUE(fs::exists(tmp / "timeline.json"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));
}

}  // namespace
}  // namespace semsim::cli_test
