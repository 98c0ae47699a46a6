#include "sim/step_builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "policies/inter_layer_table.hpp"

namespace semsim {
namespace {

double max_of(const std::vector<double>& per_rank) {
  return per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
}

std::vector<int> moe_layer_ids(const MoeModel& model) {
  std::vector<int> ids;
  for (int layer = 0; layer < model.layers; ++layer)
    if (model.is_moe_layer(layer)) ids.push_back(layer);
  return ids;
}

}  // namespace

StepBuilder::MicroBatch::MicroBatch(int devices, int experts, int moe_layers, int devices_per_node,
                                    int first_moe)
    : attention_full(devices),
      attention_windowed(devices),
      dense(devices),
      head(devices),
      gate(devices),
      shared(devices),
      rank_tokens(devices),
      dispatch(devices, experts, devices_per_node),
      first_moe(first_moe),
      copies(moe_layers, std::vector<long long>(static_cast<std::size_t>(devices) * devices, 0)),
      device_experts(devices),
      active_experts(devices) {}

StepBuilder::StepBuilder(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
                         const CostModel& cost, const CostModel& rank_cost, const Topology& topology,
                         TokenScheduler& token_scheduler, const DispatchTiming& dispatch,
                         const NcclTimes* nccl, const CostModel* draft_cost)
    : scenario_(scenario),
      placement_(placement),
      routing_(routing),
      cost_(cost),
      rank_cost_(rank_cost),
      token_scheduler_(token_scheduler),
      draft_cost_(draft_cost),
      pricing_(scenario, topology, cost.collective_overhead(), dispatch, nccl),
      tensor_parallel_(scenario.attention == AttentionMode::kTensorParallel),
      experts_tensor_parallel_(scenario.experts_tensor_parallel()),
      reshuffle_(tensor_parallel_ && !experts_tensor_parallel_ && token_scheduler.reshuffles()),
      micro_batches_(scenario.serving.overlap == Overlap::kTwoBatch ? 2 : 1),
      moe_layer_ids_(moe_layer_ids(scenario.model)),
      counters_(scenario, topology, static_cast<int>(moe_layer_ids_.size())),
      every_expert_(static_cast<std::size_t>(scenario.model.routed_experts)),
      layer_tokens_(scenario.ep) {
  std::iota(every_expert_.begin(), every_expert_.end(), 0);
  // The scenario checked that a DeepEP dispatch's EP group fills whole nodes.
  const int devices_per_node =
      is_deepep(scenario.dispatch) ? std::min(topology.devices_per_node, scenario.ep) : scenario.ep;
  for (int m = 0; m < micro_batches_; ++m)
    micro_.emplace_back(scenario.ep, scenario.model.routed_experts, static_cast<int>(moe_layer_ids_.size()),
                        devices_per_node);
  // Each draft pass routes through the MTP layer, whose experts are placed as the last MoE layer's.
  for (int pass = 0; pass < scenario.serving.speculative.tokens; ++pass)
    drafts_.emplace_back(scenario.ep, scenario.model.routed_experts, 1, devices_per_node,
                         static_cast<int>(moe_layer_ids_.size()) - 1);
  const auto* synthetic = dynamic_cast<const SyntheticRouting*>(&routing);
  if (synthetic && micro_batches_ == 1 && !reshuffle_ && !experts_tensor_parallel_ &&
      scenario.ep <= SetDispatch::kMaxDevices && !placement.has_replicas())
    set_dispatch_.emplace(placement, *synthetic);
}

// Layer 0 is windowed whenever the model has windowed layers; layer 1 is then full (windows every
// n >= 2 layers) unless every layer is windowed.
bool StepBuilder::windowed(int layer) const {
  const int every = scenario_.model.attention.sliding_window_every;
  return every > 0 && layer % every == 0;
}

// Two-batch overlap: each rank's first half of its tokens (rounded up) forms micro-batch 0, the rest
// micro-batch 1; a chunk across the boundary is split, its logit going with its last token.
void StepBuilder::split(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
                        const std::vector<int>& token_rank) {
  if (micro_batches_ == 1) {
    MicroBatch& mb = micro_[0];  // the step itself: only the tokens are copied (to carry their ids)
    mb.batches = &batches;
    mb.tokens = tokens;
    mb.token_rank = &token_rank;
    return;
  }
  std::vector<int> first_half(batches.size());
  for (std::size_t r = 0; r < batches.size(); ++r) {
    first_half[r] = (batches[r].tokens + 1) / 2;
  }
  for (MicroBatch& mb : micro_) {
    mb.own_batches.assign(batches.size(), RankBatch{});
    mb.batches = &mb.own_batches;
    mb.token_rank = &mb.own_token_rank;
  }
  for (std::size_t r = 0; r < batches.size(); ++r) {
    int room = first_half[r];
    const RankBatch& b = batches[r];
    for (std::size_t c = 0; c < b.chunks.size(); ++c) {
      const SequenceChunk chunk = b.chunks[c];
      const int first = std::min(room, chunk.new_tokens);
      room -= first;
      const SequenceChunk parts[2] = {{first, chunk.prior_context},
                                      {chunk.new_tokens - first, chunk.prior_context + first}};
      for (int m = 0; m < 2; ++m) {
        if (parts[m].new_tokens == 0) continue;
        RankBatch& into = micro_[m].own_batches[r];
        const bool last_part = m == 1 || parts[1].new_tokens == 0;
        into.chunks.push_back(parts[m]);
        into.yields_token.push_back(last_part && b.yields_token[c]);
        into.tokens += parts[m].new_tokens;
        into.logits += last_part && b.yields_token[c] ? 1 : 0;
      }
    }
  }
  for (MicroBatch& mb : micro_) {
    mb.tokens.clear();
    mb.own_token_rank.clear();
    mb.source.clear();
  }
  std::vector<int> seen(batches.size(), 0);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const int rank = token_rank[i];
    MicroBatch& mb = micro_[seen[rank]++ < first_half[rank] ? 0 : 1];
    mb.tokens.push_back(tokens[i]);
    mb.own_token_rank.push_back(rank);
    mb.source.push_back(static_cast<int>(i));
  }
}

