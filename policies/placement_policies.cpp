#include "policies/placement_policies.hpp"

#include <stdexcept>

#include "models/input_error.hpp"
#include "policies/policy_registry.hpp"

namespace semsim {

PlacementResult place_experts(const PlacementInput& input, const PolicyChoice& choice) {
  const PolicyEntry& entry = policy_entry(PolicyKind::kPlacement, choice.name);
  const std::string unmet = unmet_requirement(entry, {std::nullopt, input.profile != nullptr, false});
  if (!unmet.empty()) throw InputError(unmet);
  if (entry.requirements.needs_profile &&
      (input.profile->moe_layers() != input.moe_layers || input.profile->experts() != input.experts))
    throw InputError("placement policy '" + choice.name + "': the routing profile has " +
                     std::to_string(input.profile->moe_layers()) + " MoE layers of " +
                     std::to_string(input.profile->experts()) + " experts, the model " +
                     std::to_string(input.moe_layers) + " of " + std::to_string(input.experts));
  PlacementResult result = std::get<PlacementFactory>(entry.factory)(input, choice);
  const Placement& p = result.placement;
  if (p.moe_layers != input.moe_layers || p.experts != input.experts || p.devices != input.devices)
    throw std::logic_error("placement policy '" + choice.name + "' returned a placement of another shape");
  // The node map is the input's whatever the policy did with it (replica choice reads it).
  result.placement.devices_per_node = input.devices_per_node;
  result.placement.seal();
  return result;
}

}  // namespace semsim
