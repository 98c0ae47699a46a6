#pragma once
// Routers: which serving instance of a deployment (scenario `deployment:`) an arriving request goes
// to. A router is a pure function of what a real one knows at the request's arrival: how many
// requests it has routed, each instance's requests in flight (routed, not yet finished) and, for
// expert_affinity, each instance's estimated local activation rate for this request. Registered
// under PolicyKind::kRouter (policies/policy_registry.cpp).
#include <span>

#include "policies/policy_params.hpp"

namespace semsim {

struct InstanceLoad {
  int in_flight = 0;  // routed to the instance and not yet finished
  // The request's local activation rate there, estimated (sim/instance_router.cpp says how); only
  // routers that read affinity get it (0 otherwise).
  double affinity = 0;
};

struct RouterInput {
  long long routed = 0;  // requests routed before this one
  std::span<const InstanceLoad> instances;
};

// The instance (an index into input.instances) for the arriving request.
using Router = int (*)(const RouterInput& input, const PolicyChoice& choice);

// The affinity a router reads: none; estimated from what is known at arrival (the prompt's token
// ids through each instance's token→device table); in hindsight, from the request's actual
// routing (a bound no online router reaches); or the share of the request's prompt that the
// prompts the router sent each instance before start with (its own record of their prefix caches,
// as a cache-aware router keeps one: what it sent, not what the instance still holds).
enum class AffinityInput { kNone, kPromptEstimate, kHindsight, kSentPrefixes };

// A registry entry's router: the function and the affinity it reads.
struct RouterPolicy {
  Router route = nullptr;
  AffinityInput affinity = AffinityInput::kNone;
};

}  // namespace semsim
