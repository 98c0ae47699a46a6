// `semsim trace import|synth` and `semsim profile` end to end on a small DeepSeek-style fixture: outputs
// appear only on success, bad input exits 2 with one message and leaves nothing behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

// `prompts` prompt files of 3 tokens over DeepSeek-V2-Lite's 26 MoE layers (model layers 1..26).
void write_deepseek_fixture(const fs::path& dir, int prompts, int bad_expert = -1) {
  fs::create_directories(dir);
  for (int p = 1; p <= prompts; ++p) {
    std::ofstream out(dir / ("prompt_" + std::to_string(p) + "_data.csv"));
    out << "Layer ID,Batch Number,Token,Activated Expert IDs\n";
    for (int layer = 1; layer <= 26; ++layer)
      for (int t = 0; t < 3; ++t) {
        out << layer << ",0,tok" << (t + p) % 4 << ",\"[";
        for (int j = 0; j < 6; ++j)
          out << (j ? ", " : "") << (bad_expert >= 0 && j == 0 ? bad_expert : (t + p + 9 * j) % 64);
        out << "]\"\n";
      }
  }
}

std::vector<std::string> import_args(const fs::path& input, const std::string& out) {
  return {"trace", "import", "--from", "deepseek-csv", input.string(), "--model", "deepseek-v2-lite",
          "--out", out};
}

TEST(cliTrace, ImportThenProfileWritesTraceAndTables) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 10);
  const std::vector<std::string> import = import_args(dir.path() / "ds", dir / "ds.semtrace");
  const CliResult r = run_semsim(import);
  ASSERT_EQ(r.exit_code, 0) << describe(import, r);
  EXPECT_NE(r.out.find("10 requests, 30 routed tokens, 4 token texts"), std::string::npos) << r.out;

  const std::vector<std::string> profile{"profile", dir / "ds.semtrace", "--split", "0.2", "--seed", "3",
                                         "--out",   dir / "prof"};
  const CliResult p = run_semsim(profile);
  ASSERT_EQ(p.exit_code, 0) << describe(profile, p);
  // profile.json, tokens.tsv, token_experts.tsv, expert_load.csv, coactivation.csv, paths.semtrace,
  // table1.csv
  EXPECT_EQ(entries_under(dir.path() / "prof").size(), 7u);
  const auto table = split_lines(read_file(dir.path() / "prof" / "table1.csv"));
  ASSERT_FALSE(table.empty());
  EXPECT_TRUE(table[0].starts_with("layer,predictor,occurrences,unseen,keys,f1_p25")) << table[0];
  EXPECT_EQ(table.size(), 1u + 26 * 2 + 25);  // token + popularity per layer, previous_layer from layer 1
  const auto columns = std::count(table[0].begin(), table[0].end(), ',');
  for (const auto& row : table) EXPECT_EQ(std::count(row.begin(), row.end(), ','), columns) << row;
  // Same inputs and seed: byte-identical tables.
  const CliResult again =
      run_semsim({"profile", dir / "ds.semtrace", "--split", "0.2", "--seed", "3", "--out", dir / "prof2"});
  ASSERT_EQ(again.exit_code, 0);
  for (const char* name : {"table1.csv", "token_experts.tsv", "coactivation.csv"})
    EXPECT_EQ(read_file(dir.path() / "prof" / name), read_file(dir.path() / "prof2" / name)) << name;
}

