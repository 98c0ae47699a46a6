#pragma once
#include "policies/routing_to_instances.hpp"

namespace semsim {

// The instance with the fewest requests in flight (lowest index on ties), as SGLang's router's
// shortest-queue mode.
int least_load_router(const RouterInput& input, const PolicyChoice& choice);

}  // namespace semsim
