#pragma once
#include "policies/placement_policies.hpp"

namespace semsim {

// Expert e of every layer on device e mod D: neighbouring expert ids land on different devices.
// With redundant slots (parameter `redundant`), physical slot p of the P = N + redundant holds
// logical expert p mod N, dealt on in the same rotation, each round of lcm(N, D) slots starting one
// device later: slot p is on device (p + floor(p / lcm(N, D))) mod D, which keeps an expert's
// copies on distinct devices and gives every device P / D slots.
PlacementResult round_robin_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