// Per-rank work that is the same in every layer of its kind; Attention-TP ranks all run their shard
// of the group's one batch.
void StepBuilder::price_ranks(MicroBatch& mb) {
  const int ranks = scenario_.ep;
  const int full_layer = windowed(0) && scenario_.model.layers > 1 ? 1 : 0;
  for (auto* per_rank : {&mb.attention_full, &mb.attention_windowed, &mb.dense, &mb.head})
    std::fill(per_rank->begin(), per_rank->end(), 0.0);
  for (int r = 0; r < (tensor_parallel_ ? 1 : ranks); ++r) {
    const RankBatch& b = (*mb.batches)[r];
    if (b.tokens == 0) continue;
    mb.attention_full[r] = attention_with_elementwise(rank_cost_, full_layer, b.chunks);
    mb.attention_windowed[r] =
        windowed(0) ? attention_with_elementwise(rank_cost_, 0, b.chunks) : mb.attention_full[r];
    mb.dense[r] = dense_ffn_with_elementwise(rank_cost_, b.tokens);
    mb.head[r] = lm_head_with_elementwise(rank_cost_, b.logits);
  }
  for (auto* per_rank : {&mb.attention_full, &mb.attention_windowed, &mb.dense, &mb.head})
    if (tensor_parallel_) std::fill(per_rank->begin() + 1, per_rank->end(), per_rank->front());
  mb.moe_rank = mb.token_rank;
  if (tensor_parallel_) {  // the dense layers' all-reduces shard by position
    mb.positional.resize(mb.tokens.size());
    positional_token_ranks(ranks, mb.positional);
    mb.moe_rank = &mb.positional;
  }
  price_rank_tokens(mb);
}

// Each device gates and runs shared experts on its slice of the tokens, or, with experts split by
// tensor parallelism, on every token (its slice of the shared experts' FFN).
void StepBuilder::price_rank_tokens(MicroBatch& mb) {
  std::fill(mb.rank_tokens.begin(), mb.rank_tokens.end(), 0);
  for (const int rank : *mb.moe_rank) ++mb.rank_tokens[rank];
  const long long all_tokens = static_cast<long long>(mb.tokens.size());
  for (std::size_t r = 0; r < mb.rank_tokens.size(); ++r) {
    const long long tokens = experts_tensor_parallel_ ? all_tokens : mb.rank_tokens[r];
    mb.gate[r] = cost_.gate(tokens);
    mb.shared[r] = shared_experts_with_elementwise(cost_, tokens);
  }
}

