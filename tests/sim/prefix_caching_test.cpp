// Prefix caching end to end (serving.prefix_cache): what a cached prefix saves a prefill step, the
// KV the cache competes for, cache-aware scheduling, disaggregation and determinism. Each
// simulation runs in its own process.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/outputs/disaggregated_summary.hpp"
#include "sim/outputs/summary_json.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "tests/sim/isolated_simulation.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;
using test::simulate_isolated;

Scenario default_with(std::vector<std::string> overrides) {
  return load_scenario(default_scenario_text(), "<default>", "", overrides);
}

// A dense model on one device (no routing, no collectives: a step's time is its batch's), requests
// of 300 prompt and 2 output tokens one second apart.
std::vector<std::string> dense_requests(int requests) {
  return {"model=qwen3-32b",
          "parallelism.ep=1",
          "workload.requests=" + std::to_string(requests),
          "workload.arrival={process: fixed, rate: 1}",
          "workload.input_len.value=300",
          "workload.output_len.value=2"};
}

// Per step: prefill tokens and seconds; per request: cached tokens; the run's cache counts.
Json run_of(const Scenario& s) {
  return simulate_isolated(s, [](const RunResult& run) {
    Json steps = Json::array(), cached = Json::array();
    for (const StepRecord& step : run.steps) steps.push_back({step.prefill_tokens, step.end - step.start});
    for (const RequestRecord& r : run.requests) cached.push_back(r.cached_tokens);
    const PrefixCacheCounts& c = run.prefix_cache;
    return Json{{"steps", steps},
                {"cached", cached},
                {"kv_capacity", run.kv_capacity_tokens},
                {"requests", c.requests},
                {"hit_requests", c.hit_requests},
                {"prompt_tokens", c.prompt_tokens},
                {"cached_tokens", c.cached_tokens},
                {"hit_rate", c.hit_rate()},
                {"evicted_blocks", c.evicted_blocks},
                {"ttft_p50", summarize(run).ttft.p50},
                {"early_turns", summarize(run).early_turns}};
  });
}

// The second request finds the first's 256-token prefix (4 blocks of 64) cached and prefills its
// 44-token suffix: the attention over the whole 300-token context, the GEMMs over 44 tokens — what
// the second chunk of the same prompt costs when chunked prefill splits it at 256.
TEST(PrefixCaching, APrefillComputesOnlyTheUncachedSuffix) {
  std::vector<std::string> cached = dense_requests(2);
  cached.insert(cached.end(),
                {"workload.prefix={groups: 1, length: 256, share: 1}", "serving.prefix_cache=true"});
  const Json with = run_of(default_with(cached));
  ASSERT_EQ(with["steps"].size(), 4u);  // per request: its prefill step (token 1), one decode step
  EXPECT_EQ(with["steps"][0][0], 300);
  EXPECT_EQ(with["steps"][2][0], 44);
  EXPECT_EQ(with["cached"], Json({0, 256}));
  EXPECT_EQ(with["requests"], 2);
  EXPECT_EQ(with["hit_requests"], 1);
  EXPECT_EQ(with["prompt_tokens"], 600);
  EXPECT_EQ(with["cached_tokens"], 256);
  EXPECT_DOUBLE_EQ(with["hit_rate"].get<double>(), 256.0 / 600);

  std::vector<std::string> chunked = dense_requests(1);
  chunked.push_back("serving.max_batch_tokens=256");
  const Json split = run_of(default_with(chunked));
  ASSERT_GE(split["steps"].size(), 2u);
  EXPECT_EQ(split["steps"][1][0], 44);
  // (Equal but for rounding: each step's seconds are its end less its start, at other times.)
  EXPECT_NEAR(with["steps"][2][1].get<double>(), split["steps"][1][1].get<double>(), 1e-12);
  EXPECT_LT(with["steps"][2][1].get<double>(), with["steps"][0][1].get<double>());
  // The decode steps after either prefill read the same 301-token context.
  EXPECT_NEAR(with["steps"][3][1].get<double>(), with["steps"][1][1].get<double>(), 1e-12);
}

