#pragma once
// Fits the synthetic generator's parameters to a routing trace (`semsim trace fit`; method and
// statistics in workloads/ROUTING_FIT.md) and measures how close the synthetic routing gets.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/progress.hpp"
#include "workloads/routing_trace.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {

// The statistics a fit compares, measured the same way on a real and a synthetic trace: tables from
// the profiled requests, predictor statistics on the held-out ones.
struct RoutingStatistics {
  std::vector<double> load_skew;           // per layer: max/mean expert load
  std::vector<double> f1_p50, f1_mean;     // per layer: token predictor on held-out, profiled tokens
  std::vector<double> exact_share;         // per layer: share of those with F1 = 1
  std::vector<double> f1_grouped_median;   // per layer: the F1 median interpolated within its 1/k bin
  std::vector<double> cumulative_hotness;  // per layer: median over token types
  std::vector<double> max_other_hotness;   // per layer: median over token types
  double unseen_share = 0;                 // held-out occurrences whose token was not profiled
  double layer_hit_correlation = 0;        // Pearson correlation of per-occurrence F1, adjacent layers
  double request_concentration = 0;        // share of a request's activations on its top quarter of experts
  std::vector<double> coactivation_spectrum;  // top eigenvalue shares of the normalized co-activation matrix
  bool has_token_ids = false;
};

RoutingStatistics measure_routing(const RoutingTrace& trace, const std::vector<bool>& held_out);

// A synthetic trace of `requests` (lengths and routed positions as each records them) routed by
// `routing`: request r is routed as the generator routes request id first_id + r, of topic
// topics[r]. `header` names the model and the source; its shape (layers, experts, k) is `routing`'s.
RoutingTrace synthesize_trace(std::span<const TraceRequest> requests, std::span<const int> topics,
                              const SyntheticRouting& routing, TraceHeader header, int first_id = 0);
// The same requests as `shape`, request r with topic r mod topics.
RoutingTrace synthesize_trace(const RoutingTrace& shape, const SyntheticRouting& routing);

struct RoutingFit {
  SyntheticRoutingParams params;
  RoutingStatistics real, synthetic;
  int evaluations = 0;
};

// `seed` seeds the synthetic generator; `held_out` is the split both traces are measured with.
// `progress` is told each evaluation of a candidate generator (of those the fit will make).
RoutingFit fit_synthetic_routing(const RoutingTrace& trace, const std::vector<bool>& held_out,
                                 std::uint64_t seed, const ProgressCallback& progress = {});

// fit_report.csv (per layer, real beside synthetic) and fit_summary.json.
void write_fit_report(const RoutingFit& fit, const std::string& csv_path, const std::string& json_path);

}  // namespace semsim