const std::vector<int>& StepBuilder::scheduled_ranks(MicroBatch& mb, int moe) {
  const std::size_t tokens = mb.token_ids.size();
  const int history = token_scheduler_.history(moe);
  mb.previous_devices.resize(tokens * history);
  for (std::size_t i = 0; i < tokens; ++i)
    for (int back = 0; back < history; ++back)
      mb.previous_devices[i * history + back] = mb.majority[(moe - 1 - back) * tokens + i];
  token_scheduler_.assign(moe, mb.token_ids, mb.previous_devices, mb.scheduled);
  return mb.scheduled;
}

Collective StepBuilder::slice_collective(const MicroBatch& mb, ShardCollective kind) {
  // NCCL's collectives move equal shards: slices are padded to the largest one.
  const double shard_bytes =
      static_cast<double>(*std::max_element(mb.rank_tokens.begin(), mb.rank_tokens.end())) *
      scenario_.model.hidden * scenario_.precision.activation_bytes;
  counters_.count_shard_collective(pricing_.shard_bytes_moved(kind, shard_bytes));
  return pricing_.shard(kind, shard_bytes);
}

// Dense layers: attention then a dense FFN on each rank, and the LM head; under Attention-TP both
// outputs of each dense layer are partial sums over the shards, each all-reduced: NCCL's measured
// all-reduce where the profile has one, else a reduce-scatter then an all-gather over positional
// slices.
void StepBuilder::add_dense_layers(MicroBatch& mb, int index, StepGraph& graph) {
  const MoeModel& model = scenario_.model;
  double other = max_of(mb.head);
  if (keep_for_export_) kept_rank_other_ = mb.head;
  int dense_layers = 0;
  for (int layer = 0; layer < model.layers; ++layer) {
    if (model.is_moe_layer(layer)) continue;
    ++dense_layers;
    double slowest = 0;
    for (int r = 0; r < scenario_.ep; ++r) {
      const double own = (windowed(layer) ? mb.attention_windowed[r] : mb.attention_full[r]) + mb.dense[r];
      slowest = std::max(slowest, own);
      if (keep_for_export_) kept_rank_other_[static_cast<std::size_t>(r)] += own;
    }
    other += slowest;
  }
  Activity& dense = graph.add_compute(Phase::kOther, -1, index, {});
  std::fill(dense.seconds.begin(), dense.seconds.end(), other);
  count_batch_tokens(mb, dense);
  mb.last = graph.last();
  if (!tensor_parallel_) return;
  for (int output = 0; output < 2 * dense_layers; ++output)
    add_all_reduce(mb, Phase::kOther, -1, index, graph);
}

void StepBuilder::add_shard_collective(MicroBatch& mb, Phase phase, ShardCollective kind, int layer,
                                       int index, StepGraph& graph) {
  graph.add_collective(phase, layer, index, slice_collective(mb, kind), {mb.last});
  mb.last = graph.last();
}

// NCCL's measured all-reduce where the profile has one, else a reduce-scatter then an all-gather over
// the slices.
void StepBuilder::add_all_reduce(MicroBatch& mb, Phase phase, int layer, int index, StepGraph& graph) {
  static constexpr ShardCollective kWhole[] = {ShardCollective::kAllReduce};
  static constexpr ShardCollective kHalves[] = {ShardCollective::kReduceScatter, ShardCollective::kAllGather};
  for (const ShardCollective kind :
       pricing_.has_all_reduce() ? std::span<const ShardCollective>(kWhole) : kHalves)
    add_shard_collective(mb, phase, kind, layer, index, graph);
}