// Without the cache, or with no request sharing, nothing is found; the run is the plain one.
TEST(PrefixCaching, NothingSharedIsThePlainRun) {
  std::vector<std::string> unshared = dense_requests(3);
  unshared.insert(unshared.end(),
                  {"workload.prefix={groups: 1, length: 256, share: 0}", "serving.prefix_cache=true"});
  const Json none = run_of(default_with(unshared));
  const Json plain = run_of(default_with(dense_requests(3)));
  EXPECT_EQ(none["cached_tokens"], 0);
  EXPECT_EQ(none["steps"], plain["steps"]);
}

// Requests of 2,000 unique prompt tokens (31 full blocks) one after another fill the cache; once
// the next one's 2,002 tokens of KV do not fit beside it, admission evicts just enough blocks. The
// cache then holds floor((C - 2002) / 64) blocks before each insert of 31, so after N requests
// 31 N - floor((C - 2002) / 64) - 31 blocks have been evicted.
TEST(PrefixCaching, EvictionsFreeWhatAdmissionNeedsByHand) {
  const int n = 40;
  std::vector<std::string> o = dense_requests(n);
  o.insert(o.end(), {"workload.input_len.value=2000", "workload.prefix={groups: 1, length: 64, share: 0}",
                     "serving.prefix_cache=true", "serving.memory_fraction=0.5"});
  const Json run = run_of(default_with(o));
  const long long capacity = run["kv_capacity"].get<long long>();
  ASSERT_LT(capacity, 31LL * 64 * n);  // the test needs evictions
  ASSERT_GT(capacity, 2002 + 31 * 64);
  EXPECT_EQ(run["evicted_blocks"].get<long long>(), 31LL * n - (capacity - 2002) / 64 - 31);
  EXPECT_EQ(run["cached_tokens"], 0);
}

// One session of three turns (300-token messages, 100-token outputs): each turn finds the turn
// before's prompt and output cached, as SGLang caches a finished request's whole sequence. Turn 0's KV
// holds 399 tokens when it finishes (6 blocks: 384 tokens), turn 1's prompt is 700 tokens, its KV 799
// (12 blocks: 768), turn 2's prompt 1,100; caching prompts alone would give 256 and 640. With a think
// time shorter than a turn's latency, each later turn arrives before the one before finished: it finds
// that turn's prompt (cached once prefilled), not its output, and the summary counts it early.
TEST(PrefixCaching, ASessionsNextTurnFindsTheTurnBeforesOutputCached) {
  auto session = [](const std::string& think_seconds) {
    std::vector<std::string> o = dense_requests(3);
    o.insert(o.end(),
             {"workload.output_len.value=100",
              "workload.sessions={turns: {dist: fixed, value: 3}, think_time: {dist: fixed, seconds: " +
                  think_seconds + "}}",
              "serving.prefix_cache=true"});
    return run_of(default_with(o));
  };
  const Json run = session("10");
  EXPECT_EQ(run["cached"], Json({0, 384, 768}));
  EXPECT_EQ(run["prompt_tokens"], 300 + 700 + 1100);
  EXPECT_EQ(run["hit_requests"], 2);
  EXPECT_EQ(run["evicted_blocks"], 0);
  EXPECT_EQ(run["early_turns"], 0);
  ASSERT_EQ(run["steps"].size(), 300u);  // per turn: its prefill step, 99 decode steps
  EXPECT_EQ(run["steps"][100][0], 700 - 384);
  EXPECT_EQ(run["steps"][200][0], 1100 - 768);

  const Json early = session("0.1");
  EXPECT_EQ(early["early_turns"], 2);
  EXPECT_EQ(early["cached"], Json({0, 256, 640}));
}

// Two sessions of two turns, 9,000-token messages and 2-token outputs, starting 5 s apart, 20 s of
// thought, on a rank of 18,986 KV tokens. Turn 0 of each leaves its 9,001 tokens of KV cached (140
// blocks). Session 0's turn 1 (18,002 prompt tokens, 18,004 of KV) holds its 140 blocks (8,960
// tokens) and evicts 125 of session 1's, leaf first, for the rest; session 1's turn 1 finds the 15
// left (960 tokens) and evicts 266 of session 0's 281 blocks, held by no one once it finished.
TEST(PrefixCaching, SessionsEvictEachOthersTurnsByHand) {
  std::vector<std::string> o = dense_requests(4);
  o.insert(o.end(),
           {"workload.arrival.rate=0.2", "workload.input_len.value=9000",
            "workload.sessions={turns: {dist: fixed, value: 2}, think_time: {dist: fixed, seconds: 20}}",
            "serving.prefix_cache=true", "serving.memory_fraction=0.5"});
  const Json run = run_of(default_with(o));
  ASSERT_EQ(run["kv_capacity"], 18986);
  EXPECT_EQ(run["cached"], Json({0, 0, 8960, 960}));
  EXPECT_EQ(run["evicted_blocks"], 125 + 266);
  EXPECT_EQ(run["early_turns"], 0);
}

