#include "policies/round_robin_placement.hpp"

#include <gtest/gtest.h>

#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

TEST(RoundRobinPlacement, ExpertOnDeviceEModD) {
  const PlacementResult r =
      place_experts({2, 10, 4, 2, 1, nullptr}, default_policy_choice(PolicyKind::kPlacement, "round_robin"));
  const Placement& p = r.placement;
  EXPECT_EQ(p.slots[0][0], (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(p.slots[1][1], (std::vector<int>{1, 5, 9}));
  EXPECT_EQ(p.slots[0][3], (std::vector<int>{3, 7}));
  EXPECT_FALSE(p.has_replicas());
  EXPECT_EQ(p.devices_per_node, 2);
  EXPECT_TRUE(r.token_devices.empty());
}

}  // namespace
}  // namespace semsim
