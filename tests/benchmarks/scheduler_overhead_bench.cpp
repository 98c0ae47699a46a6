// Sem-MoE's online scheduling overheads (issue targets: semmoe_dp ≤ 1 µs per request of 512
// tokens; semmoe_tp ≤ 20 ns per token for 4,096 tokens), on tables of DeepSeek-V3-like size:
// 100k-token vocabulary, 8 devices, 26 MoE layers, lookback 2.
// Run: build/tests/semsim_benchmarks --benchmark_filter=Sem --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <random>

#include "policies/contiguous_placement.hpp"
#include "policies/policy_registry.hpp"
#include "policies/request_scheduling.hpp"
#include "policies/semmoe_token_scheduling.hpp"

namespace semsim {
namespace {

constexpr int kVocabulary = 100000, kDevices = 8, kLayers = 26;

// Random T/T_p for every token (a few unprofiled) and a full A/A_p table.
const PlacementPlan& random_plan() {
  static const PlacementPlan plan = [] {
    std::mt19937 rng(11);
    PlacementPlan p;
    p.placement = contiguous_placement(kLayers, 64, kDevices);
    p.token_devices.device.assign(kLayers, std::vector<std::int16_t>(kVocabulary));
    p.token_devices.confidence.assign(kLayers, std::vector<float>(kVocabulary));
    for (int layer = 0; layer < kLayers; ++layer)
      for (int t = 0; t < kVocabulary; ++t) {
        p.token_devices.device[layer][t] = static_cast<std::int16_t>(rng() % 20 == 0 ? -1 : rng() % kDevices);
        p.token_devices.confidence[layer][t] = static_cast<float>(rng() % 1000) / 1000.0F;
      }
    p.inter_layer.reset(kLayers, kDevices, 2);
    for (int layer = 1; layer < kLayers; ++layer)
      for (auto& entry : p.inter_layer.next[layer])
        entry = {static_cast<std::int16_t>(rng() % kDevices), static_cast<float>(rng() % 1000) / 1000.0F};
    return p;
  }();
  return plan;
}

// Token ids uniform over the vocabulary (the worst case for the tables' caches) or Zipf(1)-ranked
// as text is (a few ids take most occurrences).
std::vector<std::int32_t> random_tokens(std::size_t count, bool zipf = false) {
  std::mt19937 rng(5);
  std::vector<double> weight(kVocabulary);
  for (int i = 0; i < kVocabulary; ++i) weight[i] = zipf ? 1.0 / (i + 1) : 1.0;
  std::discrete_distribution<std::int32_t> pick(weight.begin(), weight.end());
  std::vector<std::int32_t> tokens(count);
  for (auto& t : tokens) t = pick(rng);
  return tokens;
}

// One semmoe_dp decision for a request of `range(0)` prompt tokens.
void BM_SemMoeDpChoose(benchmark::State& state) {
  auto scheduler = make_request_scheduler({"semmoe_dp", {}}, random_plan());
  const auto prompt = random_tokens(static_cast<std::size_t>(state.range(0)));
  const std::vector<RankLoad> loads(kDevices);
  const Request request;
  for (auto _ : state) benchmark::DoNotOptimize(scheduler->choose(request, prompt, loads));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SemMoeDpChoose)->Arg(512);

// semmoe_tp at one MoE layer for a step of `range(0)` tokens: predict (T vs A) + align; token ids
// uniform (range(1) = 0) or Zipf-distributed (1).
void BM_SemMoeTpReshuffle(benchmark::State& state) {
  const auto tokens = random_tokens(static_cast<std::size_t>(state.range(0)), state.range(1) == 1);
  std::mt19937 rng(3);
  std::vector<int> previous(tokens.size() * 2);
  for (int& d : previous) d = static_cast<int>(rng() % kDevices);
  TokenReshuffle reshuffle;
  int layer = 2;
  for (auto _ : state) {
    reshuffle_tokens(random_plan(), layer, tokens, previous, 2, kDevices, reshuffle);
    benchmark::DoNotOptimize(reshuffle.rank.data());
    layer = layer == kLayers - 1 ? 2 : layer + 1;
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  // Seconds per token (reported in ns by the Invert flag: tokens per second, inverted).
  state.counters["time_per_token"] =
      benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SemMoeTpReshuffle)->Args({4096, 0})->Args({4096, 1});

}  // namespace
}  // namespace semsim