// Attention-DP over 8 ranks, four shared prefixes: sending each request where its prefix is cached
// finds more of it than round robin; the same scenario and seed give the same run.
TEST(PrefixCaching, CacheAwareSchedulingFindsMoreAndRunsAreDeterministic) {
  const std::vector<std::string> base{
      "workload.requests=300", "workload.input_len.value=1024", "workload.output_len.value=16",
      "workload.prefix={groups: 4, length: 768, share: 0.8}", "serving.prefix_cache=true"};
  auto with_scheduler = [&](const std::string& name) {
    std::vector<std::string> o = base;
    o.push_back("policies.request_scheduling=" + name);
    return run_of(default_with(o));
  };
  const Json aware = with_scheduler("prefix_aware"), round_robin = with_scheduler("round_robin");
  EXPECT_GT(aware["hit_rate"].get<double>(), round_robin["hit_rate"].get<double>());
  EXPECT_GT(round_robin["hit_rate"].get<double>(), 0.0);
  EXPECT_EQ(with_scheduler("prefix_aware"), aware);
}

// Two-batch overlap and the flow network fidelity change step times, not what is cached for
// requests a second apart.
TEST(PrefixCaching, WorksUnderTwoBatchOverlapAndFlowFidelity) {
  const std::vector<std::string> base{"workload.requests=6",
                                      "workload.arrival={process: fixed, rate: 1}",
                                      "workload.input_len.value=1000",
                                      "workload.output_len.value=4",
                                      "workload.prefix={groups: 1, length: 640, share: 1}",
                                      "serving.prefix_cache=true",
                                      "policies.request_scheduling=prefix_aware"};
  const Json plain = run_of(default_with(base));
  for (const char* variant : {"serving.overlap=two_batch", "network.fidelity=flow"}) {
    SCOPED_TRACE(variant);
    std::vector<std::string> o = base;
    o.push_back(variant);
    const Json run = run_of(default_with(o));
    EXPECT_EQ(run["cached"], plain["cached"]);
    EXPECT_EQ(run["cached_tokens"], 5 * 640);
  }
}