// Sem-MoE permutes every token's hidden state on every rank: before the reduce-scatter, and back
// after the all-gather (each micro-batch its own tokens). Positional slices need no permute.
void StepBuilder::add_permute(MicroBatch& mb, int index, int layer, StepGraph& graph) {
  if (!reshuffle_ || mb.moe_rank != &mb.scheduled) return;  // a draft pass's tokens stay in position
  const double seconds = cost_.permute_tokens(static_cast<long long>(mb.tokens.size()));
  if (seconds <= 0) return;
  Activity& permute = graph.add_compute(Phase::kPermute, layer, index, {mb.last});
  std::fill(permute.seconds.begin(), permute.seconds.end(), seconds);
  mb.last = graph.last();
}

void StepBuilder::route_layer(MicroBatch& mb, int moe) {
  const int k = scenario_.model.top_k;
  // Ranks that do not reshuffle hold for every layer of the step.
  if (tensor_parallel_ && !experts_tensor_parallel_ && (reshuffle_ || moe == 0)) {
    mb.moe_rank = &scheduled_ranks(mb, moe);
    price_rank_tokens(mb);
  }
  if (fused_dispatch(mb, moe, false)) return;
  mb.experts.resize(mb.tokens.size() * k);
  if (micro_batches_ == 1) {
    routing_.route(moe, mb.tokens, mb.experts);
  } else {
    for (std::size_t i = 0; i < mb.source.size(); ++i)
      std::copy_n(&experts_[static_cast<std::size_t>(mb.source[i]) * k], k, &mb.experts[i * k]);
  }
  if (reshuffle_)
    for (std::size_t i = 0; i < mb.tokens.size(); ++i)
      mb.majority[moe * mb.tokens.size() + i] = majority_device(placement_, moe, &mb.experts[i * k], k);
  dispatch_routed(mb, moe, false);
}

bool StepBuilder::fused_dispatch(MicroBatch& mb, int moe, bool draft) {
  if (!set_dispatch_ || !set_dispatch_->covers(pricing_.traffic(), scenario_.ep)) return false;
  mb.dispatch.clear();
  set_dispatch_->account(moe, pricing_.traffic(), mb.tokens, *mb.moe_rank, mb.dispatch);
  price_dispatch(mb, moe, draft);
  return true;
}

// The dispatch accounting and each device's expert seconds of `mb`'s routing at MoE layer `moe`.
// A draft pass's (speculative decoding's MTP layer) counts as traffic and activations, not as the
// layer's load nor as the step export's.
void StepBuilder::dispatch_routed(MicroBatch& mb, int moe, bool draft) {
  const int k = scenario_.model.top_k;
  LayerDispatch& dispatch = mb.dispatch;
  dispatch.clear();
  if (experts_tensor_parallel_)
    account_expert_slices(mb);
  else
    account_dispatch(placement_, moe, pricing_.traffic(), *mb.moe_rank, mb.experts, k, dispatch,
                     scenario_.replica_choice);
  price_dispatch(mb, moe, draft);
}

void StepBuilder::price_dispatch(MicroBatch& mb, int moe, bool draft) {
  const int ranks = scenario_.ep;
  LayerDispatch& dispatch = mb.dispatch;
  for (int device = 0; device < ranks; ++device) {
    if (experts_tensor_parallel_ && device > 0) {  // the same slices of the same tokens: priced once
      mb.device_experts[device] = mb.device_experts[0];
      mb.active_experts[device] = mb.active_experts[0];
      continue;
    }
    mb.device_experts[device] = mb.shared[device];
    mb.active_experts[device] = 0;
    if (dispatch.device_tokens[device] == 0) continue;  // no routed work: only its shared experts run
    const int* served = &dispatch.expert_tokens[static_cast<std::size_t>(device) * dispatch.experts];
    const std::span<const int> slots =
        experts_tensor_parallel_ ? std::span<const int>(every_expert_) : placement_.slots[moe][device];
    int active = 0;
    for (const int expert : slots) active += served[expert] > 0 ? 1 : 0;
    mb.active_experts[device] = active;
    mb.device_experts[device] += routed_experts(served, slots);
  }
  if (keep_for_export_ && !draft) {
    kept_expert_tokens_.resize(moe_layer_ids_.size());
    kept_expert_tokens_[moe] = dispatch.expert_tokens;
  }
  // The executor reads this layer's copies after every layer is built: keep them, and give the
  // dispatch accounting the previous step's storage to clear.
  std::swap(dispatch.copies, mb.copies[moe - mb.first_moe]);
  counters_.count_dispatch(draft ? -1 : moe, dispatch, mb.copies[moe - mb.first_moe]);
}

