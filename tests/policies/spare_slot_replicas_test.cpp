#include "policies/spare_slot_replicas.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace semsim {
namespace {

using Slots = std::vector<std::vector<int>>;

// Experts {0, 1} {2} {3}, two slots each, loads .1 .2 .6 .1. Expert 2 (.6) goes to device 2, the
// only spare-slot device without it; at .3 per replica it stays the hottest but device 1 already
// holds it, so expert 1 (.2) takes device 1's slot.
TEST(SpareSlotReplicas, ReplicatesTheMostLoadPerReplicaWhereADeviceLacksIt) {
  const std::vector<double> load = {0.1, 0.2, 0.6, 0.1};
  const std::vector<double> no_demand(3 * 4, 0.0);
  EXPECT_EQ(fill_spare_slots({{0, 1}, {2}, {3}}, 2, load, no_demand), (Slots{{0, 1}, {2, 1}, {3, 2}}));
}

// Expert 0 (.7) twice: first on device 2, whose tokens use it more than device 1's, then, at .35
// per replica still above the others' .1, on device 1.
TEST(SpareSlotReplicas, PlacesEachReplicaOnTheDeviceWhoseTokensUseItMost) {
  const std::vector<double> load = {0.7, 0.1, 0.1, 0.1};
  std::vector<double> demand(3 * 4, 0.0);  // [device * 4 + expert]
  demand[1 * 4 + 0] = 0.05;
  demand[2 * 4 + 0] = 0.2;
  EXPECT_EQ(fill_spare_slots({{0, 1}, {2}, {3}}, 2, load, demand), (Slots{{0, 1}, {2, 0}, {3, 0}}));
  // Equal demand: the lower device id. Expert 0 (.4) once, on device 1; at .2 per replica it falls
  // below expert 2 (.35), which device 2 lacks.
  const std::vector<double> uneven = {0.4, 0.1, 0.35, 0.15};
  const std::vector<double> even(3 * 4, 0.1);
  EXPECT_EQ(fill_spare_slots({{0, 1}, {2}, {3}}, 2, uneven, even), (Slots{{0, 1}, {2, 0}, {3, 2}}));
}

// Expert 0 (.9) gets device 1's first spare slot, and then no more: both devices hold it. The
// remaining slots go to experts 1 and 2 where they are missing.
TEST(SpareSlotReplicas, NeverPutsTwoCopiesOnOneDevice) {
  const std::vector<double> load = {0.9, 0.05, 0.05};
  const std::vector<double> no_demand(2 * 3, 0.0);
  EXPECT_EQ(fill_spare_slots({{0, 1}, {2}}, 3, load, no_demand), (Slots{{0, 1, 2}, {2, 0, 1}}));
  // Already full: unchanged.
  EXPECT_EQ(fill_spare_slots({{0, 1}, {2, 0}}, 2, load, no_demand), (Slots{{0, 1}, {2, 0}}));
}

TEST(SpareSlotReplicas, RejectsInputBreakingItsRules) {
  const std::vector<double> load = {0.5, 0.5};
  const std::vector<double> demand(2 * 2, 0.0);
  EXPECT_THROW(fill_spare_slots({{0, 0}, {1}}, 2, load, demand), std::invalid_argument);  // twice
  EXPECT_THROW(fill_spare_slots({{0}, {0}}, 2, load, demand), std::invalid_argument);     // 1 nowhere
  EXPECT_THROW(fill_spare_slots({{0, 1}, {1}}, 1, load, demand), std::invalid_argument);  // over full
  EXPECT_THROW(fill_spare_slots({{0}, {1}}, 3, load, demand), std::invalid_argument);     // > experts
  const std::vector<double> short_demand(2, 0.0);
  EXPECT_THROW(fill_spare_slots({{0}, {1}}, 2, load, short_demand), std::invalid_argument);
}

}  // namespace
}  // namespace semsim
