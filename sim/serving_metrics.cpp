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
  double squares = 0;
  for (const double v : values) squares += (v - d.mean) * (v - d.mean);
  d.std = std::sqrt(squares / static_cast<double>(values.size()));
  d.p50 = percentile(values, 50);
  d.p90 = percentile(values, 90);
  d.p95 = percentile(values, 95);
  d.p99 = percentile(values, 99);
  d.max = *std::max_element(values.begin(), values.end());
  return d;
}

Distribution distribution_of_counted(std::vector<std::pair<double, long long>> values) {
  std::erase_if(values, [](const auto& v) { return v.second <= 0; });
  std::sort(values.begin(), values.end());
  Distribution d;
  double sum = 0;
  for (const auto& [value, count] : values) {
    d.count += count;
    sum += value * static_cast<double>(count);
  }
  if (d.count == 0) return d;
  const auto n = static_cast<double>(d.count);
  d.mean = sum / n;
  double squares = 0;
  for (const auto& [value, count] : values)
    squares += (value - d.mean) * (value - d.mean) * static_cast<double>(count);
  d.std = std::sqrt(squares / n);
  // The value of rank i (0-based) of the expanded, sorted list.
  auto at_rank = [&](long long i) {
    long long seen = 0;
    for (const auto& [value, count] : values) {
      seen += count;
      if (i < seen) return value;
    }
    return values.back().first;
  };
  auto quantile = [&](double q) {
    const double position = q / 100.0 * (n - 1);
    const auto below = static_cast<long long>(std::floor(position));
    const long long above = std::min(below + 1, d.count - 1);
    const double low = at_rank(below), high = at_rank(above);
    return low + (high - low) * (position - static_cast<double>(below));
  };
  d.p50 = quantile(50);
  d.p90 = quantile(90);
  d.p95 = quantile(95);
  d.p99 = quantile(99);
  d.max = values.back().first;
  return d;
}

namespace {

// Every inter-token gap of the completed requests, with multiplicity: a request that gets a token
// at consecutive steps k-1 and k has the gap end(k) - end(k-1), shared by every such request, so
// the gaps are counted per step (a difference array over the steps) rather than per token; a
// request's gaps over steps without its token are counted one by one.
std::vector<std::pair<double, long long>> inter_token_gaps(const RunResult& run) {
  const std::size_t steps = run.steps.size();
  std::vector<long long> starts(steps + 1, 0);  // difference array of per-step request counts
  std::vector<std::pair<double, long long>> gaps;
  for (const RequestRecord& r : run.requests) {
    if (!r.completed() || r.output_tokens < 2 || r.first_token_step < 0 ||
        r.finish_step < r.first_token_step || static_cast<std::size_t>(r.finish_step) >= steps)
      continue;
    ++starts[r.first_token_step + 1];
    --starts[r.finish_step + 1];
    for (const RequestRecord::TokenGap& gap : r.token_gaps) {
      --starts[gap.after_step + 1];
      ++starts[gap.at_step + 1];
      gaps.emplace_back(run.steps[gap.at_step].end - run.steps[gap.after_step].end, 1);
    }
  }
  long long requests = 0;
  for (std::size_t k = 1; k < steps; ++k) {
    requests += starts[k];
    if (requests > 0) gaps.emplace_back(run.steps[k].end - run.steps[k - 1].end, requests);
  }
  return gaps;
}

bool meets_slos(const RequestRecord& r, const GoodputSlos& slos) {
  // As vLLM compares them: the SLO in seconds against the request's metric.
  auto within = [](const std::optional<double>& slo_ms, double seconds) {
    return !slo_ms || *slo_ms / 1000.0 >= seconds;
  };
  const double tpot = time_per_output_token(r);
  return within(slos.ttft_ms, r.first_token - r.arrival) && within(slos.tpot_ms, tpot >= 0 ? tpot : 0.0) &&
         within(slos.e2el_ms, r.finish - r.arrival);
}

std::optional<Summary::Window> saturated_window(const std::vector<StepRecord>& steps) {
  const auto held_back = [](const StepRecord& step) {
    return step.kv_wait || step.token_budget_full || step.request_cap_full;
  };
  const auto first = std::find_if(steps.begin(), steps.end(), held_back);
  if (first == steps.end()) return std::nullopt;
  const auto last = std::find_if(steps.rbegin(), steps.rend(), held_back).base();
  Summary::Window w;
  w.steps = static_cast<int>(last - first);
  w.seconds = (last - 1)->end - first->start;
  long long prefilled = 0, decoded = 0;
  for (auto step = first; step != last; ++step) {
    prefilled += step->prefill_tokens;
    decoded += step->decode_tokens;
  }
  if (w.seconds > 0) {
    w.prefill_tok_s = static_cast<double>(prefilled) / w.seconds;
    w.decode_tok_s = static_cast<double>(decoded) / w.seconds;
  }
  return w;
}

}  // namespace