double StepBuilder::routed_experts(const int* served, std::span<const int> slots) {
  local_counts_.clear();
  for (const int expert : slots) local_counts_.push_back(served[expert]);
  return cost_.routed_experts(local_counts_);
}

// Split by tensor parallelism, every device serves its slice of every activation: each is local, none
// is copied, and every device's load is the whole layer's.
void StepBuilder::account_expert_slices(MicroBatch& mb) const {
  LayerDispatch& dispatch = mb.dispatch;
  const int devices = dispatch.devices;
  for (const ExpertId expert : mb.experts) ++dispatch.expert_tokens[static_cast<std::size_t>(expert)];
  for (int device = 1; device < devices; ++device)
    std::copy_n(dispatch.expert_tokens.begin(), dispatch.experts,
                dispatch.expert_tokens.begin() + static_cast<std::ptrdiff_t>(device) * dispatch.experts);
  dispatch.activations = static_cast<long long>(mb.experts.size());
  dispatch.local_activations = dispatch.activations;
  std::fill(dispatch.device_tokens.begin(), dispatch.device_tokens.end(), dispatch.activations);
}

// The gate runs on each rank's own tokens: under Attention-TP after the reduce-scatter, but every
// rank waits for the slowest at the next collective either way.
void StepBuilder::add_attention_and_dispatch(MicroBatch& mb, int index, int moe, int layer,
                                             StepGraph& graph) {
  Activity& attention = graph.add_compute(Phase::kAttention, layer, index, {mb.last});
  for (int r = 0; r < scenario_.ep; ++r)
    attention.seconds[r] = (windowed(layer) ? mb.attention_windowed[r] : mb.attention_full[r]) + mb.gate[r];
  count_batch_tokens(mb, attention);
  mb.last = graph.last();
  if (experts_tensor_parallel_) {  // every device gets every token: attention's all-reduce, or an all-gather
    if (tensor_parallel_)
      add_all_reduce(mb, Phase::kDispatch, layer, index, graph);
    else
      add_shard_collective(mb, Phase::kDispatch, ShardCollective::kAllGather, layer, index, graph);
    return;
  }
  if (tensor_parallel_) {
    add_permute(mb, index, layer, graph);
    graph.add_collective(Phase::kReduceScatter, layer, index,
                         slice_collective(mb, ShardCollective::kReduceScatter), {mb.last});
    mb.last = graph.last();
  }
  const CollectivePricing::Exchanges exchanges = pricing_.exchanges(mb.copies[moe - mb.first_moe]);
  mb.combine = exchanges.combine;
  graph.add_collective(Phase::kDispatch, layer, index, exchanges.dispatch, {mb.last});
  mb.last = graph.last();
}

void StepBuilder::add_experts_and_combine(MicroBatch& mb, int index, int layer, StepGraph& graph) {
  Activity& experts = graph.add_compute(Phase::kExperts, layer, index, {mb.last});
  experts.seconds = mb.device_experts;
  experts.work.resize(mb.device_experts.size());
  for (std::size_t device = 0; device < experts.work.size(); ++device) {
    experts.work[device].activations = mb.dispatch.device_tokens[device];
    experts.work[device].active_experts = mb.active_experts[device];
  }
  counters_.count_experts(experts.seconds);
  mb.last = graph.last();
  if (experts_tensor_parallel_) {  // the slices' partial sums: every token's to all, or each rank's own
    if (tensor_parallel_)
      add_all_reduce(mb, Phase::kCombine, layer, index, graph);
    else
      add_shard_collective(mb, Phase::kCombine, ShardCollective::kReduceScatter, layer, index, graph);
    return;
  }
  graph.add_collective(Phase::kCombine, layer, index, mb.combine, {mb.last});
  mb.last = graph.last();
  if (!tensor_parallel_) return;
  graph.add_collective(Phase::kAllGather, layer, index, slice_collective(mb, ShardCollective::kAllGather),
                       {mb.last});
  mb.last = graph.last();
}

