#pragma once
// Seeded synthetic routing with the structure Sem-MoE relies on: per-layer expert popularity skew,
// topics that prefer some experts, and tokens whose experts mostly follow their identity.
//
// Model (all draws seeded, counter-based; each layer's tables from its own stream, so one layer's
// parameters never change another layer's routing):
// - Layer l gives expert e a popularity ∝ 1/rank^expert_skew[l] (ranks shuffled per layer).
// - Topic t boosts a random N/topics experts of each layer by (1 + topic_boost).
// - The vocabulary has `vocabulary` token types, split evenly among topics; a request of topic t
//   draws its tokens from t's types with Zipf(token_skew) frequencies.
// - Each (token type, layer) has a canonical top-k set drawn without replacement from its topic's
//   expert distribution, and `variants` alternative sets that each keep every canonical expert with
//   probability variant_overlap[l] and draw the rest afresh. An occurrence takes the canonical set
//   with probability token_affinity[l], otherwise one of the alternatives uniformly — so routing is
//   mostly but not entirely context-independent.
// - Load balance (as routers trained with a balancing loss do): with load_balance > 0, the sets
//   (canonical and alternatives) of each topic's kBalancedTypesPerTopic most frequent types are
//   drawn most frequent first, each free slot's expert weighted by (1 - load_balance) x its topic
//   weight + load_balance x how far its expected load so far falls short of its topic-weighted
//   share, so frequent tokens do not pile onto the same experts; load skew then follows
//   expert_skew rather than token frequencies.
// - Inter-layer correlation: with probability layer_correlation a layer's canonical-or-alternative
//   choice reuses a draw made once per token occurrence (shared by all its layers), so a token that
//   deviates from its usual experts in one layer tends to deviate in the others too.
// - Group-limited models (DeepSeek's n_group / topk_group, workloads/expert_groups.hpp): every set,
//   canonical or alternative, is drawn as the gate picks experts, from the same expert weights: the
//   set's best topk_group groups by the sum of their two best Gumbel-perturbed log-weights, then the
//   best experts in them (an alternative's kept canonical experts first). So a token's experts span
//   at most topk_group groups, and within its groups they follow the same popularity and topic skew.
//   Models without a group limit draw exactly as before group limits existed.
// Per-layer parameters are lists (a scalar means the same for every layer); a list whose length is
// not the model's MoE layer count is resampled linearly over relative depth — how parameters fitted
// on one model (`semsim trace fit`) carry over to another (workloads/ROUTING_FIT.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"
#include "workloads/alias_table.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/expert_groups.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

struct SyntheticRoutingParams {
  std::vector<double> expert_skew{0.6};  // per MoE layer
  int topics = 8;
  double topic_boost = 3.0;
  int vocabulary = 4096;
  double token_skew = 1.0;
  std::vector<double> token_affinity{0.75};  // per MoE layer
  std::vector<double> variant_overlap{0.0};  // per MoE layer
  int variants = 4;
  double layer_correlation = 0.0;
  double load_balance = 0.0;  // 0: canonical sets drawn independently; 1: drawn to balance expected load

  static SyntheticRoutingParams from_yaml(const YamlInput& in);  // keys as the field names
  std::string to_yaml() const;                                   // a `routing:` map from_yaml reads back
};

// `values` (one per layer of some model, or one for all) at layer `layer` of `layers`: linear
// interpolation over relative depth.
double value_at_layer(const std::vector<double>& values, int layer, int layers);

// The synthetic vocabulary: `vocabulary` token types split evenly among `topics`; a token of a
// request of topic t is one of t's types, drawn with Zipf(token_skew) frequencies as a pure function
// of (seed, request, position).
class SyntheticTokens {
 public:
  SyntheticTokens(int vocabulary, int topics, double token_skew, std::uint64_t seed);
  std::int32_t token_id(const TokenRef& token) const;
  int topics() const { return topics_; }
  int types_per_topic() const { return static_cast<int>(zipf_.size()); }
  int vocabulary() const { return types_per_topic() * topics_; }  // token ids are below this
  const std::vector<double>& zipf() const { return zipf_; }       // weight of a topic's type by rank

 private:
  int topics_;
  std::uint64_t seed_;
  std::vector<double> zipf_;
  AliasTable ranks_;
};

