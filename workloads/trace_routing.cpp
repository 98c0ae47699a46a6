#include "workloads/trace_routing.hpp"

#include <algorithm>

#include "workloads/counter_rng.hpp"

namespace semsim {

const std::vector<std::string>& trace_decode_model_names() {
  static const std::vector<std::string> names{"resample_prompt", "layer_popularity"};
  return names;
}

TraceRouting::TraceRouting(std::shared_ptr<const RoutingTrace> trace, TraceDecodeModel decode_model,
                           std::uint64_t seed)
    : trace_(std::move(trace)), decode_model_(decode_model), seed_(seed) {
  if (decode_model_ != TraceDecodeModel::kLayerPopularity) return;
  const TraceHeader& h = trace_->header();
  for (int layer = 0; layer < h.moe_layers; ++layer) {
    std::vector<double> load(h.experts, 1.0);  // add-one: every expert drawable, so k distinct exist
    for (std::size_t t = 0; t < trace_->tokens(); ++t)
      for (int j = 0; j < h.top_k; ++j) ++load[trace_->experts_of(static_cast<std::int64_t>(t), layer)[j]];
    layer_load_.emplace_back(load);
  }
}

std::int64_t TraceRouting::recorded_token(const TokenRef& token) const {
  const std::size_t r = static_cast<std::size_t>(token.request) % trace_->requests();
  const TraceRequest& request = trace_->request(r);
  const std::int64_t first = trace_->first_token(r);
  const int prefill = request.prefill_routed ? request.input_tokens : 0;
  if (token.position < request.input_tokens) {
    if (request.prefill_routed) return first + token.position;
  } else if (token.position - request.input_tokens < request.decode_routed) {
    return first + prefill + (token.position - request.input_tokens);
  }
  if (decode_model_ == TraceDecodeModel::kLayerPopularity) return -1;
  const std::uint64_t bits =
      hash_keys(seed_, 0xdec, static_cast<std::uint64_t>(token.request), token.position);
  return first + static_cast<std::int64_t>(bits % static_cast<std::uint64_t>(request.routed_tokens()));
}

std::int32_t TraceRouting::token_id(const TokenRef& token) const {
  const std::int64_t recorded = recorded_token(token);
  return recorded < 0 ? -1 : trace_->token_ids()[recorded];
}

void TraceRouting::route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const {
  const int k = top_k();
  ExpertId* out = experts.data();
  for (const TokenRef& token : tokens) {
    const std::int64_t recorded = recorded_token(token);
    if (recorded >= 0) {
      const ExpertId* set = trace_->experts_of(recorded, moe_layer);
      for (int j = 0; j < k; ++j) out[j] = set[j];
    } else {
      for (int j = 0, draw = 0; j < k; ++draw) {
        const auto candidate = static_cast<ExpertId>(layer_load_[moe_layer].draw(hash_keys(
            seed_,
            static_cast<std::uint64_t>(token.request) << 32 | static_cast<std::uint32_t>(token.position),
            static_cast<std::uint64_t>(moe_layer), static_cast<std::uint64_t>(draw))));
        if (std::find(out, out + j, candidate) == out + j) out[j++] = candidate;
      }
    }
    out += k;
  }
}

}  // namespace semsim
