#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/policy_registry.hpp"
#include "policies/request_scheduling.hpp"

namespace semsim {
namespace {

// 3 devices, 2 MoE layers, 5 tokens. Per token the device its layers name:
//   token 0: d2 d2 -> 2;  token 1: d0 d1 -> 0 (tie: lower id);  token 2: d1 d1 -> 1;
//   token 3: d1 -1 -> 1;  token 4: no entries -> no vote.
PlacementPlan three_device_plan() {
  PlacementPlan plan;
  plan.placement = contiguous_placement(2, 6, 3);
  plan.token_devices.device = {{2, 0, 1, 1, -1}, {2, 1, 1, -1, -1}};
  plan.token_devices.confidence = {{1, 1, 1, 1, 0}, {1, 1, 1, 0, 0}};
  return plan;
}

TEST(DpVoteDevices, MostLayersThenLowerId) {
  EXPECT_EQ(dp_vote_devices(three_device_plan().token_devices, 3),
            (std::vector<std::int16_t>{2, 0, 1, 1, -1}));
}

TEST(SemMoeDp, VotesPickTheDeviceAndTheMaskResetsAfterDRequests) {
  auto scheduler = make_request_scheduler({"semmoe_dp", {}}, three_device_plan());
  ASSERT_TRUE(scheduler->reads_prompt());
  const std::vector<RankLoad> loads(3);
  const Request r;
  const std::vector<std::int32_t> mostly_two{0, 0, 2}, mostly_one{2, 3, 0}, unknown{4, -1, 99};
  EXPECT_EQ(scheduler->choose(r, mostly_two, loads), 2);
  EXPECT_EQ(scheduler->choose(r, mostly_two, loads), 1);  // 2 masked: d1 (1 vote) beats d0 (0)
  EXPECT_EQ(scheduler->choose(r, mostly_two, loads), 0);  // only d0 left; then the mask resets
  EXPECT_EQ(scheduler->choose(r, mostly_one, loads), 1);
  EXPECT_EQ(scheduler->choose(r, mostly_one, loads), 2);
  EXPECT_EQ(scheduler->choose(r, unknown, loads), 0);
  EXPECT_EQ(scheduler->choose(r, unknown, loads), 0);  // reset: no votes, lowest unmasked id
  EXPECT_EQ(scheduler->choose(r, unknown, loads), 1);
}

TEST(SemMoeDp, EveryDConsecutiveRequestsCoverAllRanks) {
  auto scheduler = make_request_scheduler({"semmoe_dp", {}}, three_device_plan());
  const std::vector<RankLoad> loads(3);
  const std::vector<std::int32_t> prompt{0, 0, 0};
  for (int round = 0; round < 4; ++round) {
    std::vector<int> seen;
    for (int i = 0; i < 3; ++i) seen.push_back(scheduler->choose(Request{}, prompt, loads));
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2}));
  }
}

TEST(SemMoeDpBalanced, AffinityUntilTheLoadPenaltyOutweighsIt) {
  const PlacementPlan plan = three_device_plan();
  Request r;
  r.input_tokens = 4;
  const std::vector<std::int32_t> prompt{0, 0, 0, 2};  // vote shares d2 0.75, d1 0.25
  std::vector<RankLoad> loads(3);
  auto balanced = make_request_scheduler({"semmoe_dp_balanced", {{"load_weight", 1.0}}}, plan);
  EXPECT_EQ(balanced->choose(r, prompt, loads), 2);  // idle ranks: pure affinity
  EXPECT_EQ(balanced->choose(r, prompt, loads), 2);  // no mask: the same rank again
  // d2 holds 30 tokens, mean 10: penalty (30-10)/10 = 2 outweighs its 0.75 share.
  loads[2].outstanding_tokens = 30;
  EXPECT_EQ(balanced->choose(r, prompt, loads), 1);  // 0.25 + 1 beats d0's 0 + 1
  auto affinity_only = make_request_scheduler({"semmoe_dp_balanced", {{"load_weight", 0.0}}}, plan);
  EXPECT_EQ(affinity_only->choose(r, prompt, loads), 2);
}

TEST(SemMoeDp, NeedsTheTokenTable) {
  const PlacementPlan slots_only;
  EXPECT_THROW(make_request_scheduler({"semmoe_dp", {}}, slots_only), InputError);
}

}  // namespace
}  // namespace semsim
