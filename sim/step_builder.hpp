#pragma once
// Turns one step's batches into its activity graph (sim/step_graph.hpp), per attention mode:
// - Attention-DP: per MoE layer, each rank's attention + gate, the dispatch all-to-allv built from
//   the tokens' actual routing, each device's grouped experts, the combine.
// - Attention-TP: the group runs one batch with heads sharded; a reduce-scatter leaves each rank
//   its slice of the tokens (the token scheduler's: positional, or a reshuffle with its two
//   permutes), the MoE layer runs from the slices, and an all-gather gives the next attention every
//   token.
// - Experts split by tensor parallelism (parallelism.moe.tp = every device): no dispatch. The
//   attention's all-reduce (Attention-TP) or an all-gather (Attention-DP) gives every device every
//   token, each device runs its slice of every expert on all of them (and of the shared experts),
//   and an all-reduce (Attention-TP) or a reduce-scatter (Attention-DP) sums the slices' partial
//   outputs: the dispatch and combine phases.
// Dense layers and the LM head come first as one compute activity (ranks meet at the first MoE
// collective); under Attention-TP each dense layer adds two all-reduces (reduce-scatter +
// all-gather). With two-batch overlap (serving.overlap: two_batch) each rank's batch is split in
// two micro-batches of balanced tokens, interleaved on each device's compute stream so that one
// micro-batch's dispatch and combine run under the other's attention and experts (as SGLang's TBO).
// Its collectives are priced by sim/collective_pricing.hpp; what does not depend on timing
// (activations, LAR, bytes, imbalance) is counted by sim/step_counters.hpp.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "models/operator_costs.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement.hpp"
#include "policies/set_dispatch.hpp"
#include "policies/token_scheduling.hpp"
#include "sim/collective_pricing.hpp"
#include "sim/cost_model.hpp"
#include "sim/dispatch_timing.hpp"
#include "sim/nccl_collectives.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/step_counters.hpp"
#include "sim/step_graph.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

// Speculative decoding (serving.speculative): what one request's step gives its draft. The draft's
// first pass runs over the `tokens` the target model kept this step from position `first.position`
// (a prompt chunk, or the verified tokens as decode queries); a request that goes on decoding
// (`drafts`) then gets its K draft tokens: the first from that pass, each other from one more pass
// over the draft before it.
struct DraftWork {
  TokenRef first;
  int tokens = 0;
  bool prompt = false;  // a prompt chunk (else verified decode tokens)
  bool drafts = false;
};

// The work of one rank in a step. A decoding request runs one token, or with speculative decoding
// its last token and K drafts, each a one-token chunk (a decode query over the request's cache).
struct RankBatch {
  std::vector<SequenceChunk> chunks;  // per request with tokens in this step (a verification: K + 1)
  std::vector<bool> yields_token;     // per chunk: its last token produces logits (LM head rows)
  int tokens = 0;                     // sum of chunk sizes
  int logits = 0;                     // chunks that yield a token (LM head rows)
  int prefill_tokens = 0;             // of `tokens`, prompt tokens (the others decode)
  int requests = 0;                   // requests with tokens in this step
  std::vector<DraftWork> draft;       // speculative decoding: per request, its draft's work
  // Empty, keeping its vectors' storage for the next step's batch.
  void clear() {
    chunks.clear();
    yields_token.clear();
    draft.clear();
    tokens = logits = prefill_tokens = requests = 0;
  }
};

class StepBuilder {
 public:
  // `rank_cost` prices each rank's attention, dense FFN and LM head: `cost` itself under
  // Attention-DP, one of the model's TP shard (attention_tp_shard) under Attention-TP.
  // `token_scheduler` places the tokens on ranks at each MoE layer under Attention-TP. `draft_cost`
  // prices speculative decoding's draft model (serving.speculative method draft). `dispatch`
  // says what the dispatch and combine move and what times them. With `nccl`, NCCL's measured fits
  // time Attention-TP's collectives; without, their shards cross the topology.
  StepBuilder(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
              const CostModel& cost, const CostModel& rank_cost, const Topology& topology,
              TokenScheduler& token_scheduler, const DispatchTiming& dispatch,
              const NcclTimes* nccl = nullptr, const CostModel* draft_cost = nullptr);

  // Attention-DP: `tokens[i]` runs on rank `token_rank[i]`, `batches` holds one batch per rank.
  // Attention-TP: `batches` holds the group's one batch (every token on rank 0); the token
  // scheduling policy decides each token's rank per MoE layer. Fills `graph` and the record's
  // counters; the timing is the executor's.
  void build(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
             const std::vector<int>& token_rank, StepGraph& graph, StepTrafficRecord& record);

  // Per MoE layer, the routed activations each device served so far.
  const std::vector<std::vector<long long>>& layer_loads() const { return counters_.layer_loads(); }

  // With `keep`, each build keeps for the step export (one micro-batch only) the tokens every
  // device's expert replicas served per MoE layer, expert_tokens(moe)[device * routed experts +
  // expert], and each rank's own dense layers and LM head, rank_other_seconds()[rank] (the step's
  // activity takes the slowest rank's).
  void keep_for_export(bool keep) { keep_for_export_ = keep; }
  const std::vector<int>& expert_tokens(int moe) const {
    return kept_expert_tokens_[static_cast<std::size_t>(moe)];
  }
  const std::vector<double>& rank_other_seconds() const { return kept_rank_other_; }

