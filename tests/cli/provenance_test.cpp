// Every output says what made it: a run folder keeps the scenario as it ran (scenario.resolved.yaml)
// and summary.json the semsim version and the workload's key facts; profiles and placements name
// the trace, split and seed they came from, and place eval / run say which evaluated requests the
// profile saw.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim::cli_test {
namespace {

TEST(cliProvenance, ARunFolderKeepsTheScenarioAsItRanAndRunningThatAgainGivesTheSameOutputs) {
  TempDir dir;
  const std::vector<std::string> run{
      "run",    "default",    "--set", "workload.requests=80",
      "--seed", "7",          "--set", "workload.arrival={process: gamma, rate: 40, cv: 2}",
      "--out",  dir / "first"};
  const CliResult first = run_semsim(run);
  ASSERT_EQ(first.exit_code, 0) << describe(run, first);
  const std::string resolved = read_file(fs::path(dir / "first") / "scenario.resolved.yaml");
  EXPECT_NE(resolved.find("# The scenario of this run as semsim 0.1.0"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("seed: 7"), std::string::npos) << resolved;
  EXPECT_EQ(resolved.find("semsim-override"), std::string::npos) << resolved;

  // Run again from elsewhere: the same requests, steps and key numbers.
  const std::vector<std::string> again{"run", fs::path(dir / "first") / "scenario.resolved.yaml", "--out",
                                       dir / "again"};
  const CliResult second = run_semsim(again, "/");
  ASSERT_EQ(second.exit_code, 0) << describe(again, second);
  for (const char* file : {"requests.csv", "steps.csv"})
    EXPECT_EQ(read_file(fs::path(dir / "again") / file), read_file(fs::path(dir / "first") / file)) << file;

  const auto summary = nlohmann::json::parse(read_file(fs::path(dir / "first") / "summary.json"));
  EXPECT_EQ(summary["semsim_version"].get<std::string>().rfind("0.1.0", 0), 0u);
  const auto& workload = summary["workload"];
  EXPECT_EQ(workload["requests"], 80);
  EXPECT_EQ(workload["arrival"]["process"], "gamma");
  EXPECT_EQ(workload["arrival"]["rate"], 40.0);
  EXPECT_EQ(workload["arrival"]["cv"], 2.0);
  EXPECT_EQ(workload["input_len"]["dist"], "fixed");
  // The offered tokens are every request's, as requests.csv lists them.
  long long input = 0, output = 0;
  const auto lines = split_lines(read_file(fs::path(dir / "first") / "requests.csv"));
  const auto header = lines.front();
  const auto column = [&](const std::string& name) {
    int index = 0;
    for (std::size_t at = 0, next; (next = header.find(',', at)) != std::string::npos || at < header.size();
         at = next + 1, ++index) {
      if (header.substr(at, next == std::string::npos ? std::string::npos : next - at) == name) return index;
      if (next == std::string::npos) break;
    }
    return -1;
  };
  const int input_column = column("input_tokens"), output_column = column("output_tokens");
  ASSERT_GE(input_column, 0);
  ASSERT_GE(output_column, 0);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream row(lines[i]);
    while (std::getline(row, field, ',')) fields.push_back(field);
    input += std::stoll(fields[input_column]);
    output += std::stoll(fields[output_column]);
  }
  EXPECT_EQ(lines.size(), 81u);
  EXPECT_EQ(workload["offered_tokens"]["input"], input);
  EXPECT_EQ(workload["offered_tokens"]["output"], output);
}

TEST(cliProvenance, PlacementsNameTheirProfiledRequestsAndEvaluationsSayWhichTheySaw) {
  TempDir dir;
  const std::string& model = kPlacementTestModel;
  const std::string trace = dir / "t.semtrace", plan = dir / "plan.semplace";
  const CliResult synth = synthesize_prefill_trace(dir, 100, 32, trace);
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"profile", trace, "--split", "0.2", "--seed", "3", "--out", dir / "profile"},
           {"place", "--policy", "semmoe", "--profile", dir / "profile", "--ep", "8", "--model",
            "deepseek-v2-lite", "--out", plan}}) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  const auto profile = nlohmann::json::parse(read_file(fs::path(dir / "profile") / "profile.json"));
  EXPECT_EQ(profile["source"]["trace"], trace);
  EXPECT_EQ(profile["source"]["split"], 0.2);
  EXPECT_EQ(profile["source"]["seed"], 3);
  EXPECT_EQ(profile["source"]["profiled"], 80);
  EXPECT_NE(read_file(plan).find("\nprofiled_on " + profile["source"]["trace_hash"].get<std::string>() +
                                 " 0.2 3 100 80 " + trace + "\n"),
            std::string::npos);

  // Evaluating the 80 % another split holds out: most of them were profiled, and it says how many.
  const std::vector<bool> profiled = ProfileSource{trace, "", 0.2, 3, 100, 80}.profiled_requests();
  const std::vector<bool> evaluated = held_out_requests(100, 0.8, 3);
  long long seen = 0;
  for (std::size_t r = 0; r < 100; ++r) seen += evaluated[r] && profiled[r];
  ASSERT_GT(seen, 40);
  auto evaluate = [&](const std::string& split, const std::string& seed) {
    const std::vector<std::string> args{"place",   "eval", plan,     "--trace", trace,
                                        "--split", split,  "--seed", seed,      "--no-bound"};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    std::vector<std::string> json_args = args;
    json_args.push_back("--json");
    return std::make_pair(r.out, nlohmann::json::parse(run_semsim(json_args).out)["profile_overlap"]);
  };
  const auto [text, overlap] = evaluate("0.8", "3");
  EXPECT_TRUE(overlap["same_trace"].get<bool>());
  EXPECT_EQ(overlap["evaluated_requests"], 80);
  EXPECT_EQ(overlap["profiled_requests"], seen);
  EXPECT_NE(text.find("Warning: " + std::to_string(seen) + " of the 80 requests were profiled"),
            std::string::npos)
      << text;
  const auto [unseen_text, unseen] = evaluate("0.2", "3");
  EXPECT_EQ(unseen["profiled_requests"], 0);
  EXPECT_EQ(unseen_text.find("Warning:"), std::string::npos) << unseen_text;

  // A run replaying the trace whole says so too; one replaying the held-out requests, that none were.
  for (const bool held_out : {false, true}) {
    std::ofstream(dir / "replay.yaml")
        << "schema: 1\n"
        << model << "workload:\n  requests: 100\n  arrival: {process: poisson, rate: 200}\n"
        << "  routing: {source: trace, file: t.semtrace"
        << (held_out ? ", held_out: {split: 0.2, seed: 3}" : "") << "}\n"
        << "policies: {placement: {file: plan.semplace}}\noutputs: {steps_csv: false}\n";
    const std::vector<std::string> args{"run", dir / "replay.yaml", "--out", dir / "replay"};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    const auto summary = nlohmann::json::parse(read_file(fs::path(dir / "replay") / "summary.json"));
    EXPECT_EQ(summary["profile_overlap"]["profiled_requests"], held_out ? 0 : 80) << held_out;
    EXPECT_EQ(r.out.find("Warning: 80 of the 100 requests were profiled") != std::string::npos, !held_out)
        << r.out;
  }
}

}  // namespace
}  // namespace semsim::cli_test
