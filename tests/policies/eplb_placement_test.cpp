#include "policies/eplb_placement.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "policies/policy_registry.hpp"
#include "profile_fixture.hpp"
#include "workloads/expert_groups.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {
namespace {

PolicyChoice eplb(double redundant, double groups = 0) {
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "eplb");
  choice.params["redundant"] = redundant;
  choice.params["groups"] = groups;
  return choice;
}

// DeepSeek's published example (policies/eplb_test.cpp), through the registry: 12 experts in 4
// groups, 4 redundant slots, 2 nodes of 4 GPUs, 2 slots per GPU.
TEST(EplbPlacement, PacksDeepSeeksExampleGpuMajor) {
  const RoutingProfile layer0 = test::profile_with_loads({90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86});
  const PlacementResult r = place_experts({1, 12, 8, 4, 1, &layer0}, eplb(4, 4));
  const std::vector<std::vector<int>> expected = {{5, 6},  {5, 7},  {8, 4}, {3, 4},
                                                  {10, 9}, {10, 2}, {0, 1}, {11, 1}};
  EXPECT_EQ(r.placement.slots[0], expected);
  EXPECT_EQ(r.placement.replica_count(0, 5), 2);
  EXPECT_EQ(r.placement.replica_count(0, 6), 1);
  EXPECT_EQ(r.solver.at("hierarchical"), 1);
  EXPECT_EQ(r.solver.at("duplicates_swapped"), 0);
}

// Loads 6, 6, 1, 1 on 2 GPUs with 2 redundant slots (3 per GPU). Replicas: +e0 (6 vs 6, lower id),
// +e1 (6 > 3). Per-replica loads 3 3 1 1 | 3 3 (slots 4, 5). Packing by load: slot0 -> GPU0,
// slot1 -> GPU1, slot4 -> GPU0 (tie: first), slot5 -> GPU1, slot2 -> GPU0, slot3 -> GPU1, giving
// GPU0 {0, 0, 2} and GPU1 {1, 1, 3}. The second 0 swaps with GPU1's first 1 (same load, first).
TEST(EplbPlacement, SwapsASecondReplicaOnOneGpuByHand) {
  const RoutingProfile profile = test::profile_with_loads({6, 6, 1, 1});
  const PlacementResult r = place_experts({1, 4, 2, 0, 1, &profile}, eplb(2));
  EXPECT_EQ(r.placement.slots[0], (std::vector<std::vector<int>>{{0, 1, 2}, {0, 1, 3}}));
  EXPECT_EQ(r.solver.at("duplicates_swapped"), 1);
  EXPECT_EQ(r.solver.at("duplicates_dropped"), 0);
  EXPECT_EQ(r.placement.replica_count(0, 0), 2);
  EXPECT_EQ(r.placement.replica_count(0, 3), 1);
}

// Loads 10, 4, 1, 1 on 2 GPUs with 2 redundant slots: expert 0 gets one extra slot (10), then has
// as many replicas as there are GPUs, so the next goes to expert 1 (4 > 1). Per-replica loads
// 5 4 1 1 | 5 4 pack as GPU0 {0, 1, 2}, GPU1 {0, 1, 3}.
TEST(EplbPlacement, NoExpertGetsMoreReplicasThanItsNodeHasGpus) {
  const RoutingProfile profile = test::profile_with_loads({10, 4, 1, 1});
  const PlacementResult r = place_experts({1, 4, 2, 0, 1, &profile}, eplb(2));
  EXPECT_EQ(r.placement.slots[0], (std::vector<std::vector<int>>{{0, 1, 2}, {0, 1, 3}}));
  EXPECT_EQ(r.solver.at("duplicates_swapped"), 0);
  EXPECT_EQ(r.solver.at("duplicates_dropped"), 0);
}

TEST(EplbPlacement, DefaultsToOneRedundantSlotPerDeviceAndBalancesRandomShapes) {
  for (const auto& [experts, devices, per_node] :
       std::vector<std::tuple<int, int, int>>{{16, 4, 0}, {64, 8, 4}, {32, 16, 8}, {12, 6, 3}}) {
    const RoutingProfile profile =
        test::random_profile(3, experts, 2, 400, static_cast<std::uint64_t>(experts));
    const PlacementResult r = place_experts({3, experts, devices, per_node, 1, &profile},
                                            default_policy_choice(PolicyKind::kPlacement, "eplb"));
    const int per_device = (experts + devices) / devices;
    for (int layer = 0; layer < 3; ++layer) {
      int slots = 0;
      for (int d = 0; d < devices; ++d) {
        EXPECT_EQ(static_cast<int>(r.placement.slots[layer][d].size()), per_device)
            << experts << "/" << devices;
        slots += static_cast<int>(r.placement.slots[layer][d].size());
      }
      int replicas = 0;
      for (int e = 0; e < experts; ++e) replicas += r.placement.replica_count(layer, e);
      EXPECT_EQ(replicas, slots);
    }
    EXPECT_EQ(r.solver.at("physical_slots"), experts + devices);
    EXPECT_TRUE(r.placement.has_replicas());
  }
}

