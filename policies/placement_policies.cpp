#include "policies/placement_policies.hpp"

#include <algorithm>

#include "models/input_error.hpp"
#include "policies/coact_placement.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/ilp_placement.hpp"

namespace semsim {
namespace {

PlacementResult place_contiguous(const PlacementInput& input, const PolicyChoice&) {
  return {contiguous_placement(input.moe_layers, input.experts, input.devices), {}, {}};
}

const std::vector<PlacementPolicyInfo>& registry() {
  static const std::vector<PlacementPolicyInfo> policies = {
      {{"contiguous", "expert e on device floor(e*D/N) (vanilla EP)", {}}, false, place_contiguous},
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
  return found->place(input, choice);
}

}  // namespace semsim
