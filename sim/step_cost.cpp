#include "sim/step_cost.hpp"

#include <algorithm>

#include "policies/inter_layer_table.hpp"
#include "policies/routing_metrics.hpp"
#include "policies/token_scheduling.hpp"

namespace semsim {

StepCost::StepCost(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
                   const CostModel& cost_model, const CostModel& rank_cost, CollectiveNetwork& network,
                   const Topology& topology, StepWindow timeline)
    : scenario_(scenario),
      placement_(placement),
      routing_(routing),
      cost_(cost_model),
      rank_cost_(rank_cost),
      network_(network),
      topology_(topology),
      dispatch_(scenario.ep, scenario.model.routed_experts),
      traffic_(scenario.ep),
      device_experts_(scenario.ep),
      rank_tokens_(scenario.ep),
      gate_(scenario.ep),
      shared_(scenario.ep),
      timeline_window_(timeline) {
  for (int layer = 0; layer < scenario.model.layers; ++layer)
    if (scenario.model.is_moe_layer(layer)) {
      moe_layer_ids_.push_back(layer);
      layer_totals_.push_back({layer, {}, std::vector<long long>(scenario.ep, 0)});
    }
}

double StepCost::max_over_ranks(const std::vector<double>& per_rank) const {
  return per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
}

void StepCost::price_rank_tokens(const std::vector<int>& token_rank) {
  std::fill(rank_tokens_.begin(), rank_tokens_.end(), 0);
  for (const int rank : token_rank) ++rank_tokens_[rank];
  for (std::size_t r = 0; r < rank_tokens_.size(); ++r) {
    gate_[r] = cost_.gate(rank_tokens_[r]);
    shared_[r] = cost_.shared_experts(rank_tokens_[r]);
  }
}

const std::vector<int>& StepCost::reshuffled_ranks(int moe) {
  const PlacementPlan& plan = *scenario_.placement_plan;
  const std::size_t tokens = token_ids_.size();
  const int history = std::min(plan.inter_layer.lookback, moe);
  previous_devices_.resize(tokens * history);
  for (std::size_t i = 0; i < tokens; ++i)
    for (int back = 0; back < history; ++back)
      previous_devices_[i * history + back] = majority_[(moe - 1 - back) * tokens + i];
  reshuffle_tokens(plan, moe, token_ids_, previous_devices_, history, scenario_.ep, reshuffle_);
  return reshuffle_.rank;
}

double StepCost::slice_collective(StepClock& clock, StepRecord& record) {
  const int ranks = scenario_.ep;
  // NCCL's reduce-scatter and all-gather move equal shards: slices are padded to the largest one.
  const double shard_bytes =
      static_cast<double>(*std::max_element(rank_tokens_.begin(), rank_tokens_.end())) *
      scenario_.model.hidden * scenario_.precision.activation_bytes;
  for (int src = 0; src < ranks; ++src)
    for (int dst = 0; dst < ranks; ++dst) traffic_.at(src, dst) = src == dst ? 0.0 : shard_bytes;
  const LevelBytes moved = level_bytes(traffic_, topology_);
  record.tp_collective_bytes += moved.scale_up + moved.scale_out;
  const double overhead = ranks > 1 ? cost_.collective_overhead() : 0.0;
  clock.advance(overhead);
  return overhead + network_.run(traffic_, clock);
}

void StepCost::run(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
                   const std::vector<int>& token_rank, StepClock& clock, StepRecord& record) {
  const MoeModel& model = scenario_.model;
  const Precision& precision = scenario_.precision;
  const int ranks = scenario_.ep;
  const int k = model.top_k;
  const bool tensor_parallel = scenario_.attention == AttentionMode::kTensorParallel;
  const bool reshuffle = tensor_parallel && reshuffles_tokens(scenario_.token_scheduling);

  // Per-rank work that is the same in every layer of its kind: attention (full or sliding-window),
  // dense FFN, LM head; Attention-TP ranks all run their shard of the group's one batch. Attention
  // time is the slowest rank's (ranks meet at the next collective). Layer 0 is windowed whenever
  // the model has windowed layers; layer 1 is then full (windows every n >= 2 layers) unless every
  // layer is windowed.
  auto windowed = [&](int layer) {
    return model.attention.sliding_window_every > 0 && layer % model.attention.sliding_window_every == 0;
  };
  const int windowed_layer = 0;
  const int full_layer = windowed(0) && model.layers > 1 ? 1 : 0;
  std::vector<double> attention_full(ranks), attention_windowed(ranks), dense(ranks), head(ranks);
  for (int r = 0; r < (tensor_parallel ? 1 : ranks); ++r) {
    const RankBatch& b = batches[r];
    if (b.tokens == 0) continue;
    attention_full[r] = rank_cost_.attention(full_layer, b.chunks);
    attention_windowed[r] =
        windowed(windowed_layer) ? rank_cost_.attention(windowed_layer, b.chunks) : attention_full[r];
    dense[r] = rank_cost_.dense_ffn(b.tokens);
    head[r] = rank_cost_.lm_head(b.logits);
  }
  for (auto* per_rank : {&attention_full, &attention_windowed, &dense, &head})
    if (tensor_parallel) std::fill(per_rank->begin() + 1, per_rank->end(), per_rank->front());
  // The ranks that gate each token and run the MoE layer from it; Sem-MoE moves them per layer.
  const std::vector<int>* moe_rank = &token_rank;
  if (tensor_parallel) {
    positional_ranks_ = positional_token_ranks(static_cast<int>(tokens.size()), ranks);
    moe_rank = &positional_ranks_;
  }
  price_rank_tokens(*moe_rank);

  StepSpans* spans = nullptr;
  if (timeline_window_.contains(steps_run_)) {
    spans = &timeline_.emplace_back();
    spans->step = steps_run_;
    spans->start = clock.now();
    spans->tensor_parallel = tensor_parallel;
  }
  ++steps_run_;

  PhaseSeconds& phases = record.phases;
  phases.other += max_over_ranks(head);
  // Dense layers: attention then a dense FFN on each rank. Under Attention-TP both outputs are
  // partial sums over the shards: each is all-reduced (a reduce-scatter then an all-gather over
  // positional slices).
  int dense_layers = 0;
  for (int layer = 0; layer < model.layers; ++layer) {
    if (model.is_moe_layer(layer)) continue;
    ++dense_layers;
    double slowest = 0;
    for (int r = 0; r < ranks; ++r)
      slowest = std::max(slowest, (windowed(layer) ? attention_windowed[r] : attention_full[r]) + dense[r]);
    phases.other += slowest;
  }
  clock.advance(phases.other);
  if (tensor_parallel)
    for (int all_reduce = 0; all_reduce < 2 * dense_layers; ++all_reduce)
      for (int collective = 0; collective < 2; ++collective) phases.other += slice_collective(clock, record);
  if (spans) spans->other = phases.other;

  const double dispatch_copy_bytes = model.hidden * scenario_.dispatch_bytes_per_element;
  const double combine_copy_bytes = model.hidden * precision.activation_bytes;
  // A group of one device has no all-to-all at all; any larger group launches both collectives.
  const double collective_overhead = ranks > 1 ? cost_.collective_overhead() : 0.0;
  experts_.resize(tokens.size() * k);
  tokens_ = tokens;
  for (TokenRef& token : tokens_) token.id = routing_.token_id(token);
  if (reshuffle) {
    token_ids_.resize(tokens_.size());
    for (std::size_t i = 0; i < tokens_.size(); ++i) token_ids_[i] = tokens_[i].id;
    majority_.resize(tokens_.size() * moe_layer_ids_.size());
  }
  // Sem-MoE permutes every token's hidden state on every rank: before the reduce-scatter, and back
  // after the all-gather.
  const double permute = reshuffle ? cost_.permute_tokens(static_cast<long long>(tokens.size())) : 0.0;
  std::vector<double> rank_attention(ranks);
  double imbalance_sum = 0;
  for (std::size_t moe = 0; moe < moe_layer_ids_.size(); ++moe) {
    const int layer = moe_layer_ids_[moe];
    if (reshuffle) {
      moe_rank = &reshuffled_ranks(static_cast<int>(moe));
      price_rank_tokens(*moe_rank);
    }
    // The gate runs on each rank's own tokens: under Attention-TP after the reduce-scatter, but
    // every rank waits for the slowest at the next collective either way.
    for (int r = 0; r < ranks; ++r)
      rank_attention[r] = (windowed(layer) ? attention_windowed[r] : attention_full[r]) + gate_[r];
    const double attention = max_over_ranks(rank_attention);
    LayerSpans* layer_spans = spans ? &spans->layers.emplace_back() : nullptr;
    if (layer_spans) {
      layer_spans->layer = layer;
      layer_spans->start = clock.now();
      layer_spans->attention = rank_attention;
    }
    clock.advance(attention);
    phases.attention += attention;
    LayerTotals& totals = layer_totals_[moe];
    totals.phases.attention += attention;

    if (tensor_parallel) {
      clock.advance(permute);
      const double reduce_scatter_start = clock.now();
      const double reduce_scatter = slice_collective(clock, record);
      phases.reduce_scatter += reduce_scatter;
      totals.phases.reduce_scatter += reduce_scatter;
      if (layer_spans) {
        layer_spans->reduce_scatter_start = reduce_scatter_start;
        layer_spans->reduce_scatter = reduce_scatter;
      }
    }

    routing_.route(static_cast<int>(moe), tokens_, experts_);
    if (reshuffle)
      for (std::size_t i = 0; i < tokens_.size(); ++i)
        majority_[moe * tokens_.size() + i] =
            majority_device(placement_, static_cast<int>(moe), &experts_[i * k], k);
    dispatch_.clear();
    account_dispatch(placement_, static_cast<int>(moe), scenario_.dispatch, *moe_rank, experts_, k, dispatch_,
                     scenario_.replica_choice);
    record.activations += dispatch_.activations;
    record.local_activations += dispatch_.local_activations;
    imbalance_sum += load_imbalance(dispatch_.device_tokens);

    const CopyTraffic dispatched{dispatch_.copies, ranks, dispatch_copy_bytes, false};
    const LevelBytes dispatch_bytes = level_bytes(dispatched, topology_);
    const double dispatch_start = clock.now();
    clock.advance(collective_overhead);
    const double dispatch = collective_overhead + network_.run_copies(dispatched, clock);
    phases.dispatch += dispatch;

    for (int device = 0; device < ranks; ++device) {
      device_experts_[device] = shared_[device];
      if (dispatch_.device_tokens[device] == 0) continue;  // no routed work: only its shared experts run
      local_counts_.clear();
      for (int expert : placement_.slots[moe][device])
        local_counts_.push_back(
            dispatch_.expert_tokens[static_cast<std::size_t>(device) * dispatch_.experts + expert]);
      device_experts_[device] += cost_.routed_experts(local_counts_);
    }
    const double slowest_device = max_over_ranks(device_experts_);
    const double experts_start = clock.now();
    clock.advance(slowest_device);
    phases.experts += slowest_device;

    const double combine_start = clock.now();
    clock.advance(collective_overhead);
    const double combine =
        collective_overhead + network_.run_copies({dispatch_.copies, ranks, combine_copy_bytes, true}, clock);
    phases.combine += combine;

    if (tensor_parallel) {
      const double all_gather_start = clock.now();
      const double all_gather = slice_collective(clock, record);
      clock.advance(permute);
      phases.all_gather += all_gather;
      phases.permute += 2 * permute;
      totals.phases.all_gather += all_gather;
      totals.phases.permute += 2 * permute;
      if (layer_spans) {
        layer_spans->all_gather_start = all_gather_start;
        layer_spans->all_gather = all_gather;
        layer_spans->permute = permute;
        layer_spans->end = all_gather_start + all_gather + permute;
      }
    }

    totals.phases.dispatch += dispatch;
    totals.phases.experts += slowest_device;
    totals.phases.combine += combine;
    for (int device = 0; device < ranks; ++device)
      totals.device_activations[device] += dispatch_.device_tokens[device];
    if (layer_spans) {
      layer_spans->dispatch_start = dispatch_start;
      layer_spans->dispatch = dispatch;
      layer_spans->experts_start = experts_start;
      layer_spans->experts = device_experts_;
      layer_spans->combine_start = combine_start;
      layer_spans->combine = combine;
      if (!tensor_parallel) layer_spans->end = combine_start + combine;
    }

    // Combine mirrors dispatch (same pairs, reversed), so its level split scales with the payload.
    const double both = 1.0 + combine_copy_bytes / dispatch_copy_bytes;
    record.a2a_scale_up_bytes += dispatch_bytes.scale_up * both;
    record.a2a_scale_out_bytes += dispatch_bytes.scale_out * both;
  }
  record.imbalance =
      moe_layer_ids_.empty() ? 1.0 : imbalance_sum / static_cast<double>(moe_layer_ids_.size());
}

}  // namespace semsim
