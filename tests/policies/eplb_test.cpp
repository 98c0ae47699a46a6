#include "policies/eplb.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace semsim {
namespace {

// The example published with DeepSeek's EPLB (12 experts in 4 groups, 16 slots, 2 nodes x 4 GPUs).
const LoadMatrix kDeepSeekExample = {{90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86},
                                     {20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27}};

TEST(Eplb, ReproducesDeepSeeksPublishedExample) {
  const EplbPlacement p = rebalance_experts(kDeepSeekExample, 16, 4, 2, 8);
  EXPECT_EQ(p.physical_to_logical[0], (std::vector<int>{5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1}));
  EXPECT_EQ(p.physical_to_logical[1], (std::vector<int>{7, 10, 6, 8, 6, 11, 8, 9, 2, 4, 5, 1, 5, 0, 3, 1}));
  for (int l = 0; l < 2; ++l) {
    std::vector<int> count(12, 0);
    for (int e : p.physical_to_logical[l]) ++count[e];
    EXPECT_EQ(count, p.logical_count[l]);
  }
}

TEST(Eplb, BalancedPackingByHand) {
  // Sorted: 9(a3) 7(a0) 5(a4) 3(a1) 2(a2) 1(a5); two packs of three.
  // 9 -> p0 (0,0); 7 -> p1 (0,7); 5 -> p1 (9,12); 3 -> p0 (12,12); 2 -> p0 full? no: p0 has 2 items,
  // p1 has 2 -> lightest p0 (12 vs 12, first wins) -> p0 full; 1 -> p1.
  const Packing packing = balanced_packing({{7, 3, 2, 9, 5, 1}}, 2);
  EXPECT_EQ(packing.pack[0], (std::vector<int>{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(packing.rank_in_pack[0], (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(Eplb, ReplicatesTheHighestLoadPerReplica) {
  // Loads 10, 4, 1 with 5 slots: +e0 (10/1), then e0 has 5 per replica vs e1 4 -> +e0 again.
  const Replication r = replicate_experts({{10, 4, 1}}, 5);
  EXPECT_EQ(r.physical_to_logical[0], (std::vector<int>{0, 1, 2, 0, 0}));
  EXPECT_EQ(r.replica_rank[0], (std::vector<int>{0, 0, 0, 1, 2}));
  EXPECT_EQ(r.logical_count[0], (std::vector<int>{3, 1, 1}));
}

TEST(Eplb, ReplicasStopAtTheCap) {
  // Loads 10, 4, 1 with 5 slots and at most 2 replicas each: +e0 (10), then e0 is capped: +e1 (4).
  const Replication r = replicate_experts({{10, 4, 1}}, 5, 2);
  EXPECT_EQ(r.physical_to_logical[0], (std::vector<int>{0, 1, 2, 0, 1}));
  EXPECT_EQ(r.logical_count[0], (std::vector<int>{2, 2, 1}));
  EXPECT_THROW(replicate_experts({{10, 4, 1}}, 7, 2), std::invalid_argument);
}

TEST(Eplb, EveryGpuGetsEqualSlotsAndEveryExpertAReplicaOnRandomInputs) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    LoadMatrix load(3, std::vector<double>(64));
    for (auto& layer : load)
      for (double& w : layer) w = std::exponential_distribution<double>(1.0)(rng) * 100;
    const int groups = trial % 2 == 0 ? 8 : 3;  // 3 groups do not divide 2 nodes: global policy
    const int logical = 64 - 64 % groups;
    for (auto& layer : load) layer.resize(logical);
    const EplbPlacement p = rebalance_experts(load, 80, groups, 2, 16);
    for (int l = 0; l < 3; ++l) {
      ASSERT_EQ(p.physical_to_logical[l].size(), 80u);
      std::vector<int> count(logical, 0);
      for (int e : p.physical_to_logical[l]) ++count[e];
      EXPECT_EQ(count, p.logical_count[l]);
      for (int c : count) EXPECT_GE(c, 1);
      EXPECT_EQ(std::accumulate(count.begin(), count.end(), 0), 80);
    }
  }
}

TEST(Eplb, RejectsShapesItCannotPlace) {
  EXPECT_THROW(rebalance_experts(kDeepSeekExample, 15, 4, 2, 8),
               std::invalid_argument);  // 15 slots on 8 GPUs
  EXPECT_THROW(balanced_packing({{1, 2, 3}}, 2), std::invalid_argument);
}

}  // namespace
}  // namespace semsim