double time_per_output_token(const RequestRecord& r) {
  if (!r.completed() || r.output_tokens < 2) return -1;
  return (r.finish - r.first_token) / (r.output_tokens - 1);
}

Summary summarize(const RunResult& run, const GoodputSlos& slos) {
  Summary s;
  s.goodput_slos = slos;
  s.notes = run.notes;
  s.simulated_seconds = run.end_time;
  s.requests = static_cast<int>(run.requests.size());
  s.stopped_at_time_limit = run.stopped_at_time_limit;
  std::vector<double> ttft, tpot, e2e;
  for (const RequestRecord& r : run.requests) {
    s.offered_input_tokens += r.input_tokens;
    s.offered_output_tokens += r.output_tokens;
    s.last_arrival = std::max(s.last_arrival, r.arrival);
    s.sessions += r.session >= 0 && r.turn == 0;
    if (r.previous_turn >= 0) {
      const RequestRecord& previous = run.requests[static_cast<std::size_t>(r.previous_turn)];
      s.early_turns += !previous.completed() || previous.finish > r.arrival;
    }
    if (!r.arrived()) continue;
    ++s.requests_arrived;
    if (r.first_token >= 0) ttft.push_back(r.first_token - r.arrival);
    if (!r.completed()) {
      ++s.requests_unfinished;
      continue;
    }
    ++s.requests_completed;
    s.completed_input_tokens += r.input_tokens;
    s.completed_output_tokens += r.output_tokens;
    if (slos.any() && meets_slos(r, slos)) ++s.good_requests;
    e2e.push_back(r.finish - r.arrival);
    if (const double t = time_per_output_token(r); t >= 0) tpot.push_back(t);
  }
  s.ttft = distribution_of(ttft);
  s.tpot = distribution_of(tpot);
  s.e2e = distribution_of(e2e);
  s.itl = distribution_of_counted(inter_token_gaps(run));
  if (s.simulated_seconds > 0) {
    // Prompt tokens served: prefilled, or found in a prefix cache (bench_serving counts prompts).
    s.input_tok_s =
        static_cast<double>(run.prefill_tokens + run.prefix_cache.cached_tokens) / s.simulated_seconds;
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
    s.a2a_forwarded_bytes += step.a2a_forwarded_bytes;
    s.tp_collective_bytes += step.tp_collective_bytes;
    s.phase_totals += step.phases;
    s.comm_exposed_seconds += step.comm_exposed;
    s.comm_hidden_seconds += step.comm_hidden;
    s.experts_slowest_seconds += step.experts_slowest_seconds;
    s.experts_mean_seconds += step.experts_mean_seconds;
    s.engine_host_seconds += step.host_seconds;
    s.eager_steps += step.eager ? 1 : 0;
    s.kv_wait_step_share += step.kv_wait ? 1 : 0;
    s.token_budget_step_share += step.token_budget_full ? 1 : 0;
    s.request_cap_step_share += step.request_cap_full ? 1 : 0;
    s.kv_use_peak = std::max(s.kv_use_peak, step.kv_use);
    s.kv_use_mean += step.kv_use;
  }
  if (!run.steps.empty())
    for (double* per_step :
         {&s.kv_wait_step_share, &s.token_budget_step_share, &s.request_cap_step_share, &s.kv_use_mean})
      *per_step /= static_cast<double>(run.steps.size());
  s.saturated = saturated_window(run.steps);
  s.acceptance = run.acceptance;
  s.prefix_cache = run.prefix_cache;
  s.lar = local_activation_rate(local, activations);
  s.imbalance = activations > 0 ? weighted_imbalance / static_cast<double>(activations) : 1.0;
  s.steps = static_cast<int>(run.steps.size());
  s.mean_step_seconds = s.steps > 0 ? s.phase_totals.total() / s.steps : 0.0;
  return s;
}

}  // namespace semsim
