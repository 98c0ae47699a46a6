#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "models/presets.hpp"
#include "workloads/routing_profile.hpp"
#include "workloads/trace_routing.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

// 2 MoE layers, 8 experts, top-2. Request 0: prompt of 2, prefill only. Request 1: prompt of 1 and 2
// recorded decode tokens of 4 outputs. Request 2: decode-only (prompt of 3 not recorded).
std::shared_ptr<const RoutingTrace> replay_trace() {
  TraceBuilder b({"tiny", "test", 2, 8, 2, false});
  const std::int32_t a = b.token_id("a"), c = b.token_id("c");
  b.add({{2, 1, true, 0}, std::vector<std::int32_t>{a, c}, std::vector<ExpertId>{0, 1, 2, 3, 4, 5, 6, 7}, {}},
        "r0");
  b.add({{1, 4, true, 2},
         std::vector<std::int32_t>{c, a, c},
         std::vector<ExpertId>{1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6, 0},
         {}},
        "r1");
  b.add({{3, 2, false, 1}, std::vector<std::int32_t>{-1}, std::vector<ExpertId>{7, 6, 5, 4}, {}}, "r2");
  return std::make_shared<const RoutingTrace>(std::move(b).build());
}

std::vector<ExpertId> route_one(const RoutingSource& source, int request, int position, int layer) {
  TokenRef token{request, 0, position};
  token.id = source.token_id(token);
  std::vector<ExpertId> out(2);
  source.route(layer, std::span(&token, 1), out);
  return out;
}

TEST(TraceRouting, RecordedPositionsReplayExactly) {
  const TraceRouting replay(replay_trace(), TraceDecodeModel::kResamplePrompt, 5);
  EXPECT_EQ(route_one(replay, 0, 1, 1), (std::vector<ExpertId>{6, 7}));  // request 0, token 1, layer 1
  EXPECT_EQ(route_one(replay, 1, 2, 0), (std::vector<ExpertId>{2, 4}));  // request 1, decode token 1
  EXPECT_EQ(route_one(replay, 2, 3, 1),
            (std::vector<ExpertId>{5, 4}));  // decode-only request, decode token 0
  EXPECT_EQ(route_one(replay, 3, 0, 0), (std::vector<ExpertId>{0, 1}));  // request 3 replays trace request 0
  EXPECT_EQ(replay.token_id({1, 0, 1}), 0);                              // "a"
}

TEST(TraceRouting, ResampleModelReusesOneOfTheRequestsOwnTokens) {
  const auto trace = replay_trace();
  const TraceRouting replay(trace, TraceDecodeModel::kResamplePrompt, 5);
  std::set<std::int32_t> ids;
  for (int position = 3; position < 40; ++position) {  // request 1's unrecorded decode positions
    const auto layer0 = route_one(replay, 1, position, 0), layer1 = route_one(replay, 1, position, 1);
    bool found = false;
    for (std::int64_t t = trace->first_token(1); t < trace->first_token(2); ++t)
      found = found || (std::equal(layer0.begin(), layer0.end(), trace->experts_of(t, 0)) &&
                        std::equal(layer1.begin(), layer1.end(), trace->experts_of(t, 1)));
    EXPECT_TRUE(found) << position;  // the whole path of one recorded token
    ids.insert(replay.token_id({1, 0, position}));
  }
  EXPECT_EQ(ids, (std::set<std::int32_t>{0, 1}));
  EXPECT_EQ(route_one(replay, 1, 7, 1), route_one(replay, 1, 7, 1));  // a pure function of the position
}

TEST(TraceRouting, PopularityModelDrawsDistinctExpertsWithoutIdentity) {
  const TraceRouting replay(replay_trace(), TraceDecodeModel::kLayerPopularity, 5);
  for (int position = 0; position < 3; ++position) {  // request 2's unrecorded prompt
    const auto set = route_one(replay, 2, position, 0);
    EXPECT_NE(set[0], set[1]);
    EXPECT_LT(*std::max_element(set.begin(), set.end()), 8);
    EXPECT_EQ(replay.token_id({2, 0, position}), -1);
  }
}

