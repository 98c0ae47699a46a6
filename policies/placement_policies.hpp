#pragma once
// Placement policies by name. A new policy is one file and one line in placement_policies.cpp.
#include <vector>

#include "policies/placement.hpp"
#include "policies/policy_params.hpp"

namespace semsim {

struct PlacementInput {
  int moe_layers = 0;
  int experts = 0;
  int devices = 0;
};

const std::vector<PolicyInfo>& placement_policies();
Placement place_experts(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
