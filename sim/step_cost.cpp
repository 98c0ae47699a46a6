#include "sim/step_cost.hpp"

#include <algorithm>

#include "policies/routing_metrics.hpp"

namespace semsim {

StepCost::StepCost(const Scenario& scenario, const Placement& placement, const RoutingSource& routing,
                   const CostModel& cost_model, CollectiveNetwork& network, const Topology& topology,
                   StepWindow timeline)
    : scenario_(scenario),
      placement_(placement),
      routing_(routing),
      cost_(cost_model),
      network_(network),
      topology_(topology),
      dispatch_(scenario.ep, scenario.model.routed_experts),
      traffic_(scenario.ep),
      device_experts_(scenario.ep),
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

void StepCost::fill_traffic(double bytes_per_copy, bool transpose) {
  const int d = scenario_.ep;
  for (int src = 0; src < d; ++src)
    for (int dst = 0; dst < d; ++dst) {
      const double bytes =
          static_cast<double>(dispatch_.copies[static_cast<std::size_t>(src) * d + dst]) * bytes_per_copy;
      if (transpose)
        traffic_.at(dst, src) = bytes;
      else
        traffic_.at(src, dst) = bytes;
    }
}

void StepCost::run(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
                   const std::vector<int>& token_rank, StepClock& clock, StepRecord& record) {
  const MoeModel& model = scenario_.model;
  const Precision& precision = scenario_.precision;
  const int ranks = scenario_.ep;
  const int k = model.top_k;

  // Per-rank work that is the same in every layer of its kind: attention (full or sliding-window),
  // gate, shared experts, dense FFN. Attention time is the slowest rank's (ranks meet at the
  // dispatch). Layer 0 is windowed whenever the model has windowed layers; layer 1 is then full
  // (windows every n >= 2 layers) unless every layer is windowed.
  auto windowed = [&](int layer) {
    return model.attention.sliding_window_every > 0 && layer % model.attention.sliding_window_every == 0;
  };
  const int windowed_layer = 0;
  const int full_layer = windowed(0) && model.layers > 1 ? 1 : 0;
  std::vector<double> attention_full(ranks), attention_windowed(ranks), shared(ranks), dense(ranks),
      head(ranks);
  for (int r = 0; r < ranks; ++r) {
    const RankBatch& b = batches[r];
    if (b.tokens == 0) continue;
    const double gate = cost_.gate(b.tokens);
    attention_full[r] = gate + cost_.attention(full_layer, b.chunks);
    attention_windowed[r] =
        windowed(windowed_layer) ? gate + cost_.attention(windowed_layer, b.chunks) : attention_full[r];
    shared[r] = cost_.shared_experts(b.tokens);
    dense[r] = cost_.dense_ffn(b.tokens);
    head[r] = cost_.lm_head(b.logits);
  }

  StepSpans* spans = nullptr;
  if (timeline_window_.contains(steps_run_)) {
    spans = &timeline_.emplace_back();
    spans->step = steps_run_;
    spans->start = clock.now();
  }
  ++steps_run_;

  PhaseSeconds& phases = record.phases;
  phases.other += max_over_ranks(head);
  // Dense layers: attention then a dense FFN on each rank, no collective.
  for (int layer = 0; layer < model.layers; ++layer) {
    if (model.is_moe_layer(layer)) continue;
    double slowest = 0;
    for (int r = 0; r < ranks; ++r)
      slowest = std::max(slowest, (windowed(layer) ? attention_windowed[r] : attention_full[r]) + dense[r]);
    phases.other += slowest;
  }
  clock.advance(phases.other);
  if (spans) spans->other = phases.other;

  const double dispatch_copy_bytes = model.hidden * scenario_.dispatch_bytes_per_element;
  const double combine_copy_bytes = model.hidden * precision.activation_bytes;
  // A group of one device has no all-to-all at all; any larger group launches both collectives.
  const double collective_overhead = ranks > 1 ? cost_.collective_overhead() : 0.0;
  experts_.resize(tokens.size() * k);
  tokens_ = tokens;
  for (TokenRef& token : tokens_) token.id = routing_.token_id(token);
  double imbalance_sum = 0;
  for (std::size_t moe = 0; moe < moe_layer_ids_.size(); ++moe) {
    const int layer = moe_layer_ids_[moe];
    const std::vector<double>& rank_attention = windowed(layer) ? attention_windowed : attention_full;
    const double attention = max_over_ranks(rank_attention);
    LayerSpans* layer_spans = spans ? &spans->layers.emplace_back() : nullptr;
    if (layer_spans) {
      layer_spans->layer = layer;
      layer_spans->start = clock.now();
      layer_spans->attention = rank_attention;
    }
    clock.advance(attention);
    phases.attention += attention;

    routing_.route(static_cast<int>(moe), tokens_, experts_);
    dispatch_.clear();
    account_dispatch(placement_, static_cast<int>(moe), scenario_.dispatch, token_rank, experts_, k,
                     dispatch_, scenario_.replica_choice);
    record.activations += dispatch_.activations;
    record.local_activations += dispatch_.local_activations;
    imbalance_sum += load_imbalance(dispatch_.device_tokens);

    fill_traffic(dispatch_copy_bytes, false);
    const LevelBytes dispatch_bytes = level_bytes(traffic_, topology_);
    const double dispatch_start = clock.now();
    clock.advance(collective_overhead);
    const double dispatch = collective_overhead + network_.run(traffic_, clock);
    phases.dispatch += dispatch;

    for (int device = 0; device < ranks; ++device) {
      device_experts_[device] = shared[device];
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

    fill_traffic(combine_copy_bytes, true);
    const double combine_start = clock.now();
    clock.advance(collective_overhead);
    const double combine = collective_overhead + network_.run(traffic_, clock);
    phases.combine += combine;

    LayerTotals& totals = layer_totals_[moe];
    totals.phases.attention += attention;
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
