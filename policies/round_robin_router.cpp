#include "policies/round_robin_router.hpp"

namespace semsim {

int round_robin_router(const RouterInput& input, const PolicyChoice&) {
  return static_cast<int>(input.routed % static_cast<long long>(input.instances.size()));
}

}  // namespace semsim
