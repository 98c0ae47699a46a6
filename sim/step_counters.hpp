#pragma once
// What a step's routing moves and loads, whatever its timing: the step record's traffic part
// (StepTrafficRecord, written only here) and the run-long routed activations per MoE layer and device.
#include <span>
#include <vector>

#include "policies/dispatch.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"

namespace semsim {

class StepCounters {
 public:
  StepCounters(const Scenario& scenario, const Topology& topology, int moe_layers);

  // The record the step's counts go to, from zero.
  void start_step(StepTrafficRecord& record);
  // One micro-batch's dispatch of MoE layer `moe`, whose copies are `copies` (the combine mirrors them);
  // `moe` -1: a speculative draft pass's, counted in the step's traffic but no layer's load.
  void count_dispatch(int moe, const LayerDispatch& dispatch, std::span<const long long> copies);
  // An Attention-TP shard collective's bytes over the topology.
  void count_shard_collective(double bytes) { record_->tp_collective_bytes += bytes; }
  // One expert activity's seconds per device.
  void count_experts(const std::vector<double>& seconds);
  // A MoE layer's expert-side load per device, over the step's micro-batches.
  void count_layer_load(const std::vector<long long>& device_tokens);
  // The mean imbalance over the layers counted.
  void end_step();

  // Per MoE layer, the routed activations each device served so far.
  const std::vector<std::vector<long long>>& layer_loads() const { return layer_loads_; }

 private:
  const Scenario& scenario_;
  const Topology& topology_;
  StepTrafficRecord* record_ = nullptr;
  double imbalance_sum_ = 0;
  int layers_counted_ = 0;
  std::vector<std::vector<long long>> layer_loads_;
};

}  // namespace semsim
