#include "policies/set_dispatch.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "policies/contiguous_placement.hpp"

namespace semsim {
namespace {

// Every layer's experts dealt to the devices in a shuffled order (no replicas): placements other
// than contiguous ones, so that a token's devices are not its experts' ids divided.
Placement shuffled_placement(int layers, int experts, int devices, std::mt19937_64& rng) {
  Placement p = contiguous_placement(layers, experts, devices);
  for (int layer = 0; layer < layers; ++layer) {
    std::vector<int> order(experts);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (auto& device : p.slots[layer]) device.clear();
    for (int i = 0; i < experts; ++i) p.slots[layer][i % devices].push_back(order[i]);
  }
  p.seal();
  return p;
}

void expect_same(const LayerDispatch& fused, const LayerDispatch& separate) {
  EXPECT_EQ(fused.copies, separate.copies);
  EXPECT_EQ(fused.expert_tokens, separate.expert_tokens);
  EXPECT_EQ(fused.device_tokens, separate.device_tokens);
  EXPECT_EQ(fused.activations, separate.activations);
  EXPECT_EQ(fused.local_activations, separate.local_activations);
  EXPECT_EQ(fused.dispatches, separate.dispatches);
}

// The fused accounting gives account_dispatch's counters over route()'s experts, exactly: every mode
// it covers, 1 to 8 devices, expert tables in bytes (64 experts) and in ExpertIds (300), top-k 1, 6
// and 8 (compiled for their k) and 9, steps of 1 to 300 tokens (a chunk and its remainder; per-expert copies
// of top-9 flush lanes every 28 tokens), several layers and steps accumulating in one LayerDispatch as the
// engine's do.
TEST(SetDispatch, CountsWhatAccountDispatchCountsOverRoutedExperts) {
  std::mt19937_64 rng(3);
  for (const DispatchMode mode :
       {DispatchMode::kDedup, DispatchMode::kPerExpert, DispatchMode::kLowLatency, DispatchMode::kAllGather})
    for (const int experts : {64, 300})
      for (const int devices : {1, 2, 5, 8})
        for (const int top_k : {1, 6, 8, 9}) {
          SCOPED_TRACE(fmt::format("mode {} experts {} devices {} top-{}", static_cast<int>(mode), experts,
                                   devices, top_k));
          const int layers = 3;
          const SyntheticRouting routing(SyntheticRoutingParams{}, layers, experts, top_k, rng());
          const Placement placement = shuffled_placement(layers, experts, devices, rng);
          SetDispatch fused_dispatch(placement, routing);
          ASSERT_TRUE(fused_dispatch.covers(mode, devices));
          LayerDispatch fused(devices, experts), separate(devices, experts);
          for (const int tokens : {1, 300, 70}) {
            std::vector<TokenRef> step(tokens);
            std::vector<int> token_device(tokens);
            for (int i = 0; i < tokens; ++i) {
              step[i] = {static_cast<int>(rng() % 50), static_cast<int>(rng() % 8),
                         static_cast<int>(rng() % 600)};
              step[i].id = routing.token_id(step[i]);
              token_device[i] = static_cast<int>(rng() % devices);
            }
            for (int layer = 0; layer < layers; ++layer) {
              std::vector<ExpertId> routed(static_cast<std::size_t>(tokens) * top_k);
              routing.route(layer, step, routed);
              account_dispatch(placement, layer, mode, token_device, routed, top_k, separate);
              fused_dispatch.account(layer, mode, step, token_device, fused);
              expect_same(fused, separate);
            }
          }
        }
}

// Replicas (a replica's choice is per token and device), DeepEP's forwarding across nodes and
// groups of more than 8 devices are account_dispatch's alone, and asking for them is a logic error.
TEST(SetDispatch, CoversNoReplicasNorForwardingNorMoreThanEightDevices) {
  const SyntheticRouting routing(SyntheticRoutingParams{}, 1, 64, 6, 1);
  const Placement plain = contiguous_placement(1, 64, 8);
  SetDispatch dispatch(plain, routing);
  EXPECT_TRUE(dispatch.covers(DispatchMode::kDedup, 8));
  EXPECT_FALSE(dispatch.covers(DispatchMode::kHierarchical, 8));
  EXPECT_FALSE(dispatch.covers(DispatchMode::kDeepepAuto, 8));
  EXPECT_FALSE(dispatch.covers(DispatchMode::kDedup, 16));
  LayerDispatch out(8, 64);
  const std::vector<TokenRef> tokens{{0, 0, 0, routing.token_id({0, 0, 0})}};
  EXPECT_THROW(dispatch.account(0, DispatchMode::kHierarchical, tokens, std::vector<int>{0}, out),
               std::logic_error);
  const Placement replicated = contiguous_placement(1, 64, 8, 8);
  EXPECT_FALSE(SetDispatch(replicated, routing).covers(DispatchMode::kDedup, 8));
}

}  // namespace
}  // namespace semsim
