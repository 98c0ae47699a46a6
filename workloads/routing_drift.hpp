#pragma once
// How far the routing of some requests is from the routing a profile saw: a placement made from a
// profile is only as good as the traffic still looks like it. Per MoE layer, two measures:
// - popularity: the Jensen-Shannon divergence (base 2, 0 .. 1) between the two expert-load
//   distributions, which placement balancing and EPLB follow;
// - co-activation: the distance between the spectra of the two expert co-activation matrices
//   (tokens routed to both a and b), each scaled to unit Frobenius norm, so the distance of the
//   sorted eigenvalues is 0 .. 2. It sees which experts travel together — what co-clustering
//   placements follow — whatever the experts are called. Top-1 routing has no pairs: not measured.
#include <algorithm>
#include <optional>
#include <vector>

#include "workloads/routing_profile.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

// Per MoE layer: activations per expert, and co-activations of each pair a < b.
struct RoutingCounts {
  int experts = 0;
  std::vector<std::vector<double>> load;          // [layer][expert]
  std::vector<std::vector<double>> coactivation;  // [layer][a * experts + b], a < b; empty for top-1

  static RoutingCounts of(const RoutingProfile& profile);
  // The requests of `trace` with `selected[r]` (empty: every request).
  static RoutingCounts of(const RoutingTrace& trace, const std::vector<bool>& selected = {});
};

struct RoutingDrift {
  double popularity_mean = 0, popularity_max = 0;  // Jensen-Shannon divergence, bits
  int popularity_max_layer = 0;
  std::optional<double> coactivation_mean, coactivation_max;  // spectral distance; none for top-1
  // Sampling noise: the same maxima between two halves of the evaluated requests (every other
  // request), which differ by chance alone — and by more than the evaluated requests differ from a
  // profile of as many or more requests of the same traffic. None when not measured.
  std::optional<double> popularity_noise, coactivation_noise;
  // Floors of the warning, for large samples whose noise is tiny: round heuristics, not fitted. In
  // the tests two samples of the same synthetic traffic (6,400 tokens a layer) differ by 0.0004
  // bits and 0.02; popularity rotated by one expert of 16 gives 0.09 bits, and the experts that
  // travel together no longer paired, 0.10.
  static constexpr double kPopularityWarning = 0.02, kCoactivationWarning = 0.05;
  // Stale: beyond both the floor and the noise at some layer.
  bool stale() const {
    return popularity_max > std::max(kPopularityWarning, popularity_noise.value_or(0)) ||
           coactivation_max.value_or(0) > std::max(kCoactivationWarning, coactivation_noise.value_or(0));
  }
};

// InputError when the two come from routings of different shapes (layers, experts).
RoutingDrift routing_drift(const RoutingCounts& profiled, const RoutingCounts& evaluated);
// The same for the requests of `trace` with `evaluated[r]` (empty: all), with the noise measured.
RoutingDrift routing_drift(const RoutingCounts& profiled, const RoutingTrace& trace,
                           const std::vector<bool>& evaluated = {});

}  // namespace semsim
