#include "workloads/synthetic_routing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>

#include "workloads/counter_rng.hpp"

namespace semsim {

namespace {

// A scalar or a list of per-layer values, each in [min, max].
std::vector<double> per_layer_values(const YamlInput& in, const std::string& key,
                                     const std::vector<double>& fallback, double min, double max) {
  const auto node = in.optional(key);
  if (!node) return fallback;
  if (!node->is_sequence()) return {node->as_double_in(min, max)};
  std::vector<double> values;
  for (const YamlInput& item : node->items()) values.push_back(item.as_double_in(min, max));
  if (values.empty()) node->fail("expected a number or a non-empty list of per-layer numbers");
  return values;
}

std::string yaml_list(const std::vector<double>& values) {
  if (values.size() == 1) return fmt::format("{:.6g}", values[0]);
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += fmt::format("{}{:.6g}", i ? ", " : "", values[i]);
  return out + "]";
}

}  // namespace

SyntheticRoutingParams SyntheticRoutingParams::from_yaml(const YamlInput& in) {
  in.expect_map({"source", "expert_skew", "topics", "topic_boost", "vocabulary", "token_skew",
                 "token_affinity", "variants", "variant_overlap", "layer_correlation", "load_balance"});
  SyntheticRoutingParams p;
  p.expert_skew = per_layer_values(in, "expert_skew", p.expert_skew, 0, 5);
  p.topics = static_cast<int>(in.get_int_in("topics", p.topics, 1, 1024));
  p.topic_boost =
      in.optional("topic_boost") ? in.required("topic_boost").as_double_in(0, 1000) : p.topic_boost;
  p.vocabulary = static_cast<int>(in.get_int_in("vocabulary", p.vocabulary, p.topics, 1 << 20));
  p.token_skew = in.optional("token_skew") ? in.required("token_skew").as_double_in(0, 5) : p.token_skew;
  p.token_affinity = per_layer_values(in, "token_affinity", p.token_affinity, 0, 1);
  p.variants = static_cast<int>(in.get_int_in("variants", p.variants, 1, 64));
  p.variant_overlap = per_layer_values(in, "variant_overlap", p.variant_overlap, 0, 1);
  p.layer_correlation = in.optional("layer_correlation") ? in.required("layer_correlation").as_double_in(0, 1)
                                                         : p.layer_correlation;
  p.load_balance =
      in.optional("load_balance") ? in.required("load_balance").as_double_in(0, 1) : p.load_balance;
  return p;
}

std::string SyntheticRoutingParams::to_yaml() const {
  return fmt::format(
      "routing:\n  source: synthetic\n  expert_skew: {}\n  topics: {}\n  topic_boost: {:.6g}\n  vocabulary: "
      "{}\n"
      "  token_skew: {:.6g}\n  token_affinity: {}\n  variants: {}\n  variant_overlap: {}\n  "
      "layer_correlation: {:.6g}\n  load_balance: {:.6g}\n",
      yaml_list(expert_skew), topics, topic_boost, vocabulary, token_skew, yaml_list(token_affinity),
      variants, yaml_list(variant_overlap), layer_correlation, load_balance);
}

double value_at_layer(const std::vector<double>& values, int layer, int layers) {
  if (values.size() == 1 || layers <= 1) return values.front();
  const double position = static_cast<double>(layer) * static_cast<double>(values.size() - 1) / (layers - 1);
  const auto low = static_cast<std::size_t>(position);
  const std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
}

namespace {

// k distinct draws from `table` (rejection; experts >= k is guaranteed by the model loader).
void draw_distinct(const AliasTable& table, int k, std::mt19937_64& rng, ExpertId* out) {
  for (int i = 0; i < k;) {
    const auto candidate = static_cast<ExpertId>(table.draw(rng()));
    if (std::find(out, out + i, candidate) == out + i) out[i++] = candidate;
  }
}

// An alternative set: each canonical expert kept with probability `overlap`, the rest drawn afresh.
void draw_variant(const AliasTable& table, const ExpertId* canonical, int k, double overlap,
                  std::mt19937_64& rng, ExpertId* out) {
  int kept = 0;
  for (int j = 0; j < k; ++j)
    if (unit_interval(rng()) < overlap) out[kept++] = canonical[j];
  for (int i = kept; i < k;) {
    const auto candidate = static_cast<ExpertId>(table.draw(rng()));
    if (std::find(out, out + i, candidate) == out + i) out[i++] = candidate;
  }
}

// A topic's expert weights split by group, for the group-limited draw: per group an alias table
// (proposals) and the group's total weight.
struct TopicGroups {
  std::vector<AliasTable> tables;
  std::vector<double> weights;
};

TopicGroups topic_groups(const std::vector<double>& weights, const ExpertGroupLimit& limit) {
  TopicGroups out;
  const int size = limit.group_size();
  for (int g = 0; g < limit.groups; ++g) {
    const std::vector<double> group(weights.begin() + g * size, weights.begin() + (g + 1) * size);
    out.tables.emplace_back(group);
    out.weights.push_back(std::accumulate(group.begin(), group.end(), 0.0));
  }
  return out;
}

// Per topic at one layer: the layer's popularity (Zipf(skew) over the experts in a random order)
// times the topic's boost on experts of its own random choice, as weights, as an alias table and,
// under a group limit, split by group.
struct TopicTables {
  std::vector<std::vector<double>> weights;
  std::vector<AliasTable> experts;
  std::vector<TopicGroups> groups;  // empty without a group limit
};

TopicTables topic_tables(int experts, int topics, double skew, double boost, const ExpertGroupLimit* groups,
                         std::mt19937_64& rng) {
  const int boosted = std::max(1, experts / topics);
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> popularity(experts);
  for (int rank = 0; rank < experts; ++rank) popularity[order[rank]] = 1.0 / std::pow(rank + 1, skew);
  TopicTables out;
  for (int topic = 0; topic < topics; ++topic) {
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<double> weights = popularity;
    for (int i = 0; i < boosted; ++i) weights[order[i]] *= 1.0 + boost;
    out.experts.emplace_back(weights);
    if (groups) out.groups.push_back(topic_groups(weights, *groups));
    out.weights.push_back(std::move(weights));
  }
  return out;
}

// A type's sets at one layer: its canonical set, then `variants` alternatives that keep each of its
// experts with probability `overlap`; k experts each, the alternatives one after another.
struct SetShape {
  int k, variants;
  double overlap;
};

void draw_type_sets(const AliasTable& table, const SetShape& shape, std::mt19937_64& rng, ExpertId* canonical,
                    ExpertId* alternatives) {
  draw_distinct(table, shape.k, rng, canonical);
  for (int variant = 0; variant < shape.variants; ++variant)
    draw_variant(table, canonical, shape.k, shape.overlap, rng, alternatives + variant * shape.k);
}

// The same within the group limit, each group's experts proposed by its own table.
void draw_grouped_type_sets(GroupLimitedDraw& grouped, const std::vector<double>& weights,
                            const TopicGroups& split, int group_size, const SetShape& shape,
                            SplitMix64& draws, ExpertId* canonical, ExpertId* alternatives) {
  auto propose = [&](int group, std::uint64_t bits) {
    return group * group_size + split.tables[group].draw(bits);
  };
  grouped.fill(weights, split.weights, canonical, 0, draws, propose);
  for (int variant = 0; variant < shape.variants; ++variant) {
    ExpertId* set = alternatives + variant * shape.k;
    int kept = 0;
    for (int j = 0; j < shape.k; ++j)
      if (unit_interval(draws()) < shape.overlap) set[kept++] = canonical[j];
    grouped.fill(weights, split.weights, set, kept, draws, propose);
  }
}

}  // namespace

SyntheticRouting::SyntheticRouting(const SyntheticRoutingParams& params, int moe_layers, int experts,
                                   int top_k, std::uint64_t seed, const ExpertGroupLimit& groups)
    : params_(params),
      moe_layers_(moe_layers),
      experts_(experts),
      top_k_(top_k),
      seed_(seed),
      groups_(groups),
      tokens_(params.vocabulary, params.topics, params.token_skew, seed),
      types_per_topic_(tokens_.types_per_topic()),
      layer_drawn_(static_cast<std::size_t>(moe_layers)) {
  const int types = types_per_topic_ * params_.topics;
  if (groups_.limits() && groups_.experts != experts)
    throw std::invalid_argument("synthetic routing: the group limit is of another expert count");
  if (experts <= 256) {
    canonical_bytes_.resize(canonical_offset(0, types));
    variants_bytes_.resize(variant_offset(0, types, 0));
  } else {
    canonical_.resize(canonical_offset(0, types));
    variants_.resize(variant_offset(0, types, 0));
  }
  for (int layer = 0; layer < moe_layers; ++layer)
    affinity_.push_back(value_at_layer(params_.token_affinity, layer, moe_layers_));
}

void SyntheticRouting::draw_layer(int layer) const {
  std::call_once(layer_drawn_[static_cast<std::size_t>(layer)], [&] {
    const int types = types_per_topic_ * params_.topics;
    LayerSets sets{top_k_, params_.variants, std::vector<ExpertId>(static_cast<std::size_t>(types) * top_k_),
                   std::vector<ExpertId>(static_cast<std::size_t>(types) * params_.variants * top_k_)};
    std::optional<GroupLimitedDraw> grouped;
    if (groups_.limits()) grouped.emplace(groups_, top_k_);
    draw_layer_sets(layer, grouped ? &*grouped : nullptr, sets);
    // Into the type-major tables, in bytes where every expert fits in one.
    const std::size_t canonical_size = static_cast<std::size_t>(top_k_);
    const std::size_t variants_size = static_cast<std::size_t>(params_.variants) * top_k_;
    for (int type = 0; type < types; ++type) {
      const ExpertId* canonical = sets.canonical_set(type);
      const ExpertId* variants = sets.variant_set(type, 0);
      if (canonical_bytes_.empty()) {
        std::copy_n(canonical, canonical_size, &canonical_[canonical_offset(layer, type)]);
        std::copy_n(variants, variants_size, &variants_[variant_offset(layer, type, 0)]);
      } else {
        std::copy_n(canonical, canonical_size, &canonical_bytes_[canonical_offset(layer, type)]);
        std::copy_n(variants, variants_size, &variants_bytes_[variant_offset(layer, type, 0)]);
      }
    }
  });
}

void SyntheticRouting::draw_layer_sets(int layer, GroupLimitedDraw* grouped, LayerSets& sets) const {
  std::mt19937_64 rng(hash_keys(seed_, 0x5e3f, static_cast<std::uint64_t>(layer) + 1));
  const double skew = value_at_layer(params_.expert_skew, layer, moe_layers_);
  const SetShape shape{top_k_, params_.variants, value_at_layer(params_.variant_overlap, layer, moe_layers_)};
  const TopicTables topics =
      topic_tables(experts_, params_.topics, skew, params_.topic_boost, grouped ? &groups_ : nullptr, rng);
  if (params_.load_balance > 0) draw_balanced_sets(layer, topics.weights, shape.overlap, rng, grouped, sets);
  // The group-limited draws of the other types take dozens of values a set: from a cheaper stream.
  std::optional<SplitMix64> group_draws;
  if (grouped) group_draws.emplace(rng());
  const int types = types_per_topic_ * params_.topics;
  for (int type = 0; type < types; ++type) {
    if (params_.load_balance > 0 && type % types_per_topic_ < kBalancedTypesPerTopic) continue;  // done above
    const int topic = type / types_per_topic_;
    ExpertId* canonical = sets.canonical_set(type);
    ExpertId* alternatives = sets.variant_set(type, 0);
    if (grouped)
      draw_grouped_type_sets(*grouped, topics.weights[topic], topics.groups[topic], groups_.group_size(),
                             shape, *group_draws, canonical, alternatives);
    else
      draw_type_sets(topics.experts[topic], shape, rng, canonical, alternatives);
  }
}

void SyntheticRouting::draw_balanced_sets(int layer, const std::vector<std::vector<double>>& topic_weights,
                                          double overlap, std::mt19937_64& rng, GroupLimitedDraw* grouped,
                                          LayerSets& sets) const {
  const std::vector<double>& zipf = tokens_.zipf();
  const double lambda = params_.load_balance;
  const double zipf_total = std::accumulate(zipf.begin(), zipf.end(), 0.0);
  const int balanced = std::min(types_per_topic_, kBalancedTypesPerTopic);
  // Expected share of a type's occurrences taking its canonical set, and each alternative.
  const double canonical_share = affinity_[layer], variant_share = (1 - affinity_[layer]) / params_.variants;
  std::vector<double> weights(experts_);
  for (int topic = 0; topic < params_.topics; ++topic) {
    const std::vector<double>& preference = topic_weights[topic];
    const double preference_total = std::accumulate(preference.begin(), preference.end(), 0.0);
    std::vector<double> assigned(experts_, 0.0);  // expected activations per occurrence of the topic
    double mass = 0;
    // Fills the free slots of `set` (the first `kept` are given) by expected-load deficit, then books
    // `set_mass` activations on its experts.
    auto fill = [&](ExpertId* set, int kept, double set_mass) {
      for (int e = 0; e < experts_; ++e) {
        const double target = (mass + set_mass * top_k_) * preference[e] / preference_total;
        weights[e] = (1 - lambda) * set_mass * preference[e] / preference_total +
                     lambda * std::max(0.0, target - assigned[e]) + 1e-12 * preference[e];
      }
      for (int j = 0; j < kept; ++j) weights[set[j]] = 0;
      if (grouped) {
        grouped->fill(weights, set, kept, rng);
      } else {
        for (int j = kept; j < top_k_; ++j) {
          double x = unit_interval(rng()) * std::accumulate(weights.begin(), weights.end(), 0.0);
          int chosen = 0;
          while (chosen + 1 < experts_ && (x -= weights[chosen]) >= 0) ++chosen;
          set[j] = static_cast<ExpertId>(chosen);
          weights[chosen] = 0;  // distinct
        }
      }
      for (int j = 0; j < top_k_; ++j) assigned[set[j]] += set_mass;
      mass += set_mass * top_k_;
    };
    for (int rank = 0; rank < balanced; ++rank) {  // most frequent first
      const double share = zipf[rank] / zipf_total;
      const int type = topic * types_per_topic_ + rank;
      ExpertId* canonical = sets.canonical_set(type);
      fill(canonical, 0, share * canonical_share);
      for (int variant = 0; variant < params_.variants; ++variant) {
        ExpertId* set = sets.variant_set(type, variant);
        int kept = 0;
        for (int j = 0; j < top_k_; ++j)
          if (unit_interval(rng()) < overlap) set[kept++] = canonical[j];
        fill(set, kept, share * variant_share);
      }
    }
  }
}

SyntheticTokens::SyntheticTokens(int vocabulary, int topics, double token_skew, std::uint64_t seed)
    : topics_(topics), seed_(seed), zipf_(vocabulary / topics) {
  for (std::size_t i = 0; i < zipf_.size(); ++i)
    zipf_[i] = 1.0 / std::pow(static_cast<double>(i + 1), token_skew);
  ranks_ = AliasTable(zipf_);
}

std::int32_t SyntheticTokens::token_id(const TokenRef& token) const {
  const int topic = token.topic % topics_;
  return topic * types_per_topic() + ranks_.draw(hash_keys(seed_, 0x70c, token.request, token.position));
}

std::int32_t SyntheticRouting::token_id(const TokenRef& token) const {
  return tokens_.token_id(token);
}

namespace {

// Copies `count` sets of `k` ids each to `out` (widened to ExpertIds); returns the end. The common
// top-k values are compiled for their k, so that a set is copied by a few wide moves rather than a
// loop of k byte loads and stores.
template <int kFixed, typename Id>
ExpertId* copy_fixed_sets(const Id* const* sets, std::size_t count, ExpertId* out) {
  for (std::size_t i = 0; i < count; ++i, out += kFixed)
    for (int j = 0; j < kFixed; ++j) out[j] = sets[i][j];
  return out;
}

template <typename Id>
ExpertId* copy_sets(const Id* const* sets, std::size_t count, int k, ExpertId* out) {
  switch (k) {
    case 2:
      return copy_fixed_sets<2>(sets, count, out);
    case 4:
      return copy_fixed_sets<4>(sets, count, out);
    case 6:
      return copy_fixed_sets<6>(sets, count, out);
    case 8:
      return copy_fixed_sets<8>(sets, count, out);
    default:
      for (std::size_t i = 0; i < count; ++i, out += k)
        for (int j = 0; j < k; ++j) out[j] = sets[i][j];  // k is tiny: a loop beats a memmove call
      return out;
  }
}

}  // namespace

void SyntheticRouting::route(int moe_layer, std::span<const TokenRef> tokens,
                             std::span<ExpertId> experts) const {
  ExpertId* out = experts.data();
  visit_sets(moe_layer, tokens,
             [&](std::size_t count, const auto* sets) { out = copy_sets(sets, count, top_k_, out); });
}

}  // namespace semsim