class SyntheticRouting final : public RoutingSource {
 public:
  // `groups`: the model's group limit (ExpertGroupLimit::of); the default limits nothing.
  SyntheticRouting(const SyntheticRoutingParams& params, int moe_layers, int experts, int top_k,
                   std::uint64_t seed, const ExpertGroupLimit& groups = {});

  int top_k() const override { return top_k_; }
  int experts() const override { return experts_; }
  int moe_layers() const override { return moe_layers_; }
  int topics() const { return params_.topics; }
  const ExpertGroupLimit& expert_groups() const { return groups_; }
  int vocabulary() const { return tokens_.vocabulary(); }
  void route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const override;
  std::int32_t token_id(const TokenRef& token) const override;

  // Calls visit(count, sets) for each chunk of up to kSetChunk of `tokens`, in order: each token's
  // expert set at `moe_layer` (top_k() ids: bytes when experts() <= 256, else ExpertIds), where the
  // routing keeps it. route() is this, copying the sets out; a caller that needs only what the sets
  // imply (SetDispatch: the devices serving them) reads them in place.
  static constexpr std::size_t kSetChunk = 64;
  template <typename Visit>
  void visit_sets(int moe_layer, std::span<const TokenRef> tokens, Visit&& visit) const {
    draw_layer(moe_layer);
    if (canonical_bytes_.empty())
      choose_sets(canonical_.data(), variants_.data(), moe_layer, tokens, visit);
    else
      choose_sets(canonical_bytes_.data(), variants_bytes_.data(), moe_layer, tokens, visit);
  }

 private:
  template <typename Id, typename Visit>
  void choose_sets(const Id* canonical_table, const Id* variant_table, int moe_layer,
                   std::span<const TokenRef> tokens, Visit& visit) const;
  // Expert sets, type-major: a step routes the same tokens through every layer, so a token's sets
  // for successive layers sharing cache lines keeps a step's working set small (layer-major tables
  // missed the cache on almost every token). Canonical sets (taken by most occurrences) are kept
  // apart from the alternatives so that the hot table is small.
  std::size_t canonical_offset(int layer, int type) const {
    return (static_cast<std::size_t>(type) * moe_layers_ + layer) * top_k_;
  }
  std::size_t variant_offset(int layer, int type, int variant) const {  // variant in [0, variants)
    return ((static_cast<std::size_t>(type) * moe_layers_ + layer) * params_.variants + variant) * top_k_;
  }

  SyntheticRoutingParams params_;
  int moe_layers_;
  int experts_;
  int top_k_;
  std::uint64_t seed_;
  ExpertGroupLimit groups_;
  SyntheticTokens tokens_;
  int types_per_topic_;
  // One layer's sets as drawn, type by type: [type][k] canonical, [type][variant][k] alternatives.
  struct LayerSets {
    int k, variants;
    std::vector<ExpertId> canonical, alternatives;
    ExpertId* canonical_set(int type) { return &canonical[static_cast<std::size_t>(type) * k]; }
    ExpertId* variant_set(int type, int variant) {
      return &alternatives[(static_cast<std::size_t>(type) * variants + variant) * k];
    }
  };
  static constexpr int kBalancedTypesPerTopic = 1024;  // the tail's share of load is small
  // Draws `layer`'s sets into the tables on the first call for it. A layer's sets come from its own
  // random stream, so the order layers are first routed in changes nothing, and a command that
  // routes no token (`check`) draws none: drawing every layer costs a run tens of milliseconds.
  void draw_layer(int layer) const;
  // Every type's canonical and alternative sets at `layer`, from the layer's own random stream.
  // `grouped`: the group-limited draw, or null without a group limit.
  void draw_layer_sets(int layer, GroupLimitedDraw* grouped, LayerSets& sets) const;
  // Canonical and alternative sets of the balanced head types of every topic at `layer`.
  void draw_balanced_sets(int layer, const std::vector<std::vector<double>>& topic_weights, double overlap,
                          std::mt19937_64& rng, GroupLimitedDraw* grouped, LayerSets& sets) const;

  // The tables: filled layer by layer as routing first asks for a layer (draw_layer, once each), in
  // one byte per id when every expert fits (up to 256), where routing is bound by these loads and
  // bytes halve the cache lines a token touches; otherwise in ExpertIds.
  mutable std::vector<ExpertId> canonical_;  // [type][layer][k]
  mutable std::vector<ExpertId> variants_;   // [type][layer][variant][k]
  mutable std::vector<std::uint8_t> canonical_bytes_, variants_bytes_;
  mutable std::vector<std::once_flag> layer_drawn_;  // [layer]
  std::vector<double> affinity_;                     // [layer]
};

