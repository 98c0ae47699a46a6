#pragma once
// Routing profiles made in memory for placement tests.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "workloads/routing_profile.hpp"

namespace semsim::test {

// One MoE layer, top-1: expert e is activated loads[e] times (so expert_load(0) == loads).
inline RoutingProfile profile_with_loads(const std::vector<int>& loads) {
  TraceBuilder b({"fixture", "hand-made loads", 1, static_cast<int>(loads.size()), 1, false});
  const std::int32_t token = b.token_id("x");
  std::vector<std::int32_t> ids;
  std::vector<ExpertId> experts;
  for (std::size_t e = 0; e < loads.size(); ++e)
    for (int i = 0; i < loads[e]; ++i) {
      ids.push_back(token);
      experts.push_back(static_cast<ExpertId>(e));
    }
  b.add({{static_cast<int>(ids.size()), 1, true, 0}, ids, experts, {}}, "fixture");
  return RoutingProfile::build(std::move(b).build(), {});
}

// `tokens` tokens over a 50-word vocabulary, each routed to top_k distinct experts per layer drawn
// with Zipf-like skew (so loads differ and replicas matter).
inline RoutingProfile random_profile(int layers, int experts, int top_k, int tokens, std::uint64_t seed) {
  TraceBuilder b({"fixture", "random", layers, experts, top_k, false});
  std::mt19937_64 rng(seed);
  std::vector<double> weight(experts);
  for (int e = 0; e < experts; ++e) weight[e] = 1.0 / (1 + (e * 7919 + static_cast<int>(seed)) % experts);
  std::discrete_distribution<int> pick(weight.begin(), weight.end());
  std::vector<std::int32_t> ids;
  std::vector<ExpertId> routed;
  for (int t = 0; t < tokens; ++t) {
    ids.push_back(b.token_id(fmt::format("w{}", rng() % 50)));
    for (int layer = 0; layer < layers; ++layer) {
      std::vector<ExpertId> chosen;
      while (static_cast<int>(chosen.size()) < top_k) {
        const auto e = static_cast<ExpertId>(pick(rng));
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
      }
      routed.insert(routed.end(), chosen.begin(), chosen.end());
    }
  }
  b.add({{tokens, 1, true, 0}, ids, routed, {}}, "fixture");
  return RoutingProfile::build(std::move(b).build(), {});
}

}  // namespace semsim::test