void StepBuilder::count_batch_tokens(const MicroBatch& mb, Activity& activity) const {
  activity.work.resize(activity.seconds.size());
  for (std::size_t r = 0; r < activity.work.size(); ++r)
    activity.work[r].tokens = (*mb.batches)[tensor_parallel_ ? 0 : r].tokens;
}

void StepBuilder::build(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
                        const std::vector<int>& token_rank, StepGraph& graph, StepTrafficRecord& record) {
  graph.clear();
  counters_.start_step(record);
  bool decode_only = true;
  for (const RankBatch& batch : batches)
    for (const SequenceChunk& chunk : batch.chunks) decode_only = decode_only && chunk.new_tokens <= 1;
  pricing_.start_step(decode_only);
  // Each token's vocabulary id, once: on the micro-batch's copy, or (two micro-batches, routed as one
  // step) on the step's copy the micro-batches are split from.
  if (micro_batches_ == 1) {
    split(batches, tokens, token_rank);
    for (TokenRef& token : micro_[0].tokens) token.id = routing_.token_id(token);
  } else {
    tokens_ = tokens;
    for (TokenRef& token : tokens_) token.id = routing_.token_id(token);
    experts_.resize(tokens_.size() * scenario_.model.top_k);
    split(batches, tokens_, token_rank);
  }
  for (int m = 0; m < micro_batches_; ++m) {
    MicroBatch& mb = micro_[m];
    if (tensor_parallel_) {
      mb.token_ids.resize(mb.tokens.size());
      for (std::size_t i = 0; i < mb.tokens.size(); ++i) mb.token_ids[i] = mb.tokens[i].id;
    }
    if (reshuffle_) mb.majority.resize(mb.tokens.size() * moe_layer_ids_.size());
    price_ranks(mb);
    add_dense_layers(mb, m, graph);
  }
  for (std::size_t moe = 0; moe < moe_layer_ids_.size(); ++moe) {
    const int l = static_cast<int>(moe);
    if (micro_batches_ > 1) routing_.route(l, tokens_, experts_);
    std::fill(layer_tokens_.begin(), layer_tokens_.end(), 0);
    for (int m = 0; m < micro_batches_; ++m) {
      MicroBatch& mb = micro_[m];
      route_layer(mb, l);
      for (int device = 0; device < scenario_.ep; ++device)
        layer_tokens_[device] += mb.dispatch.device_tokens[device];
    }
    counters_.count_layer_load(micro_batches_ == 1 ? micro_[0].dispatch.device_tokens : layer_tokens_);
    // Each stage for every micro-batch before the next stage: the order of compute on each device.
    for (int m = 0; m < micro_batches_; ++m)
      add_attention_and_dispatch(micro_[m], m, l, moe_layer_ids_[moe], graph);
    for (int m = 0; m < micro_batches_; ++m)
      add_experts_and_combine(micro_[m], m, moe_layer_ids_[moe], graph);
    if (tensor_parallel_)
      for (int m = 0; m < micro_batches_; ++m) add_permute(micro_[m], m, moe_layer_ids_[moe], graph);
  }
  if (!drafts_.empty()) add_draft(batches, graph);
  counters_.end_step();
}

