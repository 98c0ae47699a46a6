#include "policies/expert_affinity_router.hpp"

namespace semsim {

int expert_affinity_router(const RouterInput& input, const PolicyChoice& choice) {
  const auto& instances = input.instances;
  long long in_flight = 0;
  for (const InstanceLoad& instance : instances) in_flight += instance.in_flight;
  const double cap = (1.0 + choice.param("load_slack")) * static_cast<double>(in_flight) /
                         static_cast<double>(instances.size()) +
                     1.0;
  int best = -1;
  for (int i = 0; i < static_cast<int>(instances.size()); ++i) {
    if (instances[i].in_flight >= cap) continue;
    if (best < 0 || instances[i].affinity > instances[best].affinity ||
        (instances[i].affinity == instances[best].affinity &&
         instances[i].in_flight < instances[best].in_flight))
      best = i;
  }
  return best;
}

}  // namespace semsim
