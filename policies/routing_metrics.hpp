#pragma once
// The project's one definition of the routing-level metrics (design.md, "Metrics").
#include "workloads/load_imbalance.hpp"  // load_imbalance: max over devices of expert-side load / mean

namespace semsim {

// Local activation rate: routed activations served on the device holding the token when the layer
// starts, over all routed activations (shared experts excluded). 0 when there are none.
inline double local_activation_rate(long long local_activations, long long activations) {
  return activations > 0 ? static_cast<double>(local_activations) / static_cast<double>(activations) : 0.0;
}

}  // namespace semsim