// Speculative decoding's draft, after the step's last layer (it reads the final hidden states): K
// passes, the first over what each request kept this step, each other over one draft token of every
// request that goes on decoding. mtp: the model's MTP layer, one more layer shaped like its last
// (attention, then the MoE layer's gate, dispatch, experts and combine, or a dense FFN), and the LM
// head, each pass; draft: the draft model's layers and LM head on each rank, without collectives.
// Left out: the MTP layer's projection of [embedding; hidden state] (2 hidden x hidden weights).
void StepBuilder::add_draft(const std::vector<RankBatch>& batches, StepGraph& graph) {
  const int mtp_layer = scenario_.model.layers;  // its index in DeepSeek-V3's checkpoint
  const int moe = static_cast<int>(moe_layer_ids_.size()) - 1;
  int last = micro_.back().last;
  if (micro_batches_ > 1) {  // the draft reads both micro-batches' outputs
    Activity& join = graph.add_compute(Phase::kOther, -1, 0, {micro_.front().last, micro_.back().last});
    std::fill(join.seconds.begin(), join.seconds.end(), 0.0);
    last = graph.last();
  }
  for (std::size_t pass = 0; pass < drafts_.size(); ++pass) {
    MicroBatch& mb = drafts_[pass];
    if (!form_draft_pass(batches, static_cast<int>(pass), mb)) return;
    mb.last = last;
    if (draft_cost_) {
      Activity& draft = graph.add_compute(Phase::kOther, -1, 0, {mb.last});
      for (int r = 0; r < scenario_.ep; ++r) draft.seconds[r] = draft_model_seconds((*mb.batches)[r]);
      count_batch_tokens(mb, draft);
    } else if (scenario_.model.dense()) {
      price_ranks(mb);
      Activity& layer = graph.add_compute(Phase::kOther, mtp_layer, 0, {mb.last});
      for (int r = 0; r < scenario_.ep; ++r)
        layer.seconds[r] = mb.attention_full[r] + mb.dense[r] + mb.head[r];
      count_batch_tokens(mb, layer);
    } else {
      price_ranks(mb);
      for (TokenRef& token : mb.tokens) token.id = routing_.token_id(token);
      if (!fused_dispatch(mb, moe, true)) {
        mb.experts.resize(mb.tokens.size() * scenario_.model.top_k);
        routing_.route(moe, mb.tokens, mb.experts);
        dispatch_routed(mb, moe, true);
      }
      add_attention_and_dispatch(mb, 0, moe, mtp_layer, graph);
      add_experts_and_combine(mb, 0, mtp_layer, graph);
      add_permute(mb, 0, mtp_layer, graph);
      Activity& head = graph.add_compute(Phase::kOther, -1, 0, {mb.last});
      head.seconds = mb.head;
      count_batch_tokens(mb, head);
    }
    last = graph.last();
  }
}

// The draft micro-batch of pass `pass` (add_draft) from the step's per-request draft work; returns
// whether it has tokens.
bool StepBuilder::form_draft_pass(const std::vector<RankBatch>& batches, int pass, MicroBatch& mb) {
  mb.own_batches.resize(batches.size());
  for (RankBatch& batch : mb.own_batches) batch.clear();
  mb.batches = &mb.own_batches;
  mb.token_rank = &mb.own_token_rank;
  mb.tokens.clear();
  mb.own_token_rank.clear();
  mb.source.clear();
  for (std::size_t r = 0; r < batches.size(); ++r) {
    RankBatch& into = mb.own_batches[r];
    auto add = [&](const TokenRef& first, int tokens, bool as_prompt, bool logit) {
      if (as_prompt) {
        into.chunks.push_back({tokens, first.position});
        into.yields_token.push_back(logit);
      } else {
        for (int i = 0; i < tokens; ++i) {
          into.chunks.push_back({1, first.position + i});
          into.yields_token.push_back(logit && i == tokens - 1);
        }
      }
      into.tokens += tokens;
      into.logits += logit ? 1 : 0;
      ++into.requests;
      for (int i = 0; i < tokens; ++i) {
        mb.tokens.push_back({first.request, first.topic, first.position + i});
        mb.own_token_rank.push_back(static_cast<int>(r));
      }
    };
    for (const DraftWork& work : batches[r].draft) {
      if (pass == 0) {
        if (work.prompt || work.drafts) add(work.first, work.tokens, work.prompt, work.drafts);
      } else if (work.drafts) {  // the draft token of the pass before, fed in after the kept tokens
        TokenRef next = work.first;
        next.position += work.tokens + pass - 1;
        add(next, 1, false, true);
      }
    }
  }
  return !mb.tokens.empty();
}

// One draft-model pass over a rank's batch: each of its layers' attention and FFN, and its LM head.
double StepBuilder::draft_model_seconds(const RankBatch& batch) const {
  if (batch.tokens == 0) return 0.0;
  const MoeModel& draft = *scenario_.serving.speculative.draft_model;
  double seconds = lm_head_with_elementwise(*draft_cost_, batch.logits);
  for (int layer = 0; layer < draft.layers; ++layer)
    seconds += attention_with_elementwise(*draft_cost_, layer, batch.chunks) +
               dense_ffn_with_elementwise(*draft_cost_, batch.tokens);
  return seconds;
}

}  // namespace semsim
