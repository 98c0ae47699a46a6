#pragma once
#include "policies/placement_policies.hpp"

namespace semsim {

// A seeded random permutation of the experts per layer, placed as contiguous_placement places
// expert ids: each device gets (N + redundant) / D slots, and the redundant slots replicate the
// experts the permutation puts first. Parameters `seed` and `redundant`.
PlacementResult random_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
