#include "calibrate/fit/engine_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace semsim {
namespace {

// The fitted fields, in the order of EngineCostVector.
constexpr double EngineCosts::*kFields[kEngineCostCount] = {
    &EngineCosts::step_seconds, &EngineCosts::request_step_seconds, &EngineCosts::eager_layer_seconds,
    &EngineCosts::graph_step_seconds, &EngineCosts::request_seconds};

// Prefix sums of durations: the sum over [first, last] is at[last + 1] - at[first].
std::vector<double> prefix_sums(const std::vector<double>& durations) {
  std::vector<double> at(durations.size() + 1, 0.0);
  std::partial_sum(durations.begin(), durations.end(), at.begin() + 1);
  return at;
}

double window_seconds(const std::vector<double>& at, int first, int last) {
  return last < first ? 0.0 : at[static_cast<std::size_t>(last) + 1] - at[static_cast<std::size_t>(first)];
}

double absolute_log_ratio(double predicted, double measured) {
  if (measured <= 0 || predicted <= 0) return 0;
  return std::abs(std::log(predicted / measured));
}

using Point = EngineCostVector;  // log-seconds

Point clamped(Point x) {
  for (int i = 0; i < kEngineCostCount; ++i)
    x[i] = std::clamp(x[i], std::log(kEngineCostMin), std::log(kEngineCostMax[i]));
  return x;
}

EngineCosts costs_at(const Point& x) {
  EngineCostVector seconds;
  for (int i = 0; i < kEngineCostCount; ++i) seconds[i] = std::exp(x[i]);
  return from_vector(seconds);
}

struct Vertex {
  Point x;
  double loss;
};

// One Nelder-Mead descent (standard coefficients) from `start` with steps of `step` log-units,
// every point projected into the bounds.
Vertex nelder_mead(const std::vector<const RetimingTable*>& tables, const Point& start, double step,
                   int& evaluations) {
  const auto evaluate = [&](const Point& x) {
    ++evaluations;
    const Point inside = clamped(x);
    return Vertex{inside, retiming_loss(tables, costs_at(inside))};
  };
  std::vector<Vertex> simplex{evaluate(start)};
  for (int i = 0; i < kEngineCostCount; ++i) {
    Point x = simplex.front().x;
    // Away from the bound the start may sit on.
    x[i] += x[i] + step > std::log(kEngineCostMax[i]) ? -step : step;
    simplex.push_back(evaluate(x));
  }
  const auto along = [](const Point& from, const Point& to, double t) {
    Point x;
    for (int i = 0; i < kEngineCostCount; ++i) x[i] = from[i] + t * (to[i] - from[i]);
    return x;
  };
  constexpr int kMaxIterations = 600;
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    std::sort(simplex.begin(), simplex.end(),
              [](const Vertex& a, const Vertex& b) { return a.loss < b.loss; });
    Vertex& worst = simplex.back();
    double spread = 0;
    for (const Vertex& v : simplex)
      for (int i = 0; i < kEngineCostCount; ++i)
        spread = std::max(spread, std::abs(v.x[i] - simplex[0].x[i]));
    if (spread < 1e-4 || worst.loss - simplex[0].loss < 1e-12) break;
    Point centroid{};
    for (std::size_t v = 0; v + 1 < simplex.size(); ++v)
      for (int i = 0; i < kEngineCostCount; ++i) centroid[i] += simplex[v].x[i] / kEngineCostCount;
    const Vertex reflected = evaluate(along(worst.x, centroid, 2.0));
    if (reflected.loss < simplex[0].loss) {
      const Vertex expanded = evaluate(along(worst.x, centroid, 3.0));
      worst = expanded.loss < reflected.loss ? expanded : reflected;
    } else if (reflected.loss < simplex[simplex.size() - 2].loss) {
      worst = reflected;
    } else {
      const Vertex contracted = reflected.loss < worst.loss ? evaluate(along(worst.x, centroid, 1.5))
                                                            : evaluate(along(worst.x, centroid, 0.5));
      if (contracted.loss < std::min(worst.loss, reflected.loss)) {
        worst = contracted;
      } else {
        for (std::size_t v = 1; v < simplex.size(); ++v)
          simplex[v] = evaluate(along(simplex[0].x, simplex[v].x, 0.5));
      }
    }
  }
  return *std::min_element(simplex.begin(), simplex.end(),
                           [](const Vertex& a, const Vertex& b) { return a.loss < b.loss; });
}

}  // namespace

