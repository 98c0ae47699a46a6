#pragma once
// Imbalance: max over units (devices, or experts in a routing profile) of token load divided by the
// mean; 1 when idle. Defined here, below policies/, so that routing profiles (workloads) measure
// expert load skew with the engine's definition; policies/routing_metrics.hpp re-exports it.
#include <span>

namespace semsim {

double load_imbalance(std::span<const long long> loads);

}  // namespace semsim
