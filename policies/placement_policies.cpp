#include "policies/placement_policies.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/input_error.hpp"
#include "policies/coact_placement.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/eplb_placement.hpp"
#include "policies/ilp_placement.hpp"
#include "policies/random_placement.hpp"
#include "policies/round_robin_placement.hpp"
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
      {{"round_robin", "expert e on device e mod D", {}}, false, round_robin_placement},
      {{"random",
        "a seeded random permutation per layer, N/D experts per device",
        {{"seed", 1, "permutation seed"}}},
       false,
       random_placement},
      {{"eplb",
        "DeepSeek's EPLB on the profile's expert loads, with redundant replicas",
        {{"redundant", -1, "extra physical slots per layer (-1: one per device)"},
         {"groups", 0, "expert groups for the hierarchical policy (0: the model's)"}}},
       true,
       eplb_placement},
      {{"semmoe", "Sem-MoE's token-expert co-clustering, N/D experts per device", semmoe_param_specs()},
       true,
       place_semmoe},
      {{"coact",
        "METIS k-way cut of each layer's expert co-activation graph, N/D experts per device",
        {{"seed", 1, "METIS random seed"}}},
       true,
       coact_placement},
      {{"ilp",
        "exact token-expert co-clustering of the most frequent tokens with CBC (small instances)",
        {{"tokens", 64, "most frequent profiled tokens modelled per layer"},
         {"balance", 1.10, "token load per device at most balance x mean"},
         {"time_limit", 10, "CBC seconds per layer; the gap is reported"}}},
       true,
       ilp_placement},
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
  PlacementResult result = found->place(input, choice);
  const Placement& p = result.placement;
  if (p.moe_layers != input.moe_layers || p.experts != input.experts || p.devices != input.devices)
    throw std::logic_error("placement policy '" + choice.name + "' returned a placement of another shape");
  // The node map is the input's whatever the policy did with it (replica choice reads it).
  result.placement.devices_per_node = input.devices_per_node;
  result.placement.seal();
  return result;
}

}  // namespace semsim
