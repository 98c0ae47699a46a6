#pragma once
// The cost of one lockstep forward step across the EP group, phase by phase: attention per rank,
// dispatch built from the tokens' actual routing, grouped experts per device, combine. Under
// Attention-TP the group runs one batch: attention with heads sharded over the ranks, a
// reduce-scatter leaving each rank its slice of the tokens (positional, or Sem-MoE's reshuffle),
// the MoE layer from the slices, and an all-gather so the next attention sees every token.
#include <memory>
#include <vector>

#include "models/operator_costs.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement.hpp"
#include "policies/semmoe_token_scheduling.hpp"
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
  // `rank_cost` prices each rank's attention, dense FFN and LM head: `cost_model` itself under
  // Attention-DP, one of the model's TP shard (attention_tp_shard) under Attention-TP. Sem-MoE's
  // reshuffle reads the scenario's placement plan. Steps in `timeline` also record when each phase
  // ran on each device.
  StepCost(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
           const CostModel& cost_model, const CostModel& rank_cost, CollectiveNetwork& network,
           const Topology& topology, StepWindow timeline = {});

  // Simulates the step: advances `clock` by its duration (blocking in `flow` fidelity) and fills
  // the record. Attention-DP: `tokens[i]` runs on rank `token_rank[i]`, `batches` holds one batch
  // per rank. Attention-TP: `batches` holds the group's one batch; the token scheduling policy
  // decides each token's rank per MoE layer.
  void run(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
           const std::vector<int>& token_rank, StepClock& clock, StepRecord& record);

  // Per MoE layer, summed over the steps run so far.
  const std::vector<LayerTotals>& layer_totals() const { return layer_totals_; }
  // The spans of the steps run so far that fall in the timeline window.
  const std::vector<StepSpans>& timeline() const { return timeline_; }

 private:
  double max_over_ranks(const std::vector<double>& per_rank) const;
  // Counts each rank's tokens under `token_rank` and prices their gate and shared experts.
  void price_rank_tokens(const std::vector<int>& token_rank);
  // Sem-MoE's ranks at MoE layer `moe` from the tokens' majority devices at the previous layers.
  const std::vector<int>& reshuffled_ranks(int moe);
  // An Attention-TP reduce-scatter (each rank receives its slice's partial sums from every other
  // rank) or all-gather (each rank sends its slice to every other rank): the same traffic, every
  // slice padded to the largest of `rank_tokens_`.
  double slice_collective(StepClock& clock, StepRecord& record);

  const Scenario& scenario_;
  const Placement& placement_;
  const RoutingSource& routing_;
  const CostModel& cost_;
  const CostModel& rank_cost_;
  CollectiveNetwork& network_;
  const Topology& topology_;
  std::vector<int> moe_layer_ids_;  // model layer index of each MoE layer
  LayerDispatch dispatch_;
  TrafficMatrix traffic_;         // Attention-TP's slice collectives
  std::vector<TokenRef> tokens_;  // the step's tokens with their vocabulary ids
  std::vector<ExpertId> experts_;
  std::vector<int> local_counts_;
  std::vector<double> device_experts_;  // per device: routed + shared expert seconds of one layer
  std::vector<int> rank_tokens_;        // per rank: tokens it gates (and runs shared experts on)
  std::vector<double> gate_, shared_;   // per rank: seconds for those tokens
  std::vector<int> positional_ranks_;   // Attention-TP: each token's slice by position
  std::vector<std::int32_t> token_ids_;
  std::vector<int> majority_;  // Sem-MoE: [moe layer * tokens + token] majority device this step
  std::vector<int> previous_devices_;
  TokenReshuffle reshuffle_;
  std::vector<LayerTotals> layer_totals_;
  StepWindow timeline_window_;
  std::vector<StepSpans> timeline_;
  long long steps_run_ = 0;
};

}  // namespace semsim
