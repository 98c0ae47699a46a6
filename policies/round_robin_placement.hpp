#pragma once
#include "policies/placement_policies.hpp"

namespace semsim {

// Expert e of every layer on device e mod D: neighbouring expert ids land on different devices.
PlacementResult round_robin_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
