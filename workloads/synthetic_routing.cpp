#include "workloads/synthetic_routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "workloads/counter_rng.hpp"

namespace semsim {

SyntheticRoutingParams SyntheticRoutingParams::from_yaml(const YamlInput& in) {
  in.expect_map({"source", "expert_skew", "topics", "topic_boost", "vocabulary", "token_skew", "token_affinity",
                 "variants"});
  SyntheticRoutingParams p;
  p.expert_skew = in.optional("expert_skew") ? in.required("expert_skew").as_double_in(0, 5) : p.expert_skew;
  p.topics = static_cast<int>(in.get_int_in("topics", p.topics, 1, 1024));
  p.topic_boost = in.optional("topic_boost") ? in.required("topic_boost").as_double_in(0, 1000) : p.topic_boost;
  p.vocabulary = static_cast<int>(in.get_int_in("vocabulary", p.vocabulary, p.topics, 1 << 20));
  p.token_skew = in.optional("token_skew") ? in.required("token_skew").as_double_in(0, 5) : p.token_skew;
  p.token_affinity =
      in.optional("token_affinity") ? in.required("token_affinity").as_double_in(0, 1) : p.token_affinity;
  p.variants = static_cast<int>(in.get_int_in("variants", p.variants, 1, 64));
  return p;
}

namespace {

// k distinct draws from `table` (rejection; experts >= k is guaranteed by the model loader).
void draw_distinct(const AliasTable& table, int k, std::mt19937_64& rng, ExpertId* out) {
  for (int i = 0; i < k;) {
    const auto candidate = static_cast<ExpertId>(table.draw(rng()));
    if (std::find(out, out + i, candidate) == out + i) out[i++] = candidate;
  }
}

}  // namespace

SyntheticRouting::SyntheticRouting(const SyntheticRoutingParams& params, int moe_layers, int experts, int top_k,
                                   std::uint64_t seed)
    : params_(params), moe_layers_(moe_layers), experts_(experts), top_k_(top_k), seed_(seed) {
  types_per_topic_ = params_.vocabulary / params_.topics;
  std::mt19937_64 rng(hash_keys(seed, 0x5e3f));

  std::vector<double> zipf(types_per_topic_);
  for (int i = 0; i < types_per_topic_; ++i) zipf[i] = 1.0 / std::pow(i + 1, params_.token_skew);
  topic_tokens_.assign(params_.topics, AliasTable(zipf));

  // Per (topic, layer) expert distribution: layer popularity times the topic's boost.
  const int boosted = std::max(1, experts / params_.topics);
  std::vector<AliasTable> topic_layer(static_cast<std::size_t>(params_.topics) * moe_layers);
  std::vector<int> order(experts);
  for (int layer = 0; layer < moe_layers; ++layer) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<double> popularity(experts);
    for (int rank = 0; rank < experts; ++rank) popularity[order[rank]] = 1.0 / std::pow(rank + 1, params_.expert_skew);
    for (int topic = 0; topic < params_.topics; ++topic) {
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<double> weights = popularity;
      for (int i = 0; i < boosted; ++i) weights[order[i]] *= 1.0 + params_.topic_boost;
      topic_layer[static_cast<std::size_t>(topic) * moe_layers + layer] = AliasTable(weights);
    }
  }

  canonical_.resize(canonical_offset(moe_layers, 0));
  variants_.resize(variant_offset(moe_layers, 0, 0));
  for (int type = 0; type < types_per_topic_ * params_.topics; ++type) {
    const int topic = type / types_per_topic_;
    for (int layer = 0; layer < moe_layers; ++layer) {
      const AliasTable& experts_of_topic = topic_layer[static_cast<std::size_t>(topic) * moe_layers + layer];
      draw_distinct(experts_of_topic, top_k, rng, &canonical_[canonical_offset(layer, type)]);
      for (int variant = 0; variant < params_.variants; ++variant)
        draw_distinct(experts_of_topic, top_k, rng, &variants_[variant_offset(layer, type, variant)]);
    }
  }
}

std::int32_t SyntheticRouting::token_id(const TokenRef& token) const {
  const int topic = token.topic % params_.topics;
  const int local = topic_tokens_[topic].draw(hash_keys(seed_, 0x70c, token.request, token.position));
  return topic * types_per_topic_ + local;
}

void SyntheticRouting::route(int moe_layer, std::span<const TokenRef> tokens, std::span<ExpertId> experts) const {
  const int k = top_k_;
  const int variants = params_.variants;
  const double affinity = params_.token_affinity;
  const ExpertId* canonical = &canonical_[canonical_offset(moe_layer, 0)];
  const ExpertId* alternatives = &variants_[variant_offset(moe_layer, 0, 0)];
  const std::size_t alternatives_per_type = static_cast<std::size_t>(variants) * k;
  const std::uint64_t layer_key = static_cast<std::uint64_t>(moe_layer) + 1;
  ExpertId* out = experts.data();
  for (const TokenRef& token : tokens) {
    const std::uint64_t bits = mix_keys(
        seed_, static_cast<std::uint64_t>(token.request) << 32 | static_cast<std::uint32_t>(token.position), layer_key);
    // Low 32 bits scaled to [0, variants) by a multiply (no division); they barely overlap with the
    // high bits that decide between the canonical set and an alternative.
    const ExpertId* set =
        unit_interval(bits) < affinity
            ? canonical + static_cast<std::size_t>(token.id) * k
            : alternatives + static_cast<std::size_t>(token.id) * alternatives_per_type +
                  static_cast<std::size_t>(((bits & 0xFFFFFFFFULL) * variants) >> 32) * k;
    for (int j = 0; j < k; ++j) out[j] = set[j];  // k is tiny: a loop beats a memmove call
    out += k;
  }
}

}  // namespace semsim
