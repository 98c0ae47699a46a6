// `semsim place`, `semsim place eval` and `semsim place bound` end to end on a small DeepSeek-style trace: a
// placement file appears only on success, eval prints the documented JSON keys, bad input exits 2 with one
// message.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
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
  // --balance 100: no load cap, so each request takes its best-voted device. No triangle-cut
  // rounds: the bounds below hold of the looser bound too, which takes a fraction of the time.
  const std::vector<std::string> eval{
      "place",   "eval", "--bound-rounds", "0", plan,        "--trace", trace_,
      "--split", "0.5",  "--seed",         "1", "--balance", "100",     "--json"};
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

// A plan of one model evaluated on another model's trace: the error names both files and the model.
TEST_F(cliPlace, EvalOfAnotherModelsTraceNamesBothFiles) {
  const std::string plan = dir_ / "contiguous.semplace";
  run_ok({"place", "--policy", "contiguous", "--profile", dir_ / "prof", "--ep", "8", "--out", plan});
  const std::string mixtral = SEMSIM_SOURCE_DIR "/tests/data/bad-inputs/valid/trace.semtrace.txt";
  const std::vector<std::string> eval{"place", "eval", plan, "--trace", mixtral, "--no-bound"};
  const CliResult r = run_semsim(eval);
  EXPECT_EQ(r.exit_code, 2) << describe(eval, r);
  EXPECT_EQ(r.err,
            "error: " + plan + " with trace " + mixtral +
                " (model mixtral-8x7b): the trace has 32 MoE layers of 8 experts, the placement 26 of 64\n");
  EXPECT_EQ(r.out, "");
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

// The progress of `place` (per MoE layer of the layer-by-layer policies), `place eval` and `place
// bound` is drawn on stderr only: stdout and the placement file are a run's without it.
TEST_F(cliPlace, ProgressIsDrawnOnStderrOnlyAndChangesNoOutput) {
  const std::regex duration("[0-9hms]+");
  // On 2 devices CBC solves every layer to optimality at once: the same plan whatever the clock.
  for (const auto& [policy, final_state] : std::vector<std::pair<std::string, std::string>>{
           {"ilp", "layer 26/26"}, {"semmoe", "layer solve 52/52"}}) {
    const std::vector<CliResult> runs = run_in_each_progress_mode(
        dir_.path() / policy,
        {"place", "--policy", policy, "--profile", dir_ / "prof", "--ep", "2", "--out", "plan.semplace"});
    for (const char* mode : {"never", "auto"})
      EXPECT_EQ(without_wall_clock(read_file(fs::path(dir_ / policy) / "always" / "plan.semplace")),
                without_wall_clock(read_file(fs::path(dir_ / policy) / mode / "plan.semplace")))
          << policy << ", " << mode;
    const std::vector<std::string> states = progress_states(runs[0].err);
    ASSERT_FALSE(states.empty()) << policy;
    const std::string prefix = "place " + policy + ": " + final_state + ", ";
    EXPECT_TRUE(states.back().starts_with(prefix) &&
                std::regex_match(states.back().substr(prefix.size()), duration))
        << states.back();
  }

  const std::string plan = dir_ / "ilp/never/plan.semplace";
  const std::vector<std::string> requests{"--trace", trace_, "--split",        "0.5",
                                          "--seed",  "1",    "--bound-rounds", "0"};
  std::vector<std::string> eval{"place", "eval", plan}, bound{"place", "bound", "--ep", "2"};
  eval.insert(eval.end(), requests.begin(), requests.end());
  bound.insert(bound.end(), requests.begin(), requests.end());
  for (const auto& [name, args, first, last] :
       std::vector<std::tuple<std::string, std::vector<std::string>, std::string, std::string>>{
           {"eval", eval, "place eval: evaluation, layer 0/26, ", "place eval: bound, layer 26/26, "},
           {"bound", bound, "place bound: bound, layer 0/26, ", "place bound: bound, layer 26/26, "}}) {
    const std::vector<std::string> states =
        progress_states(run_in_each_progress_mode(dir_.path() / name, args)[0].err);
    ASSERT_GE(states.size(), 2u) << name;
    EXPECT_TRUE(states.front().starts_with(first)) << states.front();
    EXPECT_TRUE(states.back().starts_with(last) &&
                std::regex_match(states.back().substr(last.size()), duration))
        << states.back();
  }
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
        // Whole-number parameters beyond an int were cast (steps 1e18 ran as -2147483648).
        Case{{"--policy", "semmoe", "--param", "steps=1e18"},
             "parameter 'steps' must be a whole number in [1, 1048576], got 1e+18"},
        Case{{"--policy", "semmoe", "--param", "passes=2.5"},
             "parameter 'passes' must be a whole number in [1, 1024], got 2.5"},
        Case{
            {"--policy", "random", "--ep", "7"},
            "--ep 7: EP size 7 does not divide the 64 routed experts: give 6 redundant experts (70 slots per "
            "layer, 10 per device), as --param redundant=6"},
        Case{
            {"--policy", "coact", "--ep", "7"},
            "and placement policy 'coact' puts an equal number of them on every device (its redundant "
            "slots only add replicas): give 6 redundant experts (70 slots per layer, 10 per device) with one "
            "that splits them unevenly (contiguous, round_robin, random, eplb, semmoe), e.g. --policy "
            "contiguous --param redundant=6"}}) {
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

// The slot lines of a plain placement file: "LAYER DEVICE EXPERT..." after `slots`, up to the tables.
std::vector<std::string> slot_lines(const std::string& plan) {
  std::vector<std::string> lines;
  bool in_slots = false;
  for (const std::string& line : split_lines(read_file(plan))) {
    if (in_slots && (line.empty() || line[0] < '0' || line[0] > '9')) break;
    if (in_slots) lines.push_back(line);
    in_slots = in_slots || line == "slots";
  }
  return lines;
}

TEST_F(cliPlace, SglangExportThenImportGivesBackThePlansSlots) {
  const std::string plan = dir_ / "eplb.semplace", location = dir_ / "eplb.json";
  // EPLB with one redundant expert per device: 72 slots, 9 on each of the 8 GPUs, replicas included.
  run_ok({"place", "--policy", "eplb", "--profile", dir_ / "prof", "--ep", "8", "--out", plan});
  const std::vector<std::string> exported{"place",   "export",           plan,    "--format", "sglang",
                                          "--model", "deepseek-v2-lite", "--out", location};
  const CliResult e = run_semsim(exported);
  ASSERT_EQ(e.exit_code, 0) << describe(exported, e);
  EXPECT_NE(
      e.out.find("27 layers (26 MoE, 1 dense with SGLang's trivial map) x 72 physical experts (8 GPUs x 9 "
                 "slots, 8 redundant)"),
      std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("start SGLang with: --ep-size 8 --ep-num-redundant-experts 8 --init-expert-location " +
                       location),
            std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("not exported: the token->device table T/T_p and the inter-layer table A/A_p"),
            std::string::npos)
      << e.out;
  const auto map = nlohmann::json::parse(read_file(location));
  ASSERT_EQ(map.size(), 1u);
  const auto& rows = map.at("physical_to_logical_map");
  ASSERT_EQ(rows.size(), 27u);
  for (int p = 0; p < 72; ++p) EXPECT_EQ(rows[0][p], p % 64) << "dense layer 0, physical expert " << p;
  EXPECT_EQ(rows[1].size(), 72u);

  const std::string back = dir_ / "back.semplace";
  const std::vector<std::string> imported{"place",   "import",           location, "--format", "sglang",
                                          "--model", "deepseek-v2-lite", "--ep",   "8",        "--out",
                                          back};
  const CliResult i = run_semsim(imported);
  ASSERT_EQ(i.exit_code, 0) << describe(imported, i);
  EXPECT_NE(i.out.find("26 MoE layers x 64 experts on 8 GPUs (9 slots each, 8 redundant)"), std::string::npos)
      << i.out;
  const std::vector<std::string> slots = slot_lines(plan);
  ASSERT_EQ(slots.size(), 26u * 8);
  EXPECT_EQ(slot_lines(back), slots);
  EXPECT_NE(read_file(back).find("\npolicy sglang_import\n"), std::string::npos);

  // Without --out it only checks.
  const std::vector<std::string> check{"place",   "import",           location, "--format", "sglang",
                                       "--model", "deepseek-v2-lite", "--ep",   "8"};
  const CliResult c = run_semsim(check);
  ASSERT_EQ(c.exit_code, 0) << describe(check, c);
  EXPECT_NE(c.out.find("checked only"), std::string::npos) << c.out;
}

// At an EP size that does not divide the 64 experts, contiguous with redundant experts is SGLang's
// trivial layout: EP24 with 8 redundant, 72 slots, physical expert p holds logical p mod 64.
TEST_F(cliPlace, ContiguousWithRedundantExpertsExportsSglangsTrivialLayout) {
  const std::string plan = dir_ / "trivial.semplace", location = dir_ / "trivial.json";
  run_ok({"place", "--policy", "contiguous", "--param", "redundant=8", "--profile", dir_ / "prof", "--ep",
          "24", "--out", plan});
  const std::vector<std::string> exported{"place",   "export",           plan,    "--format", "sglang",
                                          "--model", "deepseek-v2-lite", "--out", location};
  const CliResult e = run_semsim(exported);
  ASSERT_EQ(e.exit_code, 0) << describe(exported, e);
  EXPECT_NE(e.out.find("x 72 physical experts (24 GPUs x 3 slots, 8 redundant)"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("start SGLang with: --ep-size 24 --ep-num-redundant-experts 8 "), std::string::npos)
      << e.out;
  const auto rows = nlohmann::json::parse(read_file(location)).at("physical_to_logical_map");
  ASSERT_EQ(rows.size(), 27u);
  EXPECT_EQ(rows[1], rows[0]);  // a MoE layer's row is the dense layer's trivial one
  EXPECT_EQ(rows[26], rows[0]);

  // The LAR bound is over N/D experts per device: eval says to leave it out, and then runs. The
  // fullest device's 3 slots a layer are 8 beyond the 70 (1664 / 24, rounded up) it needs without replicas.
  const std::vector<std::string> eval{"place", "eval", plan, "--trace", trace_};
  const CliResult refused = run_semsim(eval);
  EXPECT_EQ(refused.exit_code, 2) << describe(eval, refused);
  EXPECT_NE(refused.err.find("24 devices do not divide the 64 experts, and the LAR upper bound is over "
                             "placements of N/D experts per device: evaluate with --no-bound"),
            std::string::npos)
      << describe(eval, refused);
  const std::vector<std::string> no_bound{"place", "eval", plan, "--trace", trace_, "--no-bound", "--json"};
  const CliResult r = run_semsim(no_bound);
  ASSERT_EQ(r.exit_code, 0) << describe(no_bound, r);
  EXPECT_EQ(nlohmann::json::parse(r.out).at("replica_slots_extra"), 8) << r.out;
}

// Sem-MoE at EP7 with 6 redundant experts: 70 slots, 10 distinct experts on every device at every
// layer, each expert once at least; the file reads back for eval (without the bound, over N/D).
TEST_F(cliPlace, SemMoeWithRedundantExpertsFillsTenSlotsPerDevice) {
  const std::string plan = dir_ / "semmoe.semplace";
  run_ok({"place", "--policy", "semmoe", "--param", "redundant=6", "--profile", dir_ / "prof", "--ep", "7",
          "--out", plan});
  const std::vector<std::string> slots = slot_lines(plan);
  ASSERT_EQ(slots.size(), 26u * 7);
  std::vector<std::set<int>> hosted(26);
  for (const std::string& line : slots) {
    std::istringstream in(line);
    int layer = 0, device = 0, expert = 0;
    in >> layer >> device;
    std::set<int> mine;
    while (in >> expert) {
      EXPECT_TRUE(mine.insert(expert).second) << line;
      hosted[layer].insert(expert);
    }
    EXPECT_EQ(mine.size(), 10u) << line;
  }
  for (const std::set<int>& layer : hosted) EXPECT_EQ(layer.size(), 64u);
  const std::vector<std::string> no_bound{"place", "eval", plan, "--trace", trace_, "--no-bound", "--json"};
  const CliResult r = run_semsim(no_bound);
  ASSERT_EQ(r.exit_code, 0) << describe(no_bound, r);
  // A device's 260 slots, 22 beyond the 238 (1664 / 7, rounded up) it needs without replicas.
  EXPECT_EQ(nlohmann::json::parse(r.out).at("replica_slots_extra"), 22) << r.out;
}

TEST_F(cliPlace, SglangExportAndImportRefuseWhatTheFormatCannotHoldWritingNothing) {
  // Two GPUs holding 33 and 31 experts at the first MoE layer, 32 each elsewhere.
  const std::string uneven = dir_ / "uneven.semplace";
  {
    std::ofstream out(uneven);
    out << "format semsim-placement 1\npolicy contiguous\nmoe_layers 26\nexperts 64\ndevices 2\n"
           "devices_per_node 2\nsolver_seconds 0\nslots\n";
    for (int layer = 0; layer < 26; ++layer)
      for (int device = 0; device < 2; ++device) {
        const int split = layer == 0 ? 33 : 32;
        out << layer << " " << device;
        for (int expert = device == 0 ? 0 : split; expert < (device == 0 ? split : 64); ++expert)
          out << " " << expert;
        out << "\n";
      }
    out << "end\n";
  }
  const std::string location = dir_ / "loc.json";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<std::string> exported{"place",   "export",           uneven,  "--format", "sglang",
                                          "--model", "deepseek-v2-lite", "--out", location};
  auto with = [&](std::size_t at, const std::string& value) {
    std::vector<std::string> args = exported;
    args[at] = value;
    return args;
  };
  for (const Case& c :
       {Case{exported, uneven +
                           ": cannot export to SGLang's format, which gives every GPU the same number of "
                           "physical expert slots in every layer: MoE layer 0: 33 slots on device 0; 31 "
                           "slots on device 1"},
        Case{with(6, "mixtral-8x7b"),
             "the placement has 26 MoE layers of 64 experts, mixtral-8x7b has 32 of 8"},
        Case{with(8, dir_ / "loc.txt"),
             "SGLang reads an expert-location file as JSON only when its name ends in .json"},
        Case{with(4, "sglan"),
             "--format 'sglan': unknown expert-location format (did you mean 'sglang'?)"}}) {
    const CliResult r = run_semsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << describe(c.args, r);
    EXPECT_FALSE(fs::exists(location));
    EXPECT_FALSE(fs::exists(dir_ / "loc.txt"));
  }

  // The MoE layers' rows alone: SGLang indexes the rows by decoder layer, the dense one included.
  {
    std::ofstream out(location);
    out << "{\"physical_to_logical_map\": [";
    for (int row = 0; row < 26; ++row) {
      out << (row ? ", [" : "[");
      for (int p = 0; p < 64; ++p) out << (p ? ", " : "") << p;
      out << "]";
    }
    out << "]}\n";
  }
  const std::string back = dir_ / "back.semplace";
  const std::vector<std::string> imported{"place",   "import",           location, "--format", "sglang",
                                          "--model", "deepseek-v2-lite", "--ep",   "8",        "--out",
                                          back};
  const CliResult r = run_semsim(imported);
  EXPECT_EQ(r.exit_code, 2) << describe(imported, r);
  EXPECT_NE(r.err.find(location + ": physical_to_logical_map: 26 rows, but deepseek-v2-lite has 27 decoder "
                                  "layers (26 of them MoE)"),
            std::string::npos)
      << describe(imported, r);
  EXPECT_FALSE(fs::exists(back));
}

// `place eval` places DP-style requests with the engine's own schedulers, so its DP LAR is the LAR a
// run replaying the same held-out requests (prefill only: every processed token is a routed token of
// the trace) reports with the same plan and scheduler: exactly, for load-blind semmoe_dp under Poisson
// arrivals, and for load-aware schedulers when every request arrives at once (the loads eval assumes).
TEST(cliPlaceEval, DpLarEqualsTheLarOfARunWithTheSameScheduler) {
  TempDir dir;
  const std::string& model = kPlacementTestModel;
  const std::string trace = dir / "t.semtrace", plan = dir / "plan.semplace";
  const CliResult synth = synthesize_prefill_trace(dir, 160, 48, trace);
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
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

namespace semsim::cli_test {
namespace {

// cost_scored prices plans with a scenario's cost model: `place` refuses it, a scenario with a profile
// runs it (check prints its solver report), and an open loop must say how many requests are in flight.
TEST_F(cliPlace, CostScoredNeedsAScenarioAndAnOpenLoopItsLoad) {
  const std::vector<std::string> place{"place", "--policy", "cost_scored", "--profile",         dir_ / "prof",
                                       "--ep",  "8",        "--out",       dir_ / "cs.semplace"};
  const CliResult refused = run_semsim(place);
  EXPECT_EQ(refused.exit_code, 2) << describe(place, refused);
  EXPECT_NE(refused.err.find("not in `semsim place`"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(dir_ / "cs.semplace"));

  const std::string profile = "profile=" + (dir_ / "prof");
  const std::vector<std::string> open_loop{"check", "default", "--set",
                                           profile, "--set",   "policies.placement=cost_scored"};
  const CliResult no_load = run_semsim(open_loop);
  EXPECT_EQ(no_load.exit_code, 2) << describe(open_loop, no_load);
  EXPECT_NE(no_load.err.find("give the policy's in_flight parameter"), std::string::npos) << no_load.err;

  const std::vector<std::string> check{
      "check", "default", "--set",
      profile, "--set",   "policies.placement={name: cost_scored, in_flight: 8, evaluations: 52}"};
  const CliResult c = run_semsim(check);
  ASSERT_EQ(c.exit_code, 0) << describe(check, c);
  for (const char* key : {"placement solver (", "seconds_contiguous", "seconds_eplb", "seconds_semmoe",
                          "seconds_start", "seconds_result", "in_flight 8"})
    EXPECT_NE(c.out.find(key), std::string::npos) << key << " missing in " << c.out;
}

}  // namespace
}  // namespace semsim::cli_test