// A Mooncake log's hash_ids are the identities: the second request shares the first's two 512-token
// blocks (its third id differs), the third shares nothing; the summary's note says whether the ids
// were used.
TEST(PrefixCaching, AMooncakeLogsHashIdsAreTheIdentities) {
  const auto dir = std::filesystem::temp_directory_path() / ("semsim-prefix-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "trace.jsonl")
      << "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 4, \"hash_ids\": [7, 8, 9]}\n"
         "{\"timestamp\": 1000, \"input_length\": 1600, \"output_length\": 4, \"hash_ids\": [7, 8, 10, 11]}\n"
         "{\"timestamp\": 2000, \"input_length\": 1100, \"output_length\": 4, \"hash_ids\": [8, 7, 9]}\n";
  auto scenario = [&](bool cache) {
    const std::string text = fmt::format(
        "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {{ep: 8, attention: dp}}\n"
        "serving: {{prefix_cache: {0}}}\npolicies: {{request_scheduling: {1}}}\n"
        "workload: {{requests_from: {{file: trace.jsonl, format: mooncake}}}}\n",
        cache, cache ? "prefix_aware" : "round_robin");
    return load_scenario(text, (dir / "log.yaml").string(), dir.string());
  };
  const Json with = run_of(scenario(true));
  EXPECT_EQ(with["cached"], Json({0, 1024, 0}));
  EXPECT_EQ(with["prompt_tokens"], 3800);
  EXPECT_EQ(with["hit_requests"], 1);
  const Json without = run_of(scenario(false));
  EXPECT_EQ(without["cached"], Json({0, 0, 0}));
  auto note = [](const Scenario& s) {
    return summary_json(s, MemoryPlan{}, Summary{})["requests_from"]["note"].get<std::string>();
  };
  EXPECT_EQ(note(scenario(true)), "");
  EXPECT_EQ(note(scenario(false)),
            "hash_ids not used: every prompt is prefilled in full (serving.prefix_cache is off)");
  std::filesystem::remove_all(dir);
}

// Requests of different lengths finishing in the same step free their own KV: once all are done
// every rank's reserved KV is back to 0, with the cache (its blocks held by no one) or without.
TEST(PrefixCaching, FinishedRequestsFreeTheirOwnKv) {
  for (const bool cache : {false, true}) {
    SCOPED_TRACE(cache);
    const Scenario s =
        default_with({"workload.requests=200", "workload.arrival.rate=400",
                      "workload.input_len={dist: lognormal, median: 600, sigma: 0.8, max: 4000}",
                      "workload.output_len={dist: lognormal, median: 40, sigma: 0.8, max: 400}",
                      "workload.prefix={groups: 4, length: 256, share: 0.5}",
                      std::string("serving.prefix_cache=") + (cache ? "true" : "false")});
    const Json end = Json::parse(run_isolated([&] {
      const RunResult run = simulate(s, build_run(s), StepWindow{0, 1 << 20, std::nullopt});
      Json reserved = Json::array();
      for (const RankState& rank : run.timeline_serving.back().at_end)
        reserved.push_back(rank.kv_reserved_tokens);
      return Json{{"reserved", reserved}, {"completed", run.requests.back().completed()}}.dump();
    }));
    EXPECT_TRUE(end["completed"].get<bool>());
    EXPECT_EQ(end["reserved"], Json(std::vector<long long>(8, 0)));
  }
}

// Disaggregated: the prefill pool caches and prefills the suffix; the whole prompt's KV still moves
// to the decode pool, which keeps no cache. The run's counts are the prefill pool's.
TEST(PrefixCaching, ThePrefillPoolCachesUnderDisaggregation) {
  const std::string text =
      "schema: 1\nmodel: deepseek-v2-lite\ncluster: {preset: h200-ib, nodes: 2}\n"
      "parallelism: {ep: 8, attention: dp}\nserving: {prefix_cache: true}\n"
      "policies: {request_scheduling: prefix_aware}\n"
      "workload: {requests: 2, arrival: {process: fixed, rate: 1}, input_len: {dist: fixed, value: 1000}, "
      "output_len: {dist: fixed, value: 10}, prefix: {groups: 1, length: 512, share: 1}}\n"
      "disaggregation: {kv_transfer: whole, prefill: {nodes: 1}, decode: {nodes: 1}}\n";
  const Scenario s = load_scenario(text, "pools.yaml", "");
  const Json run = Json::parse(run_isolated([&] {
    const DisaggregatedResult result = simulate_disaggregated(s, build_disaggregated_run(s));
    const RunResult e2e = end_to_end(result);
    Json bytes = Json::array();
    for (const KvTransferRecord& t : result.transfers) bytes.push_back(t.bytes);
    return Json{{"bytes", bytes},
                {"prefill_tokens",
                 {result.prefill.steps.at(0).prefill_tokens, result.prefill.steps.at(1).prefill_tokens}},
                {"cached", {e2e.requests.at(0).cached_tokens, e2e.requests.at(1).cached_tokens}},
                {"e2e_cached_tokens", e2e.prefix_cache.cached_tokens},
                {"decode_on", result.decode.prefix_cache.on},
                {"completed", e2e.requests.at(1).completed()}}
        .dump();
  }));
  EXPECT_EQ(run["prefill_tokens"], Json({1000, 488}));
  EXPECT_EQ(run["cached"], Json({0, 512}));
  EXPECT_EQ(run["e2e_cached_tokens"], 512);
  EXPECT_EQ(run["decode_on"], false);
  ASSERT_EQ(run["bytes"].size(), 2u);
  EXPECT_EQ(run["bytes"][0], run["bytes"][1]);
  EXPECT_TRUE(run["completed"].get<bool>());
}

}  // namespace
}  // namespace semsim
