// Traces without token identities (the Llama-4 SGLang dump, the Mixtral vLLM dump), end to end:
// import, profile, every placement policy, place eval and bound, and runs under both attention
// modes, on fixtures the test writes. Sem-MoE's online schedulers fall back to what they can read
// and say so.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/compressed_file.hpp"

namespace semsim::cli_test {
namespace {

void write_text(const fs::path& path, const std::string& text) {
  TextWriter writer(path.string());
  writer.buffer() = text;
  writer.close();
}

// Llama-4-Maverick (48 layers, every other one MoE, top-1 of 128): 8 requests of a 6-token prefill
// and 4 decode steps; request r's tokens route to experts of one of four groups per layer.
void write_llama4(const fs::path& dir) {
  fs::create_directories(dir / "subject");
  for (int r = 0; r < 8; ++r) {
    auto pass = [&](int tokens, int step) {
      nlohmann::json layers = nlohmann::json::object();
      for (int layer = 0; layer < 48; ++layer) {
        if (layer % 2 == 0) {
          layers[std::to_string(layer)] = nullptr;
          continue;
        }
        nlohmann::json rows = nlohmann::json::array();
        for (int t = 0; t < tokens; ++t) rows.push_back({(r % 4) * 32 + (layer * 5 + t + step) % 32});
        layers[std::to_string(layer)] = rows;
      }
      return layers;
    };
    nlohmann::json passes = nlohmann::json::array({pass(6, 0)});
    for (int step = 1; step <= 4; ++step) passes.push_back(pass(1, step));
    write_text(dir / "subject" / (std::to_string(r) + ".json.gz"), passes.dump());
  }
}

// Mixtral-8x7B (32 MoE layers, top-2 of 8), decode only: 6 problems of 5 generated tokens.
void write_mixtral(const fs::path& dir) {
  fs::create_directories(dir);
  std::string routing, outputs;
  for (int problem = 0; problem < 6; ++problem) {
    for (int layer = 0; layer < 32; ++layer)
      for (int t = 0; t < 5; ++t) {
        const int first = (problem % 2) * 4 + (layer + t) % 4;
        routing += nlohmann::json{{"dataset", "gsm8k"},
                                  {"problem_id", problem},
                                  {"layer", layer},
                                  {"experts", {first, (first + 1) % 8}},
                                  {"gating_probs", {0.6, 0.4}},
                                  {"token_idx", t}}
                       .dump() +
                   "\n";
      }
    outputs += nlohmann::json{{"problem_id", problem}, {"prompt", "a prompt of some bytes"}}.dump() + "\n";
  }
  write_text(dir / "gsm8k_2_routing.jsonl.gz", routing);
  write_text(dir / "gsm8k_2_outputs.jsonl.gz", outputs);
}

struct Family {
  std::string name, format, model;
  void (*write)(const fs::path&);
};

class cliIdlessTraces : public ::testing::TestWithParam<Family> {
 protected:
  CliResult run_ok(const std::vector<std::string>& args) {
    CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return r;
  }
  TempDir dir_;
};

TEST_P(cliIdlessTraces, EveryCommandWorksAndTheSchedulersSayWhatTheyGoBy) {
  const Family& family = GetParam();
  family.write(dir_.path() / "dump");
  const std::string trace = dir_ / "t.semtrace", profile = dir_ / "profile";
  run_ok(
      {"trace", "import", "--from", family.format, dir_ / "dump", "--model", family.model, "--out", trace});
  run_ok({"profile", trace, "--split", "0.5", "--seed", "1", "--out", profile});

  for (const std::string policy : {"contiguous", "round_robin", "random", "eplb", "semmoe", "coact", "ilp"}) {
    SCOPED_TRACE(policy);
    const std::string plan = dir_ / (policy + ".semplace");
    const CliResult placed = run_ok({"place", "--policy", policy, "--profile", profile, "--ep", "8",
                                     "--model", family.model, "--out", plan});
    if (policy == "ilp") {
      EXPECT_NE(placed.out.find("coact_without_token_identities: 1"), std::string::npos);
    }
    const CliResult eval = run_ok(
        {"place", "eval", plan, "--trace", trace, "--split", "0.5", "--seed", "1", "--no-bound", "--json"});
    if (eval.exit_code != 0) continue;
    const auto j = nlohmann::json::parse(eval.out);
    EXPECT_EQ(j["tp_by_token_table"].get<double>(), 0.0) << "no token identities, no T";
    EXPECT_NE(j["dp_scheduling_fallback"].get<std::string>().find("prompts cannot vote"), std::string::npos);
    // The evaluated half against the profiled half of the same trace.
    EXPECT_TRUE(j["routing_drift"]["popularity_mean"].is_number());
    EXPECT_TRUE(j["routing_drift"]["popularity_noise"].is_number());
  }
  // No triangle-cut rounds: the bound's looser form, which needs no token identities either (the
  // rounds took 12 of this test's 15 s on Llama 4's 128 experts).
  run_ok({"place", "bound", "--trace", trace, "--split", "0.5", "--seed", "1", "--ep", "8", "--bound-rounds",
          "0"});

  for (const std::string attention : {"dp", "tp"}) {
    SCOPED_TRACE(attention);
    const std::string scenario = dir_ / ("run-" + attention + ".yaml");
    std::ofstream(scenario)
        << "schema: 1\nmodel: " << family.model
        << "\ncluster: h200-1x8\nparallelism: {ep: 8, attention: " << attention
        << "}\npolicies:\n  placement: {file: " << (dir_ / "semmoe.semplace") << "}\n  "
        << (attention == "dp" ? "request_scheduling: semmoe_dp" : "token_scheduling: semmoe_tp")
        << "\nworkload:\n  requests: 6\n  seed: 1\n  arrival: {process: fixed, rate: 10}\n"
           "  output_len: {dist: fixed, value: 4}\n  routing: {source: trace, file: "
        << trace << "}\n";
    const std::string out = dir_ / ("out-" + attention);
    run_ok({"run", scenario, "--out", out});
    const auto summary = nlohmann::json::parse(read_file(fs::path(out) / "summary.json"));
    EXPECT_EQ(summary["requests_completed"].get<int>(), 6);
    const std::string fallback = summary["scheduling_fallback"];
    EXPECT_NE(fallback.find("the placement has no token→device table"), std::string::npos) << fallback;
    EXPECT_NE(fallback.find(attention == "dp" ? "round robin" : "inter-layer table alone"), std::string::npos)
        << fallback;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, cliIdlessTraces,
                         ::testing::Values(Family{"Llama4", "llama4-json", "llama-4-maverick", write_llama4},
                                           Family{"Mixtral", "mixtral-jsonl", "mixtral-8x7b", write_mixtral}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace semsim::cli_test
