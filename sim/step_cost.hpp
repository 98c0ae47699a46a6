#pragma once
// The cost of one lockstep forward step across the EP group, phase by phase: attention per rank,
// dispatch built from the tokens' actual routing, grouped experts per device, combine.
#include <memory>
#include <vector>

#include "models/operator_costs.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement.hpp"
#include "sim/cost_model.hpp"
#include "sim/network.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

// The work of one rank in a step.
struct RankBatch {
  std::vector<SequenceChunk> chunks;  // one per request with tokens in this step
  int tokens = 0;                     // sum of chunk sizes
  int logits = 0;                     // tokens that produce a next token (LM head)
};

class StepCost {
 public:
  // Steps in `timeline` also record when each phase ran on each device.
  StepCost(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
           const CostModel& cost_model, CollectiveNetwork& network, const Topology& topology,
           StepWindow timeline = {});

  // Simulates the step: advances `clock` by its duration (blocking in `flow` fidelity) and fills
  // the record. `tokens[i]` runs on rank `token_rank[i]`.
  void run(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
           const std::vector<int>& token_rank, StepClock& clock, StepRecord& record);

  // Per MoE layer, summed over the steps run so far.
  const std::vector<LayerTotals>& layer_totals() const { return layer_totals_; }
  // The spans of the steps run so far that fall in the timeline window.
  const std::vector<StepSpans>& timeline() const { return timeline_; }

 private:
  double max_over_ranks(const std::vector<double>& per_rank) const;
  void fill_traffic(double bytes_per_copy, bool transpose);

  const Scenario& scenario_;
  const Placement& placement_;
  const RoutingSource& routing_;
  const CostModel& cost_;
  CollectiveNetwork& network_;
  const Topology& topology_;
  std::vector<int> moe_layer_ids_;  // model layer index of each MoE layer
  LayerDispatch dispatch_;
  TrafficMatrix traffic_;
  std::vector<TokenRef> tokens_;  // the step's tokens with their vocabulary ids
  std::vector<ExpertId> experts_;
  std::vector<int> local_counts_;
  std::vector<double> device_experts_;  // per device: routed + shared expert seconds of one layer
  std::vector<LayerTotals> layer_totals_;
  StepWindow timeline_window_;
  std::vector<StepSpans> timeline_;
  long long steps_run_ = 0;
};

}  // namespace semsim
