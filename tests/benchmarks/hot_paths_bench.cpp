// Microbenchmarks of the engine's per-token and per-collective hot paths (Google Benchmark).
// Run: build/tests/semsim_benchmarks --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <random>

#include "models/topology.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/dispatch.hpp"
#include "policies/eplb.hpp"
#include "sim/network.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {
namespace {

std::vector<TokenRef> step_tokens(const RoutingSource& routing, int count) {
  std::vector<TokenRef> tokens(count);
  for (int i = 0; i < count; ++i) {
    tokens[i] = {i / 64, (i / 64) % 8, i % 64};
    tokens[i].id = routing.token_id(tokens[i]);
  }
  return tokens;
}

// Routing of one MoE layer for a batch of tokens (DeepSeek-V2-Lite shape: 64 experts, top-6).
void BM_SyntheticRoute(benchmark::State& state) {
  const SyntheticRouting routing(SyntheticRoutingParams{}, 26, 64, 6, 1);
  const auto tokens = step_tokens(routing, static_cast<int>(state.range(0)));
  std::vector<ExpertId> experts(tokens.size() * 6);
  int layer = 0;
  for (auto _ : state) {
    routing.route(layer, tokens, experts);
    layer = (layer + 1) % 26;
    benchmark::DoNotOptimize(experts.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SyntheticRoute)->Arg(16)->Arg(4096);

// The same at DeepSeek-V3's shape (58 MoE layers, 256 experts, top-8), without (0) and with (1) its
// group limit (top-8 from 4 of 8 groups): the limit shapes the tables, not the lookups.
void BM_SyntheticRouteDeepSeekV3(benchmark::State& state) {
  const bool grouped = state.range(1) != 0;
  const SyntheticRouting routing(SyntheticRoutingParams{}, 58, 256, 8, 1,
                                 grouped ? ExpertGroupLimit{256, 8, 4} : ExpertGroupLimit{});
  const auto tokens = step_tokens(routing, static_cast<int>(state.range(0)));
  std::vector<ExpertId> experts(tokens.size() * 8);
  int layer = 0;
  for (auto _ : state) {
    routing.route(layer, tokens, experts);
    layer = (layer + 1) % 58;
    benchmark::DoNotOptimize(experts.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SyntheticRouteDeepSeekV3)->ArgNames({"tokens", "grouped"})->ArgsProduct({{16, 4096}, {0, 1}});

// Building the generator's tables at DeepSeek-V3's shape (4,096 token types x 58 layers x 5 sets),
// without (0) and with (1) the group limit; with load balancing (balanced: 1) the head types' sets
// are drawn by a scan over the experts either way.
void BM_SyntheticBuildDeepSeekV3(benchmark::State& state) {
  SyntheticRoutingParams params;
  if (state.range(1) != 0) params.load_balance = 0.5;
  const ExpertGroupLimit limit = state.range(0) != 0 ? ExpertGroupLimit{256, 8, 4} : ExpertGroupLimit{};
  for (auto _ : state) benchmark::DoNotOptimize(SyntheticRouting(params, 58, 256, 8, 1, limit).vocabulary());
}
BENCHMARK(BM_SyntheticBuildDeepSeekV3)
    ->ArgNames({"grouped", "balanced"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// Dispatch accounting (dedup) of one layer on EP8.
// `replicated`: every expert also on the next device, so tokens whose device lacks an expert
// choose a replica (round-robin).
void account_dispatch_loop(benchmark::State& state, bool replicated) {
  const SyntheticRouting routing(SyntheticRoutingParams{}, 1, 64, 6, 1);
  const auto tokens = step_tokens(routing, static_cast<int>(state.range(0)));
  std::vector<ExpertId> experts(tokens.size() * 6);
  routing.route(0, tokens, experts);
  std::vector<int> device(tokens.size());
  for (std::size_t i = 0; i < device.size(); ++i) device[i] = static_cast<int>(i % 8);
  Placement placement = contiguous_placement(1, 64, 8);
  if (replicated) {
    for (int e = 0; e < 64; ++e) placement.slots[0][(e / 8 + 1) % 8].push_back(e);
    placement.seal();
  }
  LayerDispatch out(8, 64);
  for (auto _ : state) {
    out.clear();
    account_dispatch(placement, 0, DispatchMode::kDedup, device, experts, 6, out);
    benchmark::DoNotOptimize(out.copies.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_AccountDispatch(benchmark::State& state) {
  account_dispatch_loop(state, false);
}
BENCHMARK(BM_AccountDispatch)->Arg(16)->Arg(4096);

void BM_AccountDispatchReplicated(benchmark::State& state) {
  account_dispatch_loop(state, true);
}
BENCHMARK(BM_AccountDispatchReplicated)->Arg(16)->Arg(4096);

// EPLB at DeepSeek-V3 size: 58 MoE layers of 256 experts in 8 groups, 64 redundant slots, EP64 in 8
// nodes (the budget: under a second).
void BM_EplbDeepSeekV3(benchmark::State& state) {
  std::mt19937_64 rng(9);
  LoadMatrix load(58, std::vector<double>(256));
  for (auto& layer : load)
    for (double& w : layer) w = std::exponential_distribution<double>(1.0)(rng) * 1000;
  for (auto _ : state) benchmark::DoNotOptimize(rebalance_experts(load, 256 + 64, 8, 8, 64));
}
BENCHMARK(BM_EplbDeepSeekV3)->Unit(benchmark::kMillisecond);

Cluster h200_cluster(int nodes, FabricKind fabric) {
  Cluster c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.scaleup_bandwidth = 450e9;
  c.scaleup_latency = 1e-6;
  c.fabric = fabric;
  c.nic_bandwidth = 50e9;
  c.network_latency = 3e-6;
  return c;
}

// One bottleneck-fidelity collective on a dense random matrix: 1x8 NVSwitch and 32x8 rail.
void BM_BottleneckCollective(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const Topology topology =
      Topology::build(h200_cluster(nodes, nodes > 1 ? FabricKind::kRail : FabricKind::kNone), nodes * 8);
  TrafficMatrix traffic(topology.devices);
  std::mt19937_64 rng(5);
  for (double& b : traffic.bytes) b = static_cast<double>(rng() % 100000);
  LoneCollectiveTime network(topology);
  for (auto _ : state) benchmark::DoNotOptimize(network.seconds(traffic));
}
BENCHMARK(BM_BottleneckCollective)->Arg(1)->Arg(32);

}  // namespace
}  // namespace semsim

BENCHMARK_MAIN();