TEST(cliTrace, ScenarioReplaysAnImportedTraceDeterministically) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 6);
  ASSERT_EQ(run_semsim(import_args(dir.path() / "ds", dir / "ds.semtrace")).exit_code, 0);
  std::ofstream(dir / "replay.yaml") << "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
                                        "parallelism: {ep: 8, attention: dp}\n"
                                        "workload:\n  requests: 12\n  arrival: {process: fixed, rate: 100}\n"
                                        "  output_len: {dist: fixed, value: 4}\n"
                                        "  routing: {source: trace, file: ds.semtrace}\n";
  for (const char* out : {"a", "b"}) {
    const std::vector<std::string> args{"run", dir / "replay.yaml", "--out", dir / out};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  const std::string summary = read_file(dir.path() / "a" / "summary.json");
  EXPECT_NE(summary.find("\"routing\": \"trace "), std::string::npos) << summary;
  EXPECT_NE(summary.find("(decode: resample_prompt)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"requests_completed\": 12"), std::string::npos) << summary;
  const auto requests = split_lines(read_file(dir.path() / "a" / "requests.csv"));
  ASSERT_EQ(requests.size(), 13u);
  EXPECT_NE(requests[1].find(",3,4,"), std::string::npos) << requests[1];  // prompt length 3 from the trace
  for (const char* name : {"requests.csv", "steps.csv"})
    EXPECT_EQ(read_file(dir.path() / "a" / name), read_file(dir.path() / "b" / name)) << name;
}

// A synthetic scenario's requests recorded as a trace: the same prompts (lengths) a run of it draws,
// routed by its generator, so that replaying the trace routes every prompt token as the run did.
TEST(cliTrace, SynthRecordsTheScenariosPromptsAndReplaysAsTheRun) {
  TempDir dir;
  std::ofstream(dir / "synthetic.yaml")
      << "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
         "parallelism: {ep: 8, attention: dp}\n"
         "workload:\n  requests: 6\n  arrival: {process: fixed, rate: 100}\n"
         "  input_len: {dist: uniform, min: 2, max: 9}\n"
         "  output_len: {dist: fixed, value: 1}\n"
         "  routing: {source: synthetic, vocabulary: 64, topics: 2}\n"
         "outputs: {steps_csv: false}\n";
  for (const char* out : {"a.semtrace", "b.semtrace"}) {
    const std::vector<std::string> args{"trace", "synth",  dir / "synthetic.yaml", "--requests", "6",
                                        "--out", dir / out};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    EXPECT_NE(r.out.find("6 synthetic requests"), std::string::npos) << r.out;
  }
  EXPECT_EQ(read_file(dir / "a.semtrace"), read_file(dir / "b.semtrace"));
  // Output length 1: a run is prefill only, so its summary (LAR, A2A bytes, loads) must not change
  // when the same prompts replay from the trace.
  std::ofstream(dir / "replay.yaml") << "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
                                        "parallelism: {ep: 8, attention: dp}\n"
                                        "workload:\n  requests: 6\n  arrival: {process: fixed, rate: 100}\n"
                                        "  output_len: {dist: fixed, value: 1}\n"
                                        "  routing: {source: trace, file: a.semtrace}\n"
                                        "outputs: {steps_csv: false}\n";
  for (const char* scenario : {"synthetic", "replay"}) {
    const std::vector<std::string> args{"run", dir / (std::string(scenario) + ".yaml"), "--out",
                                        dir / scenario};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  const auto summary = [&](const char* run) {
    nlohmann::json j = nlohmann::json::parse(read_file(dir.path() / run / "summary.json"));
    for (const char* differs : {"scenario", "routing", "wall_seconds"}) j.erase(differs);
    j["workload"].erase("input_len");  // the scenario's distribution, or the replayed trace's lengths
    return j;
  };
  EXPECT_EQ(read_file(dir.path() / "synthetic" / "requests.csv"),
            read_file(dir.path() / "replay" / "requests.csv"));
  EXPECT_EQ(summary("synthetic"), summary("replay"));

  const CliResult from_trace =
      run_semsim({"trace", "synth", dir / "replay.yaml", "--out", dir / "c.semtrace"});
  EXPECT_EQ(from_trace.exit_code, 2);
  EXPECT_NE(from_trace.err.find("trace synth records synthetic routing"), std::string::npos)
      << from_trace.err;
  const CliResult bad_name = run_semsim({"trace", "synth", dir / "synthetic.yaml", "--out", dir / "c.json"});
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("must end in .semtrace"), std::string::npos) << bad_name.err;
  EXPECT_FALSE(fs::exists(dir / "c.semtrace"));
  EXPECT_FALSE(fs::exists(dir / "c.json"));
}

