// Solver time of the semmoe placement policy on profiles of synthetic routing (Google Benchmark).
// Run: build/tests/semsim_benchmarks --benchmark_filter=SemMoe
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <map>
#include <memory>

#include "policies/semmoe_placement.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {
namespace {

struct Shape {
  int layers, experts, top_k, vocabulary, requests, tokens_per_request;
};

// A profile of every request of a synthetic trace (prefill only), built once per shape.
const RoutingProfile& synthetic_profile(const Shape& s) {
  static std::map<int, std::unique_ptr<RoutingProfile>> cache;
  auto& slot = cache[s.experts];
  if (slot) return *slot;
  SyntheticRoutingParams params;
  params.vocabulary = s.vocabulary;
  const SyntheticRouting routing(params, s.layers, s.experts, s.top_k, 1);
  TraceBuilder builder({"synthetic", "semmoe benchmark", s.layers, s.experts, s.top_k, false});
  for (int id = 0; id < routing.vocabulary(); ++id)
    builder.declare_token(id, fmt::format("s{}", id), "benchmark");
  std::vector<TokenRef> tokens(s.tokens_per_request);
  std::vector<std::int32_t> ids(tokens.size());
  std::vector<ExpertId> layer_experts(tokens.size() * s.top_k), experts(tokens.size() * s.layers * s.top_k);
  for (int r = 0; r < s.requests; ++r) {
    for (int i = 0; i < s.tokens_per_request; ++i) {
      tokens[i] = {r, r % routing.topics(), i};
      ids[i] = tokens[i].id = routing.token_id(tokens[i]);
    }
    for (int layer = 0; layer < s.layers; ++layer) {
      routing.route(layer, tokens, layer_experts);
      for (int i = 0; i < s.tokens_per_request; ++i)
        std::copy_n(&layer_experts[i * s.top_k], s.top_k, &experts[(i * s.layers + layer) * s.top_k]);
    }
    builder.add({{s.tokens_per_request, 1, true, 0}, ids, experts, {}}, "benchmark");
  }
  slot = std::make_unique<RoutingProfile>(RoutingProfile::build(std::move(builder).build(), {}));
  return *slot;
}

void run_semmoe(benchmark::State& state, const Shape& shape, int devices, bool shared_tokens = false) {
  const RoutingProfile& profile = synthetic_profile(shape);
  const PlacementInput input{profile.moe_layers(), profile.experts(), devices, 0, 1, &profile};
  SemMoeParams params;
  params.shared_tokens = shared_tokens;
  for (auto _ : state) benchmark::DoNotOptimize(semmoe_placement(input, params));
}

// DeepSeek-V2-Lite shape (26 MoE layers x 64 experts, top-6, ~12k-token vocabulary) on EP8.
void BM_SemMoePlacementV2Lite(benchmark::State& state) {
  run_semmoe(state, {26, 64, 6, 12000, 200, 100}, 8);
}
BENCHMARK(BM_SemMoePlacementV2Lite)->Unit(benchmark::kMillisecond)->UseRealTime();

// DeepSeek-V3 shape (58 MoE layers x 256 experts, top-8, 100k-token vocabulary) on EP64.
void BM_SemMoePlacementV3(benchmark::State& state) {
  run_semmoe(state, {58, 256, 8, 100000, 250, 400}, 64);
}
BENCHMARK(BM_SemMoePlacementV3)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// The same two shapes with one device per token for all layers (shared_tokens, the DP variant).
void BM_SemMoeSharedTokensV2Lite(benchmark::State& state) {
  run_semmoe(state, {26, 64, 6, 12000, 200, 100}, 8, true);
}
BENCHMARK(BM_SemMoeSharedTokensV2Lite)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SemMoeSharedTokensV3(benchmark::State& state) {
  run_semmoe(state, {58, 256, 8, 100000, 250, 400}, 64, true);
}
BENCHMARK(BM_SemMoeSharedTokensV3)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace semsim
