#pragma once
#include "policies/routing_to_instances.hpp"

namespace semsim {

// Sem-MoE's inter-request scheduling lifted to instances: the instance with the highest affinity
// (the request's estimated local activation rate under that instance's expert placement) among
// those under the load cap: in flight < (1 + load_slack) × the mean in flight + 1 (the one request
// of slack lets an idle deployment go by affinity alone). Ties: fewer in flight, then lowest index.
// The least loaded instance is always under the cap, so some instance always qualifies.
int expert_affinity_router(const RouterInput& input, const PolicyChoice& choice);

}  // namespace semsim
