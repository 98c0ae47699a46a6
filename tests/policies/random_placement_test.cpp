#include "policies/random_placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

PolicyChoice random_seed(double seed) {
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "random");
  choice.params["seed"] = seed;
  return choice;
}

TEST(RandomPlacement, ExactlyNOverDExpertsPerDeviceEachOnce) {
  const Placement p = place_experts({3, 64, 8, 0, 1, nullptr}, random_seed(7)).placement;
  for (int layer = 0; layer < 3; ++layer) {
    std::vector<int> seen;
    for (const auto& device : p.slots[layer]) {
      EXPECT_EQ(device.size(), 8u);
      seen.insert(seen.end(), device.begin(), device.end());
    }
    std::sort(seen.begin(), seen.end());
    for (int e = 0; e < 64; ++e) EXPECT_EQ(seen[e], e);
  }
  EXPECT_FALSE(p.has_replicas());
}

TEST(RandomPlacement, SeedDecidesLayersDiffer) {
  const PlacementInput input{2, 16, 4, 0, 1, nullptr};
  const Placement a = place_experts(input, random_seed(1)).placement;
  EXPECT_EQ(a, place_experts(input, random_seed(1)).placement);
  EXPECT_NE(a.slots, place_experts(input, random_seed(2)).placement.slots);
  EXPECT_NE(a.slots[0], a.slots[1]);
  EXPECT_NE(
      a.slots,
      place_experts(input, default_policy_choice(PolicyKind::kPlacement, "contiguous")).placement.slots);
}

TEST(RandomPlacement, RejectsAFractionalSeed) {
  EXPECT_THROW(place_experts({1, 8, 2, 0, 1, nullptr}, random_seed(1.5)), InputError);
  EXPECT_THROW(place_experts({1, 8, 2, 0, 1, nullptr}, random_seed(-1)), InputError);
}

}  // namespace
}  // namespace semsim
