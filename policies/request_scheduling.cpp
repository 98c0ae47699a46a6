#include "policies/request_scheduling.hpp"

#include "models/input_error.hpp"
#include "policies/round_robin_scheduler.hpp"
#include "policies/semmoe_dp_scheduler.hpp"
#include "policies/shortest_queue_scheduler.hpp"

namespace semsim {

const std::vector<PolicyInfo>& request_scheduling_policies() {
  static const std::vector<PolicyInfo> policies = {
      {"round_robin", "request i to rank i mod D (SGLang default)", {}},
      {"shortest_queue", "rank with the fewest outstanding tokens", {}},
      {"semmoe_dp",
       "Sem-MoE: most prompt-token votes among ranks not yet masked; mask resets every D requests",
       {}},
      {"semmoe_dp_balanced",
       "ours: prompt-token vote share minus load_weight x relative excess load (no mask)",
       {{"load_weight", 1.0, "weight of a rank's outstanding tokens above the mean, relative to the mean"}}},
  };
  return policies;
}

std::unique_ptr<RequestScheduler> make_request_scheduler(const PolicyChoice& choice,
                                                         const PlacementPlan& plan) {
  if (choice.name == "shortest_queue") return std::make_unique<ShortestQueueScheduler>();
  if (choice.name == "round_robin") return std::make_unique<RoundRobinScheduler>();
  if (plan.token_devices.empty())
    throw InputError(
        "request scheduling '" + choice.name +
        "' needs the placement's token→device table: a profile-driven placement (semmoe, ...) or a "
        "placement file that has one");
  const int devices = plan.placement.devices;
  std::vector<std::int16_t> votes = dp_vote_devices(plan.token_devices, devices);
  if (choice.name == "semmoe_dp") return std::make_unique<SemMoeDpScheduler>(std::move(votes), devices);
  return std::make_unique<SemMoeDpBalancedScheduler>(std::move(votes), devices, choice.param("load_weight"));
}

}  // namespace semsim
