// A profile and a placement made from one trace apply to another trace of the same model: token
// identity is the token's text, not its id (ids are each trace's order of first appearance).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "cli_runner.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim::cli_test {
namespace {

// `trace` with every token given the text "w<id>" and ids assigned in the order `first_texts` lists
// texts (then first appearance): the same requests and routing, another trace's ids.
RoutingTrace with_texts(const RoutingTrace& trace, const std::vector<std::string>& first_texts) {
  TraceBuilder builder(trace.header());
  for (const std::string& text : first_texts) builder.token_id(text);
  std::vector<std::int32_t> ids;
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    const TraceRequestView v = trace.view(r);
    ids.clear();
    for (std::int32_t id : v.token_ids) ids.push_back(builder.token_id(fmt::format("w{}", id)));
    builder.add({v.request, ids, v.experts, v.weights}, fmt::format("request {}", r));
  }
  return std::move(builder).build();
}

TEST(cliVocabularyTransfer, APlacementProfiledOnOneTraceEvaluatesAndReplaysAnotherTheSameWhateverItsIds) {
  TempDir dir;
  const std::string& model = kPlacementTestModel;
  const CliResult synth = synthesize_prefill_trace(dir, 120, 48, dir / "synthetic.semtrace");
  ASSERT_EQ(synth.exit_code, 0) << synth.err;

  // Trace A numbers its tokens by first appearance; trace B, the same requests, in reverse order of A's.
  const RoutingTrace synthetic = load_trace(dir / "synthetic.semtrace");
  const RoutingTrace a = with_texts(synthetic, {});
  const RoutingTrace b = with_texts(synthetic, {a.vocabulary().rbegin(), a.vocabulary().rend()});
  ASSERT_GT(a.vocabulary().size(), 100u);
  ASSERT_NE(a.vocabulary(), b.vocabulary());
  ASSERT_NE(std::vector<std::int32_t>(a.token_ids().begin(), a.token_ids().end()),
            std::vector<std::int32_t>(b.token_ids().begin(), b.token_ids().end()));
  write_trace(a, dir / "a.semtrace");
  write_trace(b, dir / "b.semtrace.txt");

  const std::string plan = dir / "plan.semplace";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"profile", dir / "a.semtrace", "--split", "0.5", "--seed", "1", "--out", dir / "profile"},
           {"place", "--policy", "semmoe", "--profile", dir / "profile", "--ep", "8", "--model",
            "deepseek-v2-lite", "--out", plan}}) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  auto evaluate = [&](const std::string& trace) {
    const std::vector<std::string> args{"place", "eval",   plan, "--trace",    trace,   "--split",
                                        "0.5",   "--seed", "1",  "--no-bound", "--json"};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return nlohmann::json::parse(r.out);
  };
  const auto on_a = evaluate(dir / "a.semtrace"), on_b = evaluate(dir / "b.semtrace.txt");
  EXPECT_GT(on_a["lar_dp"].get<double>(), 0.15);
  for (const char* key : {"lar_dp", "lar_tp", "imbalance_dp", "imbalance_tp", "tp_by_token_table"})
    EXPECT_EQ(on_b[key], on_a[key]) << key;
  EXPECT_TRUE(on_a["token_table"]["same_vocabulary"].get<bool>());
  EXPECT_FALSE(on_b["token_table"]["same_vocabulary"].get<bool>());
  EXPECT_EQ(on_b["token_table"]["by_text"], on_b["token_table"]["vocabulary"]);

  auto replay = [&](const std::string& trace, const std::string& out) {
    std::ofstream(dir / (out + ".yaml"))
        << "schema: 1\n"
        << model << "workload:\n  requests: 60\n  arrival: {process: poisson, rate: 200}\n"
        << "  routing: {source: trace, file: " << trace << ", held_out: {split: 0.5, seed: 1}}\n"
        << "policies: {placement: {file: plan.semplace}, request_scheduling: semmoe_dp}\n"
           "outputs: {steps_csv: false}\n";
    const std::vector<std::string> args{"run", dir / (out + ".yaml"), "--out", dir / out};
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 0) << describe(args, r);
    return std::make_pair(nlohmann::json::parse(read_file(fs::path(dir / out) / "summary.json")), r.out);
  };
  const auto [run_a, text_a] = replay("a.semtrace", "run-a");
  const auto [run_b, text_b] = replay("b.semtrace.txt", "run-b");
  EXPECT_EQ(run_b["lar"], run_a["lar"]);
  EXPECT_EQ(run_b["imbalance"], run_a["imbalance"]);
  EXPECT_TRUE(run_a["token_table"]["same_vocabulary"].get<bool>());
  EXPECT_EQ(run_b["token_table"]["unmatched"].get<long long>(), 0);
  EXPECT_EQ(text_a.find("Token table matched"), std::string::npos);
  EXPECT_NE(text_b.find("Token table matched to these tokens: " + std::to_string(b.vocabulary().size()) +
                        " of " + std::to_string(b.vocabulary().size()) + " by text"),
            std::string::npos)
      << text_b;
}

}  // namespace
}  // namespace semsim::cli_test
