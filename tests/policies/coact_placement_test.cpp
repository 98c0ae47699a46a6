#include "policies/coact_placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "models/input_error.hpp"
#include "policies/policy_registry.hpp"
#include "routing_fixture.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

PlacementResult place(const RoutingProfile& profile, int devices) {
  const PlacementInput input{profile.moe_layers(), profile.experts(), devices, 0, 1, &profile};
  return place_experts(input, default_policy_choice(PolicyKind::kPlacement, "coact"));
}

TEST(CoactPlacement, ExactlyNOverDExpertsPerDeviceOnRandomInputs) {
  for (const auto& [experts, devices] : {std::pair{16, 4}, {64, 8}, {12, 3}, {8, 8}, {8, 1}}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RoutingTrace trace = test::random_trace(2, experts, std::min(4, experts), 6, 20, 30, seed);
      const PlacementResult result = place(RoutingProfile::build(trace, {}), devices);
      for (int layer = 0; layer < 2; ++layer) {
        std::multiset<int> hosted;
        for (const auto& slots : result.placement.slots[layer]) {
          EXPECT_EQ(static_cast<int>(slots.size()), experts / devices) << experts << "/" << devices;
          hosted.insert(slots.begin(), slots.end());
        }
        EXPECT_EQ(hosted.size(), static_cast<std::size_t>(experts));
        EXPECT_EQ(std::set<int>(hosted.begin(), hosted.end()).size(), static_cast<std::size_t>(experts));
      }
    }
  }
}

TEST(CoactPlacement, RecoversPlantedClusters) {
  // 16 experts in 4 hidden clusters of 4 (a shuffled assignment); tokens pick 3 experts of one
  // cluster, and one token in ten picks 3 experts anywhere.
  std::mt19937_64 rng(7);
  std::vector<ExpertId> experts(16);
  for (int e = 0; e < 16; ++e) experts[e] = static_cast<ExpertId>(e);
  std::shuffle(experts.begin(), experts.end(), rng);
  std::vector<std::vector<ExpertId>> clusters(4);
  for (int e = 0; e < 16; ++e) clusters[e / 4].push_back(experts[e]);
  std::vector<std::vector<test::FixtureToken>> requests(20);
  for (auto& request : requests)
    for (int t = 0; t < 30; ++t) {
      const bool noise = rng() % 10 == 0;
      request.push_back({0, test::draw_experts(noise ? experts : clusters[rng() % 4], 3, rng)});
    }
  const RoutingProfile profile = RoutingProfile::build(test::fixture_trace(1, 16, 3, 1, requests), {});
  const PlacementResult result = place(profile, 4);
  std::set<std::set<int>> devices, planted;
  for (const auto& slots : result.placement.slots[0]) devices.insert({slots.begin(), slots.end()});
  for (const auto& cluster : clusters) planted.insert({cluster.begin(), cluster.end()});
  EXPECT_EQ(devices, planted);
}

TEST(CoactPlacement, LayersWithTheSameRoutingGetTheSameDevices) {
  // Layer 1 routes every token like layer 0 does, with the experts renamed e -> (e + 4) mod 16; its parts
  // must be numbered so that each token's experts sit on the same device as in layer 0.
  std::mt19937_64 rng(3);
  std::vector<ExpertId> all(16);
  for (int e = 0; e < 16; ++e) all[e] = static_cast<ExpertId>(e);
  std::vector<std::vector<test::FixtureToken>> requests(10);
  for (auto& request : requests)
    for (int t = 0; t < 20; ++t) {
      const int cluster = static_cast<int>(rng() % 4);
      std::vector<ExpertId> experts =
          test::draw_experts({all.begin() + 4 * cluster, all.begin() + 4 * cluster + 4}, 2, rng);
      for (int i = 0; i < 2; ++i) experts.push_back(static_cast<ExpertId>((experts[i] + 4) % 16));
      request.push_back({static_cast<std::int32_t>(t), experts});
    }
  const RoutingProfile profile = RoutingProfile::build(test::fixture_trace(2, 16, 2, 20, requests), {});
  const Placement placement = place(profile, 4).placement;
  for (int e = 0; e < 16; ++e)
    EXPECT_EQ(placement.home_devices(1)[(e + 4) % 16], placement.home_devices(0)[e]) << e;
}

TEST(CoactPlacement, SameInputSamePlacement) {
  const RoutingProfile profile = RoutingProfile::build(test::random_trace(3, 32, 4, 10, 30, 50, 5), {});
  EXPECT_EQ(place(profile, 4).placement.slots, place(profile, 4).placement.slots);
}

TEST(CoactPlacement, BalancedPartitionRepairsByLeastLoss) {
  // Parts of 2 from 4 vertices: the heavy edges 0-1 and 2-3 must be kept together.
  const std::vector<long long> weight = {0, 9, 1, 0,  //
                                         9, 0, 0, 1,  //
                                         1, 0, 0, 9,  //
                                         0, 1, 9, 0};
  const std::vector<int> part = balanced_graph_partition(weight, 4, 2, 1);
  EXPECT_EQ(part[0], part[1]);
  EXPECT_EQ(part[2], part[3]);
  EXPECT_NE(part[0], part[2]);
}

// With redundant slots every device keeps its group of the cut and adds replicas: each device its
// N/D experts first (the cut without redundancy), then distinct replicas, the most loaded expert
// among them.
TEST(CoactPlacement, RedundantSlotsHoldReplicasAfterTheCut) {
  const RoutingTrace trace = test::random_trace(2, 16, 4, 6, 20, 30, 3);
  const RoutingProfile profile = RoutingProfile::build(trace, {});
  const PlacementInput input{profile.moe_layers(), profile.experts(), 4, 0, 1, &profile};
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "coact");
  const Placement cut = place_experts(input, choice).placement;
  choice.params["redundant"] = 8;
  const Placement replicated = place_experts(input, choice).placement;
  for (int layer = 0; layer < 2; ++layer) {
    for (int d = 0; d < 4; ++d) {  // 4 experts of the cut, then 2 replicas
      const std::vector<int>& slots = replicated.slots[layer][d];
      ASSERT_EQ(slots.size(), 6u);
      EXPECT_EQ(std::vector<int>(slots.begin(), slots.begin() + 4), cut.slots[layer][d]);
      EXPECT_EQ(std::set<int>(slots.begin(), slots.end()).size(), 6u);
    }
    const std::span<const long long> load = profile.expert_load(layer);
    const int busiest = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    EXPECT_GE(replicated.replica_count(layer, busiest), 2) << layer;
  }
}

TEST(CoactPlacement, RejectsUnevenSplits) {
  const RoutingProfile profile = RoutingProfile::build(test::random_trace(1, 10, 2, 2, 5, 5, 1), {});
  EXPECT_THROW(place(profile, 4), InputError);
}

}  // namespace
}  // namespace semsim
