#include "policies/placement_policies.hpp"

#include <algorithm>

#include "models/input_error.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/semmoe_placement.hpp"

namespace semsim {
namespace {

PlacementResult place_contiguous(const PlacementInput& input, const PolicyChoice&) {
  return {contiguous_placement(input.moe_layers, input.experts, input.devices), {}, {}};
}

PlacementResult place_semmoe(const PlacementInput& input, const PolicyChoice& choice) {
  return semmoe_placement(input, semmoe_params(choice));
}

const std::vector<PlacementPolicyInfo>& registry() {
  static const std::vector<PlacementPolicyInfo> policies = {
      {{"contiguous", "expert e on device floor(e*D/N) (vanilla EP)", {}}, false, place_contiguous},
      {{"semmoe", "Sem-MoE's token-expert co-clustering, N/D experts per device", semmoe_param_specs()},
       true,
       place_semmoe},
  };
  return policies;
}

}  // namespace

const std::vector<PolicyInfo>& placement_policies() {
  static const std::vector<PolicyInfo> infos = [] {
    std::vector<PolicyInfo> out;
    for (const auto& policy : registry()) out.push_back(policy.info);
    return out;
  }();
  return infos;
}

PlacementResult place_experts(const PlacementInput& input, const PolicyChoice& choice) {
  const auto& policies = registry();
  const auto found = std::find_if(policies.begin(), policies.end(),
                                  [&](const PlacementPolicyInfo& p) { return p.info.name == choice.name; });
  if (found == policies.end()) throw InputError("unknown placement policy '" + choice.name + "'");
  if (found->needs_profile) {
    if (input.profile == nullptr)
      throw InputError("placement policy '" + choice.name + "' needs a routing profile (semsim profile)");
    if (input.profile->moe_layers() != input.moe_layers || input.profile->experts() != input.experts)
      throw InputError("placement policy '" + choice.name + "': the routing profile has " +
                       std::to_string(input.profile->moe_layers()) + " MoE layers of " +
                       std::to_string(input.profile->experts()) + " experts, the model " +
                       std::to_string(input.moe_layers) + " of " + std::to_string(input.experts));
  }
  return found->place(input, choice);
}

}  // namespace semsim
