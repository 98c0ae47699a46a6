#include "policies/round_robin_placement.hpp"

#include <gtest/gtest.h>

#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

TEST(RoundRobinPlacement, ExpertOnDeviceEModD) {
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "round_robin");
  const PlacementResult r = place_experts({2, 12, 4, 2, 1, nullptr}, choice);
  const Placement& p = r.placement;
  EXPECT_EQ(p.slots[0][0], (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(p.slots[1][1], (std::vector<int>{1, 5, 9}));
  EXPECT_EQ(p.slots[0][3], (std::vector<int>{3, 7, 11}));
  EXPECT_FALSE(p.has_replicas());
  EXPECT_EQ(p.devices_per_node, 2);
  EXPECT_TRUE(r.token_devices.empty());
  // 10 experts do not split over 4 devices; 2 redundant slots continue the rotation with 0 and 1.
  choice.params["redundant"] = 2;
  const Placement redundant = place_experts({1, 10, 4, 2, 1, nullptr}, choice).placement;
  EXPECT_EQ(redundant.slots[0], (std::vector<std::vector<int>>{{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}}));
}

}  // namespace
}  // namespace semsim
