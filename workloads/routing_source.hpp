#pragma once
// Where a token's experts come from. The engine asks, per MoE layer, for the top-k routed experts
// of every token in a step; a source must answer the same for the same (request, position, layer)
// however the tokens are batched, so that policies are compared on identical routing.
#include <cstdint>
#include <span>

#include "workloads/request.hpp"

namespace semsim {

using ExpertId = std::int16_t;

struct TokenRef {
  int request = 0;       // Request::id
  int topic = 0;         // Request::topic
  int position = 0;      // 0-based position in the sequence (prompt first, then generated tokens)
  std::int32_t id = -1;  // vocabulary identity, from RoutingSource::token_id (route() requires it)
};

class RoutingSource {
 public:
  virtual ~RoutingSource() = default;
  virtual int top_k() const = 0;
  virtual int experts() const = 0;
  virtual int moe_layers() const = 0;
  // Writes tokens.size() * top_k() distinct logical expert ids, token-major. Every token's `id` must
  // have been filled in by token_id() (once per token, not once per layer).
  virtual void route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const = 0;
  // Vocabulary identity of a token (what a real scheduler can read from the prompt).
  virtual std::int32_t token_id(const TokenRef& token) const = 0;
  // False for a trace recorded without token identities (every token_id is -1).
  virtual bool has_token_ids() const { return true; }
};

}  // namespace semsim
