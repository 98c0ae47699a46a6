#pragma once
#include "policies/placement_policies.hpp"

namespace semsim {

// A seeded random permutation of the experts per layer, placed contiguously: each device gets
// N/D experts (floor or ceiling when D does not divide N). Parameter `seed`.
PlacementResult random_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