// `profile` and `trace fit` draw their progress (per MoE layer, per evaluation of a candidate
// generator) on stderr only: stdout and their files are a run's without it. The fit's final count is
// the evaluations it reports: it counts its schedule ahead right.
TEST(cliTrace, ProfileAndFitDrawProgressOnStderrOnlyAndChangeNoOutput) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 10);
  const std::string trace = dir / "ds.semtrace";
  ASSERT_EQ(run_semsim(import_args(dir.path() / "ds", trace)).exit_code, 0);
  const std::regex duration("[0-9hms]+");
  auto ends_with_state = [&](const std::string& state, const std::string& expected) {
    return state.starts_with(expected) && std::regex_match(state.substr(expected.size()), duration);
  };

  const std::vector<std::string> profile_states =
      progress_states(run_in_each_progress_mode(dir.path() / "profile", {"profile", trace, "--split", "0.2",
                                                                         "--seed", "3", "--out", "prof"})[0]
                          .err);
  for (const char* file : {"table1.csv", "tokens.tsv", "token_experts.tsv", "expert_load.csv",
                           "coactivation.csv", "paths.semtrace", "profile.json"})
    for (const char* mode : {"never", "auto"})
      EXPECT_TRUE(read_file(dir.path() / "profile/always/prof" / file) ==
                  read_file(dir.path() / "profile" / mode / "prof" / file))
          << file << ", " << mode;
  ASSERT_GE(profile_states.size(), 2u);
  EXPECT_TRUE(profile_states.front().starts_with("profile: tables, layer 0/26, ")) << profile_states.front();
  EXPECT_TRUE(ends_with_state(profile_states.back(), "profile: held-out statistics, layer 26/26, "))
      << profile_states.back();

  const std::vector<std::string> fit_states =
      progress_states(run_in_each_progress_mode(dir.path() / "fit", {"trace", "fit", trace, "--split", "0.2",
                                                                     "--seed", "3", "--out", "fit"})[0]
                          .err);
  for (const char* file : {"fit.yaml", "fit_report.csv", "fit_summary.json"})
    for (const char* mode : {"never", "auto"})
      EXPECT_TRUE(read_file(dir.path() / "fit/always/fit" / file) ==
                  read_file(dir.path() / "fit" / mode / "fit" / file))
          << file << ", " << mode;
  const int evaluations =
      nlohmann::json::parse(read_file(dir.path() / "fit/always/fit/fit_summary.json"))["evaluations"]
          .get<int>();
  ASSERT_FALSE(fit_states.empty());
  EXPECT_TRUE(ends_with_state(fit_states.back(), "trace fit: evaluation " + std::to_string(evaluations) +
                                                     "/" + std::to_string(evaluations) + ", "))
      << fit_states.back();
}

// trace import takes --progress as the other long commands do: a line per file read, stderr only.
TEST(cliTrace, ImportDrawsProgressPerFileOnStderrOnly) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 4);
  const std::vector<CliResult> runs =
      run_in_each_progress_mode(dir.path() / "import", import_args(dir.path() / "ds", "ds.semtrace"));
  const std::vector<std::string> states = progress_states(runs[0].err);
  ASSERT_FALSE(states.empty()) << runs[0].err;
  EXPECT_TRUE(states.back().starts_with("trace import: file 4/4, ")) << states.back();
  EXPECT_EQ(read_file(dir.path() / "import/always/ds.semtrace"),
            read_file(dir.path() / "import/never/ds.semtrace"));
}

