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
  plan.profiled_on = profile.source();
  complete_token_devices(plan.token_devices, plan.placement, profile, options.token_balance);
  fill_unprofiled_by_text(plan.token_devices, profile);
  if (!plan.token_devices.empty()) plan.token_devices.texts = profile.token_texts();
  if (const RoutingTrace* paths = profile.profiled_paths())
    plan.inter_layer = build_inter_layer_table(plan.placement, *paths, options.lookback);
  return plan;
}

std::shared_ptr<const PlacementPlan> plan_for_vocabulary(std::shared_ptr<const PlacementPlan> plan,
                                                         const std::vector<std::string>& vocabulary,
                                                         TokenTableMatch& match) {
  TokenDeviceTable table = token_table_for(plan->token_devices, vocabulary, match);
  if (match.same_vocabulary) return plan;
  auto rekeyed = std::make_shared<PlacementPlan>(*plan);
  rekeyed->token_devices = std::move(table);
  return rekeyed;
}

}  // namespace semsim