template <typename Id, typename Visit>
void SyntheticRouting::choose_sets(const Id* canonical_table, const Id* variant_table, int moe_layer,
                                   std::span<const TokenRef> tokens, Visit& visit) const {
  const int k = top_k_;
  const int variants = params_.variants;
  const double affinity = affinity_[moe_layer];
  // An occurrence's uniform u in [affinity, 1) picks alternative floor((u - affinity) * scale).
  const double scale = affinity < 1.0 ? variants / (1.0 - affinity) : 0.0;
  // The low 11 bits (unused by unit_interval's top 53) decide whether the layer reuses the
  // occurrence's shared draw.
  const auto shared_below = static_cast<std::uint64_t>(params_.layer_correlation * 2048.0);
  // u < affinity as integers: u is m / 2^53 for the draw's top 53 bits m, and affinity * 2^53 is exact,
  // so u < affinity exactly when m < ceil(affinity * 2^53).
  const auto canonical_below = static_cast<std::uint64_t>(std::ceil(std::ldexp(affinity, 53)));
  const Id* canonical = canonical_table + canonical_offset(moe_layer, 0);
  const Id* alternatives = variant_table + variant_offset(moe_layer, 0, 0);
  const std::size_t canonical_per_type = canonical_offset(0, 1);
  const std::size_t alternatives_per_type = variant_offset(0, 1, 0);
  const std::size_t alternatives_per_layer = variant_offset(1, 0, 0);
  constexpr int kPrefetchLayers = 2;
  const std::uint64_t layer_key =
      static_cast<std::uint64_t>(moe_layer) + 1;  // 0: the occurrence's shared draw
  // In chunks: first every token's set is chosen and its first line prefetched, then the chunk is
  // visited. Reading the sets is bound by the table loads (a step's tokens are scattered over the
  // table); choosing all of a chunk's sets first puts their loads in flight together instead of one
  // behind each token's hashing.
  const Id* sets[kSetChunk];
  for (std::size_t first = 0; first < tokens.size(); first += kSetChunk) {
    const std::size_t count = std::min(kSetChunk, tokens.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      const TokenRef& token = tokens[first + i];
      const std::uint64_t key =
          static_cast<std::uint64_t>(token.request) << 32 | static_cast<std::uint32_t>(token.position);
      const std::uint64_t bits = mix_keys(seed_, key, layer_key);
      const std::uint64_t draw = (bits & 0x7FF) < shared_below ? mix_keys(seed_, key, 0) : bits;
      const double u = unit_interval(draw);
      // Both candidate sets are addressed and one is selected by a mask, without a branch: which one
      // a token takes is a coin flip, and a branch on it (as compilers make of a ?: between the
      // two) mispredicted on a quarter of the tokens. The clamp at 0 only matters for the canonical
      // case, whose alternative index is unused.
      const int alternative = std::clamp(static_cast<int>((u - affinity) * scale), 0, variants - 1);
      const Id* canonical_set = canonical + static_cast<std::size_t>(token.id) * canonical_per_type;
      const Id* alternative_row = alternatives + static_cast<std::size_t>(token.id) * alternatives_per_type;
      const Id* alternative_set = alternative_row + static_cast<std::size_t>(alternative) * k;
      const std::uintptr_t take_alternative = std::uintptr_t{0} - ((draw >> 11) >= canonical_below);
      sets[i] = reinterpret_cast<const Id*>(reinterpret_cast<std::uintptr_t>(canonical_set) ^
                                            ((reinterpret_cast<std::uintptr_t>(canonical_set) ^
                                              reinterpret_cast<std::uintptr_t>(alternative_set)) &
                                             take_alternative));
      __builtin_prefetch(sets[i]);
      // A step routes the same tokens through the following layers, whose sets lie just after these
      // (type-major tables): their lines are fetched now, a few layers ahead, so that the layer
      // that crosses into a new line does not wait for it. (A prefetch past a table's end is a
      // hint, never a fault.)
      __builtin_prefetch(canonical_set + kPrefetchLayers * k);
      __builtin_prefetch(alternative_row + kPrefetchLayers * alternatives_per_layer);
    }
    visit(count, static_cast<const Id* const*>(sets));
  }
}

}  // namespace semsim
