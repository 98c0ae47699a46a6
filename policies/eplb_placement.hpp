#pragma once
#include "policies/placement_policies.hpp"

namespace semsim {

// DeepSeek's EPLB (policies/eplb.hpp) on the profile's per-layer expert loads: N + `redundant`
// physical slots per layer (default D: one extra per device), hierarchical over the input's nodes
// when `groups` (default: the model's expert groups) divide them, global otherwise. Slots are
// numbered GPU-major, P / D per device. A device that would get two replicas of one expert swaps
// one with the closest-load slot of another device of its node, so every device still holds P / D
// distinct experts (dropped only when no such swap exists; the solver report counts both).
PlacementResult eplb_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