// More requests than the machine can hold the routing of are refused up front, naming --requests,
// instead of dying of bad_alloc part-way (10M requests of 512 tokens over 26 layers: terabytes).
TEST(cliTrace, SynthOfMoreRequestsThanMemoryHoldsIsRefusedBeforeAllocating) {
  TempDir dir;
  const std::vector<std::string> args{"trace",    "synth", "default",           "--requests",
                                      "10000000", "--out", dir / "big.semtrace"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_TRUE(r.err.starts_with("error: --requests 10000000: a trace of 10000000 requests (")) << r.err;
  EXPECT_NE(r.err.find("GB of memory, more than the"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "big.semtrace"));
}

// profile and trace fit into the folder of their earlier run replace its files (a killed run left
// some of them, or the user reran); a foreign file is still refused, and a dead run's staging
// folder is removed.
TEST(cliTrace, ProfileAndFitReplaceTheirEarlierOutputs) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 10);
  ASSERT_EQ(run_semsim(import_args(dir.path() / "ds", dir / "ds.semtrace")).exit_code, 0);
  for (const std::string command : {"profile", "fit"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args{command, dir / "ds.semtrace", "--out", dir / command};
    if (command == "fit") args.insert(args.begin(), "trace");
    const CliResult first = run_semsim(args);
    ASSERT_EQ(first.exit_code, 0) << describe(args, first);
    auto sorted_entries = [&] {
      auto entries = entries_under(dir.path() / command);
      std::sort(entries.begin(), entries.end());
      return entries;
    };
    const std::vector<std::string> outputs = sorted_entries();
    fs::create_directories(dir.path() / command / ".staging-2147483646");  // no process has this id
    const CliResult again = run_semsim(args);
    ASSERT_EQ(again.exit_code, 0) << describe(args, again);
    EXPECT_EQ(sorted_entries(), outputs);

    std::ofstream(dir.path() / command / "notes.txt") << "mine\n";
    const CliResult foreign = run_semsim(args);
    EXPECT_EQ(foreign.exit_code, 2) << describe(args, foreign);
    EXPECT_NE(foreign.err.find("holds 'notes.txt', which semsim did not write"), std::string::npos)
        << foreign.err;
  }
}

// A writer killed before its rename leaves its temporary beside the destination: the next write of
// that file removes it (a live process's temporary, or another file's, is left alone).
TEST(cliTrace, AKilledWritersTemporaryIsRemovedByTheNextWrite) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "ds", 2);
  const fs::path dead = dir.path() / ".partial-2147483646-ds.semtrace";
  const fs::path alive = dir.path() / (".partial-" + std::to_string(::getpid()) + "-ds.semtrace");
  const fs::path other = dir.path() / ".partial-2147483646-other.semtrace";
  for (const fs::path& leftover : {dead, alive, other}) std::ofstream(leftover) << "SEMTRA";
  const std::vector<std::string> import = import_args(dir.path() / "ds", dir / "ds.semtrace");
  const CliResult r = run_semsim(import);
  ASSERT_EQ(r.exit_code, 0) << describe(import, r);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(dir / "ds.semtrace"));
}

