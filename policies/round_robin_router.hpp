#pragma once
#include "policies/routing_to_instances.hpp"

namespace semsim {

// Instance routed % instances: every instance in turn, blind to load and content.
int round_robin_router(const RouterInput& input, const PolicyChoice& choice);

}  // namespace semsim
