#pragma once
// Replays a routing trace (scenario `workload.routing: {source: trace, file: ..., decode: ...}`).
// Request i of the run replays trace request i mod N (the trace repeats when the scenario asks for
// more requests). A token at (request, position) takes the recorded routing of that position of the
// recorded sequence (its prompt, then its recorded decode steps), whatever length the run gives the
// prompt: a run prompt longer than the recorded one continues into the recorded decode steps, a
// shorter one leaves the rest of the recorded prompt to the run's decode steps. Positions the trace
// did not record (prompts of decode-only traces, beyond the recorded decode steps, decode of
// prefill-only traces) follow the selected decode model:
// - resample_prompt: the routing (every layer) and token id of one of the request's own recorded
//   tokens, drawn uniformly per (request, position): the request's token distribution, routed as
//   the model routed it.
// - layer_popularity: k distinct experts drawn per (request, position, layer) from the layer's expert
//   load over the whole trace; no token identity (-1). A baseline without token affinity.
#include <memory>
#include <string>
#include <vector>

#include "workloads/alias_table.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

enum class TraceDecodeModel { kResamplePrompt, kLayerPopularity };

const std::vector<std::string>& trace_decode_model_names();  // as the scenario spells them

class TraceRouting final : public RoutingSource {
 public:
  TraceRouting(std::shared_ptr<const RoutingTrace> trace, TraceDecodeModel decode_model, std::uint64_t seed);

  int top_k() const override { return trace_->header().top_k; }
  int experts() const override { return trace_->header().experts; }
  int moe_layers() const override { return trace_->header().moe_layers; }
  void route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const override;
  std::int32_t token_id(const TokenRef& token) const override;
  bool has_token_ids() const override { return !trace_->vocabulary().empty(); }

 private:
  // Global index of the recorded token whose routing `token` takes, or -1 (layer_popularity draw).
  std::int64_t recorded_token(const TokenRef& token) const;

  std::shared_ptr<const RoutingTrace> trace_;
  TraceDecodeModel decode_model_;
  std::uint64_t seed_;
  std::vector<AliasTable> layer_load_;  // layer_popularity: per layer, experts by trace-wide load
};

}  // namespace semsim
