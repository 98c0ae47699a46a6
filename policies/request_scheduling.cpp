#include "policies/request_scheduling.hpp"

#include "policies/round_robin_scheduler.hpp"
#include "policies/shortest_queue_scheduler.hpp"

namespace semsim {

const std::vector<PolicyInfo>& request_scheduling_policies() {
  static const std::vector<PolicyInfo> policies = {
      {"round_robin", "request i to rank i mod D (SGLang default)", {}},
      {"shortest_queue", "rank with the fewest outstanding tokens", {}},
  };
  return policies;
}

std::unique_ptr<RequestScheduler> make_request_scheduler(const PolicyChoice& choice) {
  if (choice.name == "shortest_queue") return std::make_unique<ShortestQueueScheduler>();
  return std::make_unique<RoundRobinScheduler>();
}

}  // namespace semsim
