#pragma once
// Seeded synthetic routing with the structure Sem-MoE relies on: per-layer expert popularity skew,
// topics that prefer some experts, and tokens whose experts mostly follow their identity.
//
// Model (all draws seeded, counter-based):
// - Layer l gives expert e a popularity ∝ 1/rank^expert_skew (ranks shuffled per layer).
// - Topic t boosts a random N/topics experts of each layer by (1 + topic_boost).
// - The vocabulary has `vocabulary` token types, split evenly among topics; a request of topic t
//   draws its tokens from t's types with Zipf(token_skew) frequencies.
// - Each (token type, layer) has a canonical top-k set and `variants` alternative sets, each drawn
//   without replacement from its topic's expert distribution. An occurrence uses the canonical set
//   with probability `token_affinity`, otherwise one of the alternatives uniformly — so routing is
//   mostly but not entirely context-independent.
#include <vector>

#include "models/yaml_input.hpp"
#include "workloads/alias_table.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

struct SyntheticRoutingParams {
  double expert_skew = 0.6;
  int topics = 8;
  double topic_boost = 3.0;
  int vocabulary = 4096;
  double token_skew = 1.0;
  double token_affinity = 0.75;
  int variants = 4;

  static SyntheticRoutingParams from_yaml(const YamlInput& in);  // keys as the field names
};

class SyntheticRouting final : public RoutingSource {
 public:
  SyntheticRouting(const SyntheticRoutingParams& params, int moe_layers, int experts, int top_k,
                   std::uint64_t seed);

  int top_k() const override { return top_k_; }
  int experts() const override { return experts_; }
  int moe_layers() const override { return moe_layers_; }
  int topics() const { return params_.topics; }
  void route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const override;
  std::int32_t token_id(const TokenRef& token) const override;

 private:
  // Expert sets, layer-major so that one routing call stays within one layer's tables. Canonical
  // sets (taken by most occurrences) are kept apart from the alternatives so that the hot table is
  // small enough to stay in cache.
  std::size_t canonical_offset(int layer, int type) const {
    return (static_cast<std::size_t>(layer) * params_.vocabulary + type) * top_k_;
  }
  std::size_t variant_offset(int layer, int type, int variant) const {  // variant in [0, variants)
    return ((static_cast<std::size_t>(layer) * params_.vocabulary + type) * params_.variants + variant) * top_k_;
  }

  SyntheticRoutingParams params_;
  int moe_layers_;
  int experts_;
  int top_k_;
  std::uint64_t seed_;
  int types_per_topic_;
  std::vector<AliasTable> topic_tokens_;  // [topic] -> local type index
  std::vector<ExpertId> canonical_;  // [layer][type][k]
  std::vector<ExpertId> variants_;   // [layer][type][variant][k]
};

}  // namespace semsim
