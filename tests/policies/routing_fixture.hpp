#pragma once
// Small routing traces built in memory for the placement tests.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "workloads/routing_trace.hpp"

namespace semsim::test {

// One request per entry of `requests`: its tokens, each as (token id, experts of every layer
// concatenated: layers × k ids). Vocabulary ids are "t0", "t1", ...
struct FixtureToken {
  std::int32_t id = 0;
  std::vector<ExpertId> experts;  // [layer][k]
};

inline RoutingTrace fixture_trace(int layers, int experts, int k, int vocabulary,
                                  const std::vector<std::vector<FixtureToken>>& requests) {
  TraceBuilder builder({"fixture", "test", layers, experts, k, false});
  for (int v = 0; v < vocabulary; ++v) builder.token_id(fmt::format("t{}", v));
  for (const auto& request : requests) {
    std::vector<std::int32_t> ids;
    std::vector<ExpertId> routed;
    for (const FixtureToken& token : request) {
      ids.push_back(token.id);
      routed.insert(routed.end(), token.experts.begin(), token.experts.end());
    }
    builder.add({{static_cast<int>(ids.size()), 1, true, 0}, ids, routed, {}}, "fixture");
  }
  return std::move(builder).build();
}

// k distinct experts drawn uniformly from `pool`.
inline std::vector<ExpertId> draw_experts(std::vector<ExpertId> pool, int k, std::mt19937_64& rng) {
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(k);
  return pool;
}

// Uniformly random routing: every token of every layer picks k distinct experts.
inline RoutingTrace random_trace(int layers, int experts, int k, int requests, int max_tokens, int vocabulary,
                                 std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ExpertId> all(experts);
  for (int e = 0; e < experts; ++e) all[e] = static_cast<ExpertId>(e);
  std::vector<std::vector<FixtureToken>> out(requests);
  for (auto& request : out) {
    const int tokens = 1 + static_cast<int>(rng() % max_tokens);
    for (int t = 0; t < tokens; ++t) {
      FixtureToken token{static_cast<std::int32_t>(rng() % vocabulary), {}};
      for (int layer = 0; layer < layers; ++layer) {
        const auto drawn = draw_experts(all, k, rng);
        token.experts.insert(token.experts.end(), drawn.begin(), drawn.end());
      }
      request.push_back(token);
    }
  }
  return fixture_trace(layers, experts, k, vocabulary, out);
}

}  // namespace semsim::test