 private:
  // One micro-batch's tokens and working memory.
  struct MicroBatch {
    const std::vector<RankBatch>* batches = nullptr;  // the step's, or own_batches after a split
    std::vector<TokenRef> tokens;
    const std::vector<int>* token_rank = nullptr;  // Attention-DP: each token's rank
    std::vector<RankBatch> own_batches;
    std::vector<int> own_token_rank;
    std::vector<int> source;  // index of each token among the step's
    // Per rank: attention of full and windowed layers, dense FFN, LM head; gate and shared experts.
    std::vector<double> attention_full, attention_windowed, dense, head, gate, shared;
    std::vector<int> rank_tokens;  // per rank: tokens it gates (and runs shared experts on)
    std::vector<int> positional;   // Attention-TP: each token's slice by position (dense layers)
    const std::vector<int>* moe_rank = nullptr;
    std::vector<ExpertId> experts;  // this layer's routing of its tokens
    LayerDispatch dispatch;
    int first_moe = 0;  // the MoE layer of copies[0]
    std::vector<std::vector<long long>>
        copies;                           // [moe layer - first_moe] dispatch copies, kept for the executor
    Collective combine;                   // this layer's combine, priced with its dispatch
    std::vector<double> device_experts;   // per device: routed + shared expert seconds
    std::vector<int> active_experts;      // per device: its experts with a token this layer
    std::vector<std::int32_t> token_ids;  // Attention-TP: what the token scheduler reads
    std::vector<int> majority;            // [moe layer * tokens + token] majority device this step
    std::vector<int> previous_devices;
    std::vector<int> scheduled;  // Attention-TP: each token's rank at this MoE layer
    int last = -1;               // its last activity so far
    MicroBatch(int devices, int experts, int moe_layers, int devices_per_node, int first_moe = 0);
  };

  void split(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
             const std::vector<int>& token_rank);
  void price_ranks(MicroBatch& mb);
  void price_rank_tokens(MicroBatch& mb);
  const std::vector<int>& scheduled_ranks(MicroBatch& mb, int moe);
  // A reduce-scatter, all-gather or all-reduce over the slices of `mb.rank_tokens`.
  Collective slice_collective(const MicroBatch& mb, ShardCollective kind);
  void add_shard_collective(MicroBatch& mb, Phase phase, ShardCollective kind, int layer, int index,
                            StepGraph& graph);
  // An all-reduce of every rank's slice (dense layers' outputs; the MoE layer's with experts split by
  // tensor parallelism under Attention-TP).
  void add_all_reduce(MicroBatch& mb, Phase phase, int layer, int index, StepGraph& graph);
  void add_dense_layers(MicroBatch& mb, int index, StepGraph& graph);
  // The layer's routing, dispatch accounting and expert seconds for one micro-batch.
  void route_layer(MicroBatch& mb, int moe);
  // Synthetic routing counted in SetDispatch's one pass, then priced, where it covers the step;
  // returns whether it did.
  bool fused_dispatch(MicroBatch& mb, int moe, bool draft);
  void dispatch_routed(MicroBatch& mb, int moe, bool draft);
  // The rest of the layer's dispatch from mb.dispatch's counters: each device's expert seconds.
  void price_dispatch(MicroBatch& mb, int moe, bool draft);
  // cost_.routed_experts of a device's experts `slots`, served[slot] tokens each.
  double routed_experts(const int* served, std::span<const int> slots);
  void account_expert_slices(MicroBatch& mb) const;
  // MoE layer `moe`'s routing and placement, as model layer `layer` (the MTP layer for a draft pass).
  // The dispatch is priced with its combine (MicroBatch::combine), which add_experts_and_combine adds.
  void add_attention_and_dispatch(MicroBatch& mb, int index, int moe, int layer, StepGraph& graph);
  void add_experts_and_combine(MicroBatch& mb, int index, int layer, StepGraph& graph);
  void add_draft(const std::vector<RankBatch>& batches, StepGraph& graph);
  bool form_draft_pass(const std::vector<RankBatch>& batches, int pass, MicroBatch& mb);
  double draft_model_seconds(const RankBatch& batch) const;
  void add_permute(MicroBatch& mb, int index, int layer, StepGraph& graph);
  // Per device, the tokens of the rank batch it runs (Attention-TP: the group's one batch).
  void count_batch_tokens(const MicroBatch& mb, Activity& activity) const;
  bool windowed(int layer) const;

  const Scenario& scenario_;
  const Placement& placement_;
  const RoutingSource& routing_;
  const CostModel& cost_;
  const CostModel& rank_cost_;
  TokenScheduler& token_scheduler_;
  const CostModel* draft_cost_;
  CollectivePricing pricing_;
  bool tensor_parallel_;
  bool experts_tensor_parallel_;  // parallelism.moe.tp > 1: every device a slice of every expert
  bool reshuffle_;
  int micro_batches_;
  std::vector<int> moe_layer_ids_;  // model layer index of each MoE layer
  StepCounters counters_;
  std::vector<MicroBatch> micro_;
  std::vector<MicroBatch> drafts_;  // speculative decoding's draft passes, one each
  std::vector<TokenRef> tokens_;    // the step's tokens with their vocabulary ids
  std::vector<ExpertId> experts_;
  // Synthetic routing where SetDispatch covers the step's dispatch: routing and its accounting in
  // one pass (no reshuffle nor micro-batches, which read the routed experts themselves).
  std::optional<SetDispatch> set_dispatch_;
  std::vector<int> local_counts_;
  std::vector<int> every_expert_;  // 0 .. routed experts - 1: a device's experts split by tensor parallelism
  std::vector<long long> layer_tokens_;  // per device: this layer's load over the micro-batches
  bool keep_for_export_ = false;
  std::vector<std::vector<int>> kept_expert_tokens_;  // [moe layer], while keep_for_export_
  std::vector<double> kept_rank_other_;               // [rank], while keep_for_export_
};

}  // namespace semsim