TEST(cliTrace, BadInputExits2AndWritesNothing) {
  TempDir dir;
  write_deepseek_fixture(dir.path() / "bad", 2, 64);
  const std::vector<std::string> import = import_args(dir.path() / "bad", dir / "bad.semtrace");
  const CliResult r = run_semsim(import);
  EXPECT_EQ(r.exit_code, 2) << describe(import, r);
  EXPECT_NE(r.err.find("prompt_1_data.csv:2: expert id 64 outside [0, 64)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "bad.semtrace"));
  EXPECT_EQ(entries_under(dir.path()).size(), 3u);  // bad/ and its two files: no partial output

  const CliResult format = run_semsim({"trace", "import", "--from", "deepseek-cvs", dir / "bad", "--model",
                                       "deepseek-v2-lite", "--out", dir / "x.semtrace"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("did you mean 'deepseek-csv'"), std::string::npos) << format.err;

  std::ofstream(dir / "junk.semtrace") << "not a trace\n";
  const CliResult junk = run_semsim({"profile", dir / "junk.semtrace", "--out", dir / "prof"});
  EXPECT_EQ(junk.exit_code, 2);
  EXPECT_NE(junk.err.find("not a semsim routing trace"), std::string::npos) << junk.err;
  EXPECT_FALSE(fs::exists(dir / "prof"));
}

// DeepSeek-V2-Lite's shape with DeepSeek-V3's kind of group limit: 8 groups of 8 experts, a token's 6
// from at most 2 of them. Written to `dir`/grouped.yaml; returns its path.
std::string grouped_model_file(const TempDir& dir) {
  std::string text = read_file(fs::path(SEMSIM_SOURCE_DIR) / "models/presets/models/deepseek-v2-lite.yaml");
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"name: deepseek-v2-lite", "name: grouped"},
                                                        {"groups: 1", "groups: 8"},
                                                        {"topk_groups: 1", "topk_groups: 2"}}) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  std::ofstream(dir / "grouped.yaml") << text;
  return dir / "grouped.yaml";
}

// `prompts` prompt files of 3 tokens over 26 MoE layers whose 6 experts lie in groups 2t and 2t + 1
// (t the token's position): within a limit of 2 of 8 groups of 8.
void write_grouped_fixture(const fs::path& dir, int prompts) {
  fs::create_directories(dir);
  for (int p = 1; p <= prompts; ++p) {
    std::ofstream out(dir / ("prompt_" + std::to_string(p) + "_data.csv"));
    out << "Layer ID,Batch Number,Token,Activated Expert IDs\n";
    for (int layer = 1; layer <= 26; ++layer)
      for (int t = 0; t < 3; ++t) {
        out << layer << ",0,tok" << t << ",\"[";
        for (int j = 0; j < 6; ++j) out << (j ? ", " : "") << 16 * t + (j + p + layer) % 16;
        out << "]\"\n";
      }
  }
}

// A group-limited model's traces are checked: routings spanning more groups than its gate allows are
// counted by import and replay, with a warning (not a failure); traces within the limit draw none.
TEST(cliTrace, GroupLimitedModelCountsRoutingsBeyondItsGroups) {
  TempDir dir;
  const std::string model = grouped_model_file(dir);
  // The default fixture's experts are 9 apart: every routing spans 6 groups.
  const auto import_trace = [&](const std::string& name) {
    const std::vector<std::string> args{"trace",        "import",   "--from",
                                        "deepseek-csv", dir / name, "--model",
                                        model,          "--out",    dir / (name + ".semtrace")};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return r;
  };
  write_deepseek_fixture(dir.path() / "wide", 10);
  const CliResult w = import_trace("wide");
  ASSERT_EQ(w.exit_code, 0);
  EXPECT_NE(w.out.find("780 of 780 routings (30 of 30 tokens) span more than 2 of the 8 expert groups"),
            std::string::npos)
      << w.out;
  EXPECT_NE(w.err.find("warning: 780 of the 780 routings (30 of 30 tokens) in " + dir / "wide" +
                       " span more than 2 of the 8 expert groups (up to 6): the trace was not recorded with "
                       "group-limited routing"),
            std::string::npos)
      << w.err;
  write_grouped_fixture(dir.path() / "narrow", 4);
  const CliResult n = import_trace("narrow");
  ASSERT_EQ(n.exit_code, 0);
  EXPECT_NE(n.out.find("0 of 312 routings (0 of 12 tokens) span more than 2 of the 8 expert groups"),
            std::string::npos)
      << n.out;
  EXPECT_EQ(n.err, "");

  for (const char* trace : {"wide", "narrow"}) {
    std::ofstream(dir / "replay.yaml") << "schema: 1\nmodel: grouped.yaml\ncluster: h200-1x8\n"
                                          "parallelism: {ep: 8, attention: dp}\n"
                                          "workload:\n  requests: 4\n  arrival: {process: fixed, rate: 100}\n"
                                          "  output_len: {dist: fixed, value: 2}\n"
                                          "  routing: {source: trace, file: "
                                       << trace << ".semtrace}\noutputs: {steps_csv: false}\n";
    const std::vector<std::string> args{"run", dir / "replay.yaml", "--out",
                                        dir / (std::string(trace) + "-run")};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    const auto summary =
        nlohmann::json::parse(read_file(dir.path() / (std::string(trace) + "-run") / "summary.json"));
    const auto& groups = summary["group_limit"];
    EXPECT_EQ(groups["groups"], 8);
    EXPECT_EQ(groups["topk_groups"], 2);
    const bool is_wide = std::string(trace) == "wide";
    EXPECT_EQ(groups["routings"], is_wide ? 780 : 312);
    EXPECT_EQ(groups["violating_routings"], is_wide ? 780 : 0);
    EXPECT_EQ(groups["violating_tokens"], is_wide ? 30 : 0);
    EXPECT_EQ(groups["most_groups"], is_wide ? 6 : 2);
    EXPECT_EQ(r.out.find("Warning: ") != std::string::npos, is_wide) << r.out;
    if (is_wide) {
      EXPECT_NE(
          r.out.find("in the replayed trace span more than 2 of the 8 expert groups (up to 6): the trace "
                     "was not recorded with group-limited routing"),
          std::string::npos)
          << r.out;
    }
  }
}