TEST(EplbPlacement, RejectsSlotsThatDoNotSplitAndAMissingProfile) {
  const RoutingProfile profile = test::profile_with_loads({6, 6, 1, 1});
  try {
    place_experts({1, 4, 2, 0, 1, &profile}, eplb(1));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "5 physical slots per layer do not split evenly over EP size 2: give 2 redundant experts"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(place_experts({1, 4, 2, 0, 1, nullptr}, eplb(2)), InputError);
  EXPECT_THROW(place_experts({1, 8, 2, 0, 1, &profile}, eplb(2)), InputError);  // profile of 4 experts
}

// A trace of `requests` requests of 32 prompt tokens routed by `routing`, token ids as texts.
RoutingTrace group_limited_trace(const SyntheticRouting& routing, int requests) {
  const int layers = routing.moe_layers(), k = routing.top_k();
  TraceBuilder builder({"fixture", "synthetic", layers, routing.experts(), k, false});
  for (int r = 0; r < requests; ++r) {
    std::vector<TokenRef> tokens(32);
    std::vector<std::int32_t> ids(tokens.size());
    for (int position = 0; position < 32; ++position) {
      tokens[position] = {r, r % routing.topics(), position};
      tokens[position].id = routing.token_id(tokens[position]);
      ids[position] = builder.token_id(fmt::format("w{}", tokens[position].id));
    }
    std::vector<ExpertId> by_layer(tokens.size() * k), experts(tokens.size() * layers * k);
    for (int layer = 0; layer < layers; ++layer) {
      routing.route(layer, tokens, by_layer);
      for (std::size_t t = 0; t < tokens.size(); ++t)
        std::copy_n(by_layer.begin() + t * k, k, experts.begin() + (t * layers + layer) * k);
    }
    builder.add({{32, 1, true, 0}, ids, experts, {}}, "fixture");
  }
  return std::move(builder).build();
}

// The most nodes one routing of `trace` reaches under `p`, each expert on the one node holding every
// replica of it (asserted: EPLB's hierarchical policy keeps a group's replicas in its node).
int most_nodes_reached(const Placement& p, const RoutingTrace& trace, const ExpertGroupLimit& limit) {
  int most = 0;
  for (int layer = 0; layer < p.moe_layers; ++layer) {
    std::vector<int> node_of(p.experts, -1);
    for (int device = 0; device < p.devices; ++device)
      for (int e : p.slots[layer][device]) {
        const int node = device / p.devices_per_node;
        EXPECT_TRUE(node_of[e] < 0 || node_of[e] == node) << "expert " << e << " on two nodes";
        node_of[e] = node;
      }
    for (std::size_t token = 0; token < trace.tokens(); ++token) {
      const ExpertId* set = trace.experts_of(static_cast<std::int64_t>(token), layer);
      std::vector<int> nodes;
      for (int j = 0; j < trace.header().top_k; ++j) nodes.push_back(node_of[set[j]]);
      std::sort(nodes.begin(), nodes.end());
      const int reached = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
      EXPECT_LE(reached, groups_spanned(limit, std::span(set, trace.header().top_k)));
      most = std::max(most, reached);
    }
  }
  return most;
}

// With group-limited routing and EPLB's hierarchical policy packing whole groups onto nodes, a token
// reaches at most topk_groups nodes: 8 groups of 8 experts (top-6) on 4 nodes of 8 GPUs (2 groups a
// node) and on 8 nodes of 2 GPUs (one group a node). Without the limit tokens reach more.
TEST(EplbPlacement, GroupLimitedTokensReachAtMostTopkGroupsNodes) {
  SyntheticRoutingParams params;
  params.vocabulary = 512;
  for (const auto& [nodes, gpus_per_node, topk_groups] :
       std::vector<std::tuple<int, int, int>>{{4, 8, 1}, {4, 8, 2}, {4, 8, 3}, {8, 2, 2}, {8, 2, 4}}) {
    const ExpertGroupLimit limit{64, 8, topk_groups};
    const RoutingTrace trace = group_limited_trace(SyntheticRouting(params, 3, 64, 6, 7, limit), 40);
    const RoutingProfile profile = RoutingProfile::build(trace, {});
    const int devices = nodes * gpus_per_node;
    const PlacementResult r = place_experts({3, 64, devices, gpus_per_node, 8, &profile}, eplb(devices));
    ASSERT_EQ(r.solver.at("hierarchical"), 1);
    EXPECT_LE(most_nodes_reached(r.placement, trace, limit), topk_groups)
        << nodes << " nodes, " << topk_groups << " groups per token";
    const RoutingTrace unlimited = group_limited_trace(SyntheticRouting(params, 3, 64, 6, 7), 40);
    EXPECT_GT(most_nodes_reached(r.placement, unlimited, {64, 8, 8}), topk_groups) << nodes << " nodes";
  }
}

}  // namespace
}  // namespace semsim
