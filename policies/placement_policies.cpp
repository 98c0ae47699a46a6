#include "policies/placement_policies.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "models/input_error.hpp"
#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

constexpr const char* kRedundantParam = "redundant";

// The placement policies that place N + R slots however they split over the devices: those that
// declare the redundant parameter and do not keep N/D experts per device, in registration order.
std::vector<std::string> uneven_policies() {
  std::vector<std::string> names;
  for (const PolicyEntry& entry : policies_of(PolicyKind::kPlacement))
    for (const ParamSpec& param : entry.params)
      if (param.name == kRedundantParam && !entry.requirements.equal_groups) names.push_back(entry.name);
  return names;
}

}  // namespace

ParamSpec redundant_experts(double default_value) {
  return {kRedundantParam, default_value, "extra physical slots per layer, replicas (-1: one per device)"};
}

int physical_slots(const PolicyChoice& choice, int experts, int devices) {
  if (!choice.params.contains(kRedundantParam)) return experts;
  const long long redundant = choice.whole_param(kRedundantParam, -1, 1 << 20);
  return experts + (redundant < 0 ? devices : static_cast<int>(redundant));
}

PhysicalSlotsCheck check_physical_slots(const PolicyChoice& choice, int experts, int devices,
                                        const std::string& experts_of) {
  const int physical = physical_slots(choice, experts, devices);
  const int redundant = physical - experts;
  // Equal groups of N/D experts per device need an EP size that divides the experts, whatever R.
  const bool unequal_groups = policy_entry(PolicyKind::kPlacement, choice.name).requirements.equal_groups &&
                              experts % devices != 0;
  if (physical % devices == 0 && physical / devices <= experts && !unequal_groups) return {};
  const std::string routed =
      fmt::format("{} routed experts{}", experts, experts_of.empty() ? "" : " of '" + experts_of + "'");
  const bool one_per_device = choice.params.contains(kRedundantParam) && choice.param(kRedundantParam) < 0;
  const std::string slots = fmt::format("the {} + {} redundant{} = {} physical slots per layer", routed,
                                        redundant, one_per_device ? " (-1: one per device)" : "", physical);
  // A count the policy was given is kept or raised; one per device is a rule, not a count.
  const int at_least = one_per_device ? 1 : redundant;
  const int fit = at_least + (devices - (experts + at_least) % devices) % devices;
  const int most = experts * (devices - 1);  // every device holding every expert
  if (fit > most)
    return {
        fmt::format("{} put more than {} on some of the {} devices (a device holds an expert at most once): "
                    "give at most {} redundant experts",
                    slots, experts, devices, most),
        -1};
  const std::string give = fmt::format("give {} redundant experts ({} slots per layer, {} per device)", fit,
                                       experts + fit, (experts + fit) / devices);
  if (unequal_groups)
    return {
        fmt::format("EP size {} does not divide the {}, and placement policy '{}' puts an equal number of "
                    "them on every device (its redundant slots only add replicas): {} with one that "
                    "splits them unevenly ({})",
                    devices, routed, choice.name, give, fmt::join(uneven_policies(), ", ")),
        fit, true};
  const std::string split = redundant == 0
                                ? fmt::format("EP size {} does not divide the {}", devices, routed)
                                : fmt::format("{} do not split evenly over EP size {}", slots, devices);
  return {fmt::format("{}: {}", split, give), fit};
}

PlacementResult place_experts(const PlacementInput& input, const PolicyChoice& choice) {
  const PolicyEntry& entry = policy_entry(PolicyKind::kPlacement, choice.name);
  const std::string unmet = unmet_requirement(entry, {std::nullopt, input.profile != nullptr, false});
  if (!unmet.empty()) throw InputError(unmet);
  const PhysicalSlotsCheck slots = check_physical_slots(choice, input.experts, input.devices, "");
  if (!slots.problem.empty()) throw InputError(slots.problem);
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
