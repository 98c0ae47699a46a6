#include "policies/least_load_router.hpp"

namespace semsim {

int least_load_router(const RouterInput& input, const PolicyChoice&) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(input.instances.size()); ++i)
    if (input.instances[i].in_flight < input.instances[best].in_flight) best = i;
  return best;
}

}  // namespace semsim