std::vector<double> retimed_durations(const std::vector<RetimedStep>& steps, const EngineCosts& costs) {
  std::vector<double> durations;
  durations.reserve(steps.size());
  for (const RetimedStep& s : steps)
    durations.push_back(s.kernel_seconds + exposed_host_seconds(costs, s.features, s.kernel_seconds));
  return durations;
}

RetimedMeans retime(const RetimingTable& table, const EngineCosts& costs) {
  std::vector<std::vector<double>> at;
  for (const auto& pool : table.pools) at.push_back(prefix_sums(retimed_durations(pool, costs)));
  const auto& ttft_at = at.at(static_cast<std::size_t>(table.ttft_pool));
  const auto& tpot_at = at.at(static_cast<std::size_t>(table.tpot_pool));
  double ttft = 0, tpot = 0;
  int ttft_count = 0, tpot_count = 0;
  for (const RequestWindows& r : table.requests) {
    ttft += window_seconds(ttft_at, r.ttft_first, r.ttft_last) + r.ttft_rest + costs.request_seconds;
    ++ttft_count;
    if (r.output_tokens < 2) continue;
    tpot += (window_seconds(tpot_at, r.tpot_first, r.tpot_last) + r.tpot_rest) / (r.output_tokens - 1);
    ++tpot_count;
  }
  return {ttft_count > 0 ? ttft / ttft_count : 0.0, tpot_count > 0 ? tpot / tpot_count : 0.0};
}

EngineCostVector to_vector(const EngineCosts& costs) {
  EngineCostVector values;
  for (int i = 0; i < kEngineCostCount; ++i) values[i] = costs.*kFields[i];
  return values;
}

EngineCosts from_vector(const EngineCostVector& values) {
  EngineCosts costs;
  for (int i = 0; i < kEngineCostCount; ++i) costs.*kFields[i] = values[i];
  return costs;
}

double retiming_loss(const std::vector<const RetimingTable*>& tables, const EngineCosts& costs) {
  double loss = 0;
  for (const RetimingTable* table : tables) {
    const RetimedMeans means = retime(*table, costs);
    loss += absolute_log_ratio(means.ttft_s, table->measured_ttft_s) +
            absolute_log_ratio(means.tpot_s, table->measured_tpot_s);
  }
  return loss;
}

EngineFit fit_engine_costs(const std::vector<const RetimingTable*>& tables, const EngineCosts& start) {
  EngineFit fit;
  Point x;
  const EngineCostVector seconds = to_vector(start);
  for (int i = 0; i < kEngineCostCount; ++i) x[i] = std::log(std::max(seconds[i], kEngineCostMin));
  Vertex best{clamped(x), retiming_loss(tables, costs_at(clamped(x)))};
  // Restarts with a fresh simplex: Nelder-Mead stalls on flat or bounded directions.
  constexpr int kMaxRestarts = 8;
  for (int restart = 0; restart < kMaxRestarts; ++restart) {
    const Vertex found = nelder_mead(tables, best.x, 1.0, fit.evaluations);
    const bool improved = found.loss < best.loss - 1e-12 * std::max(1.0, best.loss);
    if (found.loss < best.loss) best = found;
    if (!improved && restart > 0) break;
  }
  fit.costs = costs_at(best.x);
  fit.loss = best.loss;
  return fit;
}

}  // namespace semsim