// Synthetic routing of a group-limited model keeps to the limit: its recorded prompts replay without
// a violation; a model without a limit reports no check at all.
TEST(cliTrace, GroupLimitedSynthRecordsRoutingWithinTheLimit) {
  TempDir dir;
  grouped_model_file(dir);
  for (const char* model : {"grouped.yaml", "deepseek-v2-lite"}) {
    std::ofstream(dir / "synthetic.yaml")
        << "schema: 1\nmodel: " << model
        << "\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n"
           "workload:\n  requests: 6\n  arrival: {process: fixed, rate: 100}\n"
           "  input_len: {dist: uniform, min: 2, max: 9}\n"
           "  output_len: {dist: fixed, value: 1}\n"
           "  routing: {source: synthetic, vocabulary: 64, topics: 2}\n"
           "outputs: {steps_csv: false}\n";
    const std::vector<std::string> synth{"trace", "synth", dir / "synthetic.yaml", "--requests",
                                         "6",     "--out", dir / "synth.semtrace"};
    ASSERT_EQ(run_semsim(synth).exit_code, 0);
    std::ofstream(dir / "replay.yaml") << "schema: 1\nmodel: " << model
                                       << "\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp}\n"
                                          "workload:\n  requests: 6\n  arrival: {process: fixed, rate: 100}\n"
                                          "  output_len: {dist: fixed, value: 1}\n"
                                          "  routing: {source: trace, file: synth.semtrace}\n"
                                          "outputs: {steps_csv: false}\n";
    const std::vector<std::string> run{"run", dir / "replay.yaml", "--out", dir / "run"};
    const CliResult r = run_semsim(run);
    ASSERT_EQ(r.exit_code, 0) << describe(run, r);
    const auto groups = nlohmann::json::parse(read_file(dir.path() / "run" / "summary.json"))["group_limit"];
    if (std::string(model) == "grouped.yaml") {
      EXPECT_GT(groups["routings"].get<long long>(), 0);
      EXPECT_EQ(groups["violating_routings"], 0);
      EXPECT_LE(groups["most_groups"].get<int>(), 2);
      EXPECT_NE(r.out.find("Replayed trace against the group limit: 0 of "), std::string::npos) << r.out;
    } else {
      EXPECT_TRUE(groups["groups"].is_null());
      EXPECT_EQ(r.out.find("group limit"), std::string::npos) << r.out;
    }
    EXPECT_EQ(r.out.find("Warning: "), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace semsim::cli_test