TEST(TraceRouting, ScenarioWorkloadTakesLengthsFromTheTraceUnlessItGivesThem) {
  const auto dir = fs::temp_directory_path() / "semsim-replay-test";
  fs::create_directories(dir);
  write_trace(*replay_trace(), (dir / "t.semtrace").string());
  auto spec_of = [&](const std::string& extra) {
    return WorkloadSpec::from_yaml(
        YamlInput::parse(
            "{requests: 5, arrival: {process: fixed, rate: 1}, routing: {source: trace, file: t.semtrace, "
            "decode: layer_popularity}" +
                extra + "}",
            "w.yaml"),
        dir.string());
  };
  const WorkloadSpec spec = spec_of("");
  const auto requests = generate_requests(spec);
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[1].input_tokens, 1);
  EXPECT_EQ(requests[1].output_tokens, 4);
  EXPECT_EQ(requests[3].input_tokens, 2);  // trace request 0 again
  EXPECT_EQ(spec.input_len.upper_bound(), 3);
  EXPECT_NE(spec.routing_description().find("(decode: layer_popularity)"), std::string::npos);
  EXPECT_TRUE(spec.routing_description().starts_with("trace t.semtrace ")) << spec.routing_description();
  EXPECT_EQ(generate_requests(spec_of(", output_len: {dist: fixed, value: 9}"))[1].output_tokens, 9);
  // A run prompt of 2 for trace request 1 (prompt 1, decode recorded for 2): position 1 of the run's
  // prompt replays the recorded decode token 0; the run's decode starts at recorded decode token 1.
  const WorkloadSpec longer = spec_of(", input_len: {dist: fixed, value: 2}");
  EXPECT_EQ(generate_requests(longer)[1].input_tokens, 2);
  EXPECT_EQ(generate_requests(longer)[1].output_tokens, 4);
  EXPECT_EQ(longer.input_len.upper_bound(), 2);
  const auto replay = make_routing_source(longer, model_preset("deepseek-v2-lite"));
  EXPECT_EQ(route_one(*replay, 1, 1, 0), (std::vector<ExpertId>{5, 6}));
  EXPECT_EQ(route_one(*replay, 1, 2, 0), (std::vector<ExpertId>{2, 4}));
  try {
    check_routing_matches(spec, model_preset("deepseek-v2-lite"),
                          YamlInput::parse("{routing: {file: t}}", "w.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("routes 2 MoE layers x top-2 of 8 experts"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(TraceRouting, HeldOutReplayKeepsOnlyTheRequestsTheProfileHeldOut) {
  const auto dir = fs::temp_directory_path() / "semsim-held-out-test";
  fs::create_directories(dir);
  const auto trace = replay_trace();
  write_trace(*trace, (dir / "t.semtrace").string());
  const WorkloadSpec spec = WorkloadSpec::from_yaml(
      YamlInput::parse("{requests: 4, arrival: {process: fixed, rate: 1}, routing: {source: trace, file: "
                       "t.semtrace, held_out: {split: 0.67, seed: 3}}}",
                       "w.yaml"),
      dir.string());
  const std::vector<bool> held_out = held_out_requests(trace->requests(), 0.67, 3);
  ASSERT_EQ(spec.trace->requests(), 2u);
  std::size_t kept = 0;
  for (std::size_t r = 0; r < trace->requests(); ++r)
    if (held_out[r]) {
      EXPECT_EQ(spec.trace->request(kept).input_tokens, trace->request(r).input_tokens);
      EXPECT_EQ(spec.trace->view(kept).token_ids.size(), trace->view(r).token_ids.size());
      ++kept;
    }
  EXPECT_EQ(spec.trace->vocabulary(), trace->vocabulary());  // ids mean the same as in the profile
  EXPECT_NE(spec.routing_description().find("held-out 2 of split 0.67, seed 3"), std::string::npos);
  EXPECT_THROW(WorkloadSpec::from_yaml(YamlInput::parse("{requests: 4, arrival: {process: fixed, rate: 1}, "
                                                        "routing: {source: trace, file: t.semtrace, "
                                                        "held_out: {split: 1.5}}}",
                                                        "w.yaml"),
                                       dir.string()),
               InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace semsim
