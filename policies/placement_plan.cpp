#include "policies/placement_plan.hpp"

#include <chrono>

namespace semsim {

PlacementPlan make_placement_plan(const PlacementInput& input, const PolicyChoice& choice,
                                  const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PlacementResult result = place_experts(input, choice);
  const auto end = std::chrono::steady_clock::now();

  PlacementPlan plan;
  plan.policy = choice;
  plan.placement = std::move(result.placement);
  plan.token_devices = std::move(result.token_devices);
  plan.solver = std::move(result.solver);
  plan.solver_seconds = std::chrono::duration<double>(end - start).count();
  if (input.profile == nullptr) return plan;
  const RoutingProfile& profile = *input.profile;
  complete_token_devices(plan.token_devices, plan.placement, profile, options.token_balance);
  fill_unprofiled_by_text(plan.token_devices, profile);
  if (const RoutingTrace* paths = profile.profiled_paths())
    plan.inter_layer = build_inter_layer_table(plan.placement, *paths, options.lookback);
  return plan;
}

}  // namespace semsim
