#include "policies/placement_policies.hpp"

#include "policies/contiguous_placement.hpp"

namespace semsim {

const std::vector<PolicyInfo>& placement_policies() {
  static const std::vector<PolicyInfo> policies = {
      {"contiguous", "expert e on device floor(e*D/N) (vanilla EP)", {}},
  };
  return policies;
}

Placement place_experts(const PlacementInput& input, const PolicyChoice&) {
  return contiguous_placement(input.moe_layers, input.experts, input.devices);
}

}  // namespace semsim
