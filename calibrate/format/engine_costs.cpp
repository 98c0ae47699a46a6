#include "calibrate/format/engine_costs.hpp"

#include <algorithm>

namespace semsim {
namespace {

double launch_seconds(const EngineCosts& costs, const StepFeatures& step) {
  return step.eager ? costs.eager_layer_seconds * step.layers : costs.graph_step_seconds;
}

// The host work that may run while another step computes: all but an eager step's launches.
double schedulable_seconds(const EngineCosts& costs, const StepFeatures& step) {
  return costs.step_seconds + costs.request_step_seconds * step.batch_requests +
         (step.eager ? 0.0 : costs.graph_step_seconds);
}

}  // namespace

double host_seconds(const EngineCosts& costs, const StepFeatures& step) {
  return costs.step_seconds + costs.request_step_seconds * step.batch_requests + launch_seconds(costs, step);
}

double exposed_host_seconds(const EngineCosts& costs, const StepFeatures& step, double gpu_seconds) {
  if (!step.overlapped) return host_seconds(costs, step);
  const double eager_launches = step.eager ? launch_seconds(costs, step) : 0.0;
  return std::max(0.0, schedulable_seconds(costs, step) - gpu_seconds) + eager_launches;
}

int cuda_graph_padded_batch(int batch, int max_batch) {
  // The captured sizes in order: each range's first size, step and last size.
  struct Range {
    int first, step, last;
  };
  static constexpr Range kRanges[] = {
      {1, 1, 2}, {4, 4, 12}, {16, 8, 256}, {272, 16, 496}, {512, 32, 1 << 30}};
  for (const Range& r : kRanges) {
    if (batch > r.last) continue;
    const int size = batch <= r.first ? r.first : r.first + (batch - r.first + r.step - 1) / r.step * r.step;
    return size <= max_batch ? size : 0;
  }
  return 0;
}

}  // namespace semsim
