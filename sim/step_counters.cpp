#include "sim/step_counters.hpp"

#include <algorithm>
#include <numeric>

#include "policies/routing_metrics.hpp"

namespace semsim {

StepCounters::StepCounters(const Scenario& scenario, const Topology& topology, int moe_layers)
    : scenario_(scenario),
      topology_(topology),
      layer_loads_(static_cast<std::size_t>(moe_layers), std::vector<long long>(scenario.ep, 0)) {}

void StepCounters::start_step(StepTrafficRecord& record) {
  record_ = &record;
  imbalance_sum_ = 0;
  layers_counted_ = 0;
}

void StepCounters::count_dispatch(int moe, const LayerDispatch& dispatch, std::span<const long long> copies) {
  const MoeModel& model = scenario_.model;
  record_->a2a_forwarded_bytes +=
      static_cast<double>(dispatch.forwarded) * model.hidden *
      (scenario_.dispatch_bytes_per_element + scenario_.precision.activation_bytes);
  record_->activations += dispatch.activations;
  record_->local_activations += dispatch.local_activations;
  if (moe >= 0) {
    std::vector<long long>& loads = layer_loads_[static_cast<std::size_t>(moe)];
    for (std::size_t device = 0; device < loads.size(); ++device)
      loads[device] += dispatch.device_tokens[device];
  }
  const double dispatch_copy_bytes = model.hidden * scenario_.dispatch_bytes_per_element;
  const double combine_copy_bytes = model.hidden * scenario_.precision.activation_bytes;
  const LevelBytes dispatched =
      level_bytes(CopyTraffic{copies, scenario_.ep, dispatch_copy_bytes, false}, topology_);
  // Combine mirrors dispatch (same pairs, reversed), so its level split scales with the payload.
  const double both = 1.0 + combine_copy_bytes / dispatch_copy_bytes;
  record_->a2a_scale_up_bytes += dispatched.scale_up * both;
  record_->a2a_scale_out_bytes += dispatched.scale_out * both;
}

void StepCounters::count_experts(const std::vector<double>& seconds) {
  record_->experts_slowest_seconds += *std::max_element(seconds.begin(), seconds.end());
  record_->experts_mean_seconds +=
      std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
}

void StepCounters::count_layer_load(const std::vector<long long>& device_tokens) {
  imbalance_sum_ += load_imbalance(device_tokens);
  ++layers_counted_;
}

void StepCounters::end_step() {
  // A dense model's steps route nothing: 0, as their local activation rate.
  record_->imbalance = layers_counted_ == 0 ? 0.0 : imbalance_sum_ / static_cast<double>(layers_counted_);
}

}  // namespace semsim
