#include "sim/serving_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "policies/routing_metrics.hpp"

namespace semsim {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

Distribution distribution_of(const std::vector<double>& values) {
  Distribution d;
  d.count = static_cast<long long>(values.size());
  if (values.empty()) return d;
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  d.p50 = percentile(values, 50);
  d.p90 = percentile(values, 90);
  d.p99 = percentile(values, 99);
  return d;
}

double time_per_output_token(const RequestRecord& r) {
  if (!r.completed() || r.output_tokens < 2) return -1;
  return (r.finish - r.first_token) / (r.output_tokens - 1);
}

Summary summarize(const RunResult& run) {
  Summary s;
  s.notes = run.notes;
  s.simulated_seconds = run.end_time;
  s.requests = static_cast<int>(run.requests.size());
  s.stopped_at_time_limit = run.stopped_at_time_limit;
  std::vector<double> ttft, tpot, e2e;
  for (const RequestRecord& r : run.requests) {
    if (!r.arrived()) continue;
    ++s.requests_arrived;
    if (r.first_token >= 0) ttft.push_back(r.first_token - r.arrival);
    if (!r.completed()) {
      ++s.requests_unfinished;
      continue;
    }
    ++s.requests_completed;
    e2e.push_back(r.finish - r.arrival);
    if (const double t = time_per_output_token(r); t >= 0) tpot.push_back(t);
  }
  s.ttft = distribution_of(ttft);
  s.tpot = distribution_of(tpot);
  s.e2e = distribution_of(e2e);
  if (s.simulated_seconds > 0) {
    s.input_tok_s = static_cast<double>(run.prefill_tokens) / s.simulated_seconds;
    s.output_tok_s = static_cast<double>(run.output_tokens) / s.simulated_seconds;
    s.total_tok_s = s.input_tok_s + s.output_tok_s;
  }
  long long activations = 0, local = 0;
  double weighted_imbalance = 0;
  for (const StepRecord& step : run.steps) {
    activations += step.activations;
    local += step.local_activations;
    weighted_imbalance += step.imbalance * static_cast<double>(step.activations);
    s.a2a_scale_up_bytes += step.a2a_scale_up_bytes;
    s.a2a_scale_out_bytes += step.a2a_scale_out_bytes;
    s.tp_collective_bytes += step.tp_collective_bytes;
    s.phase_totals += step.phases;
    s.comm_exposed_seconds += step.comm_exposed;
    s.comm_hidden_seconds += step.comm_hidden;
  }
  s.lar = local_activation_rate(local, activations);
  s.imbalance = activations > 0 ? weighted_imbalance / static_cast<double>(activations) : 1.0;
  s.steps = static_cast<int>(run.steps.size());
  s.mean_step_seconds = s.steps > 0 ? s.phase_totals.total() / s.steps : 0.0;
  return s;
}

}  // namespace semsim
