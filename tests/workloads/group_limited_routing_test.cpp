// Group-limited synthetic routing (DeepSeek's n_group / topk_group), the check of a trace against a
// group limit, and the routing of models without a group limit, which must not change.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "models/content_hash.hpp"
#include "workloads/expert_groups.hpp"
#include "workloads/routing_trace.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {
namespace {

// 40 requests of 64 tokens with their token ids.
std::vector<TokenRef> fingerprint_tokens(const SyntheticRouting& routing, int requests = 40) {
  std::vector<TokenRef> tokens;
  for (int r = 0; r < requests; ++r)
    for (int position = 0; position < 64; ++position) {
      TokenRef t{r, r % routing.topics(), position};
      t.id = routing.token_id(t);
      tokens.push_back(t);
    }
  return tokens;
}

// Every layer's routing of fingerprint_tokens, hashed.
std::string routing_fingerprint(const SyntheticRouting& routing) {
  const std::vector<TokenRef> tokens = fingerprint_tokens(routing);
  ContentHash hash;
  std::vector<ExpertId> experts(tokens.size() * routing.top_k());
  for (int layer = 0; layer < routing.moe_layers(); ++layer) {
    routing.route(layer, tokens, experts);
    hash.add(std::span<const ExpertId>(experts));
  }
  return hash.hex();
}

SyntheticRoutingParams balanced_params() {
  SyntheticRoutingParams p;
  p.load_balance = 0.5;
  p.variant_overlap = {0.5};
  p.layer_correlation = 0.3;
  return p;
}

// The hashes were taken before group limits existed: a model without a limit, or with groups but
// all of them allowed, routes exactly as it did (one-byte and wide tables, with and without
// load balancing).
TEST(UngroupedSyntheticRouting, RoutesExactlyAsBeforeGroupLimits) {
  EXPECT_EQ(routing_fingerprint(SyntheticRouting({}, 26, 64, 6, 1)), "fedc80645ce5fd63");
  EXPECT_EQ(routing_fingerprint(SyntheticRouting(balanced_params(), 4, 64, 6, 7)), "79bfd35a96eb6a5d");
  EXPECT_EQ(routing_fingerprint(SyntheticRouting({}, 3, 300, 8, 3)), "700d5001fa19f961");
  EXPECT_EQ(routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 5)), "4529ba9a46f33869");
  EXPECT_EQ(routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 5, {256, 8, 8})),
            "4529ba9a46f33869");
  EXPECT_EQ(routing_fingerprint(SyntheticRouting({}, 26, 64, 6, 1, {64, 1, 1})), "fedc80645ce5fd63");
}

TEST(GroupLimitedSyntheticRouting, SameSeedSameRoutingOtherSeedOther) {
  const ExpertGroupLimit limit{256, 8, 4};
  const std::string a = routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 5, limit));
  EXPECT_EQ(a, routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 5, limit)));
  EXPECT_NE(a, routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 6, limit)));
  EXPECT_NE(a, routing_fingerprint(SyntheticRouting(balanced_params(), 3, 256, 8, 5)));
}

// Random shapes and parameters: every token's experts are k distinct ids in range from at most
// per_token groups, at every layer, canonical sets and alternatives alike.
TEST(GroupLimitedSyntheticRouting, NoTokenExceedsTheGroupLimit) {
  std::mt19937_64 rng(2024);
  auto between = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  for (int trial = 0; trial < 60; ++trial) {
    const int groups = between(2, 16), size = between(1, 20);
    const int per_token = between(1, groups - 1);
    const int k = between(1, std::min(per_token * size, 12));
    const ExpertGroupLimit limit{groups * size, groups, per_token};
    SyntheticRoutingParams p;
    p.topics = between(1, 4);
    p.vocabulary = between(p.topics, 300);
    p.expert_skew = {std::uniform_real_distribution<double>(0, 2)(rng)};
    p.topic_boost = std::uniform_real_distribution<double>(0, 10)(rng);
    p.token_affinity = {std::uniform_real_distribution<double>(0, 1)(rng)};
    p.variant_overlap = {std::uniform_real_distribution<double>(0, 1)(rng)};
    p.variants = between(1, 6);
    p.load_balance = trial % 3 == 0 ? std::uniform_real_distribution<double>(0.1, 1)(rng) : 0.0;
    const int layers = between(1, 3);
    const SyntheticRouting routing(p, layers, limit.experts, k, rng(), limit);
    const std::vector<TokenRef> tokens = fingerprint_tokens(routing, 10);
    std::vector<ExpertId> experts(tokens.size() * k);
    for (int layer = 0; layer < layers; ++layer) {
      routing.route(layer, tokens, experts);
      for (std::size_t t = 0; t < tokens.size(); ++t) {
        const std::span<const ExpertId> set(experts.data() + t * k, k);
        const std::set<int> distinct(set.begin(), set.end());
        ASSERT_EQ(static_cast<int>(distinct.size()), k) << "trial " << trial;
        ASSERT_GE(*distinct.begin(), 0);
        ASSERT_LT(*distinct.rbegin(), limit.experts);
        ASSERT_LE(groups_spanned(limit, set), per_token)
            << "trial " << trial << ": " << groups << " groups of " << size << ", top-" << k;
      }
    }
  }
}

// DeepSeek-V3's shape: 256 experts, top-8 from 4 of 8 groups (over 8 MoE layers, not 58: build time).
TEST(GroupLimitedSyntheticRouting, DeepSeekV3ShapeKeepsToFourGroups) {
  const ExpertGroupLimit limit{256, 8, 4};
  const SyntheticRouting routing({}, 8, 256, 8, 11, limit);
  const std::vector<TokenRef> tokens = fingerprint_tokens(routing, 8);
  std::vector<ExpertId> experts(tokens.size() * 8);
  std::vector<int> spans(9, 0);
  for (int layer = 0; layer < 8; ++layer) {
    routing.route(layer, tokens, experts);
    for (std::size_t t = 0; t < tokens.size(); ++t)
      ++spans[groups_spanned(limit, std::span<const ExpertId>(experts.data() + t * 8, 8))];
  }
  for (int g = 5; g <= 8; ++g) EXPECT_EQ(spans[g], 0) << g << " groups";
  EXPECT_GT(spans[4], 0);  // the limit binds: 8 uniform draws from 8 groups hit 5.25 of them on average
}

// The gate on every expert's score at once, as a reference: score log w + Gumbel, kept groups
// first, the other groups by the sum of their two best scores, the best scores in the kept groups.
std::vector<int> reference_gate(const std::vector<double>& weights, const ExpertGroupLimit& limit, int k,
                                const std::vector<int>& kept, std::mt19937_64& rng) {
  const int size = limit.group_size();
  std::vector<double> score(limit.experts, -INFINITY);
  std::extreme_value_distribution<double> gumbel(0.0, 1.0);
  for (int e = 0; e < limit.experts; ++e)
    if (std::find(kept.begin(), kept.end(), e) == kept.end()) score[e] = std::log(weights[e]) + gumbel(rng);
  std::vector<char> chosen(limit.groups, 0);
  int chosen_count = 0;
  for (int e : kept) chosen_count += chosen[limit.group_of(e)]++ == 0 ? 1 : 0;
  std::vector<double> group_score(limit.groups);
  for (int g = 0; g < limit.groups; ++g) {
    std::vector<double> s(score.begin() + g * size, score.begin() + (g + 1) * size);
    std::sort(s.rbegin(), s.rend());
    group_score[g] = s[0] + (size >= 2 ? s[1] : 0.0);
  }
  while (chosen_count < limit.per_token) {
    int best = -1;
    for (int g = 0; g < limit.groups; ++g)
      if (!chosen[g] && (best < 0 || group_score[g] > group_score[best])) best = g;
    chosen[best] = 1;
    ++chosen_count;
  }
  std::vector<int> candidates;
  for (int e = 0; e < limit.experts; ++e)
    if (chosen[limit.group_of(e)] && std::isfinite(score[e])) candidates.push_back(e);
  std::sort(candidates.begin(), candidates.end(), [&](int a, int b) { return score[a] > score[b]; });
  std::vector<int> set = kept;
  set.insert(set.end(), candidates.begin(), candidates.begin() + (k - static_cast<int>(kept.size())));
  std::sort(set.begin(), set.end());
  return set;
}

using SetCounts = std::map<std::vector<int>, double>;

double total_variation(const SetCounts& a, const SetCounts& b, double draws) {
  std::set<std::vector<int>> keys;
  for (const auto& [set, count] : a) keys.insert(set);
  for (const auto& [set, count] : b) keys.insert(set);
  double distance = 0;
  for (const auto& set : keys) {
    const auto in_a = a.find(set), in_b = b.find(set);
    distance += std::abs((in_a == a.end() ? 0 : in_a->second) - (in_b == b.end() ? 0 : in_b->second));
  }
  return distance / (2 * draws);
}

// The lazy top-down draw picks sets with the same distribution as the gate scoring every expert.
TEST(GroupLimitedDraw, MatchesTheGateScoringEveryExpert) {
  const ExpertGroupLimit limit{12, 4, 2};  // 4 groups of 3
  // Skewed weights whose groups rank differently by their best expert and by their best two.
  const std::vector<double> weights{9, 0.5, 0.4, 3, 3, 2.5, 1, 1, 1, 0.2, 6, 0.1};
  std::mt19937_64 rng(17);
  const int draws = 100000;
  for (const std::vector<int>& kept : {std::vector<int>{}, std::vector<int>{4}}) {
    const int k = 4;
    GroupLimitedDraw draw(limit, k);
    SetCounts lazy, reference;
    std::vector<ExpertId> set(k);
    for (int i = 0; i < draws; ++i) {
      std::copy(kept.begin(), kept.end(), set.begin());
      draw.fill(weights, set.data(), static_cast<int>(kept.size()), rng);
      std::vector<int> sorted(set.begin(), set.end());
      std::sort(sorted.begin(), sorted.end());
      ASSERT_EQ(std::set<int>(sorted.begin(), sorted.end()).size(), static_cast<std::size_t>(k));
      ++lazy[sorted];
      ++reference[reference_gate(weights, limit, k, kept, rng)];
    }
    // Between two estimates of the ~90 set frequencies from 100,000 draws each, sampling noise alone
    // is ~0.014; ranking groups by their best expert alone is 0.18 to 0.28 away.
    EXPECT_LT(total_variation(lazy, reference, draws), 0.04) << kept.size() << " kept";
  }
}

// Without a binding limit the draw is k draws without replacement in proportion to the weights.
TEST(GroupLimitedDraw, AllGroupsAllowedDrawsWithoutReplacement) {
  const ExpertGroupLimit limit{6, 3, 3};
  const std::vector<double> weights{5, 1, 2, 0.5, 3, 1.5};
  std::mt19937_64 rng(3);
  GroupLimitedDraw draw(limit, 2);
  const int draws = 100000;
  SetCounts lazy, sequential;
  std::vector<ExpertId> set(2);
  for (int i = 0; i < draws; ++i) {
    draw.fill(weights, set.data(), 0, rng);
    ++lazy[{std::min<int>(set[0], set[1]), std::max<int>(set[0], set[1])}];
    std::discrete_distribution<int> first(weights.begin(), weights.end());
    const int a = first(rng);
    std::vector<double> rest = weights;
    rest[a] = 0;
    std::discrete_distribution<int> second(rest.begin(), rest.end());
    const int b = second(rng);
    ++sequential[{std::min(a, b), std::max(a, b)}];
  }
  EXPECT_LT(total_variation(lazy, sequential, draws), 0.02);  // noise ~0.007
}

// Spearman rank correlation.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<int> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int x, int y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < order.size(); ++i) r[order[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double mean = (static_cast<double>(a.size()) - 1) / 2;
  double cov = 0, var_a = 0, var_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    var_a += (ra[i] - mean) * (ra[i] - mean);
    var_b += (rb[i] - mean) * (rb[i] - mean);
  }
  return cov / std::sqrt(var_a * var_b);
}

// Per expert, how many of the canonical sets of all token types (one set per type: token_affinity
// 1, uniform type frequencies) hold it at layer 0.
std::vector<double> canonical_load(const SyntheticRouting& routing) {
  std::vector<TokenRef> tokens(routing.vocabulary());
  for (int id = 0; id < routing.vocabulary(); ++id) tokens[id] = {0, 0, id, id};
  std::vector<ExpertId> experts(tokens.size() * routing.top_k());
  routing.route(0, tokens, experts);
  std::vector<double> load(routing.experts(), 0);
  for (ExpertId e : experts) ++load[e];
  return load;
}

// The limit moves load between groups, not the popularity order within one: with the same seed
// (so the same expert popularity), a group's experts rank alike with and without the limit.
TEST(GroupLimitedSyntheticRouting, PopularityWithinAGroupFollowsTheSkew) {
  SyntheticRoutingParams p;
  p.topics = 1;
  p.topic_boost = 0;
  p.vocabulary = 20000;
  p.token_skew = 0;
  p.token_affinity = {1.0};
  p.expert_skew = {1.2};
  const ExpertGroupLimit limit{64, 8, 3};
  const std::vector<double> grouped = canonical_load(SyntheticRouting(p, 1, 64, 6, 21, limit));
  const std::vector<double> free = canonical_load(SyntheticRouting(p, 1, 64, 6, 21));
  double worst = 1;
  for (int g = 0; g < 8; ++g) {
    const std::vector<double> a(grouped.begin() + g * 8, grouped.begin() + (g + 1) * 8);
    const std::vector<double> b(free.begin() + g * 8, free.begin() + (g + 1) * 8);
    EXPECT_GT(std::accumulate(a.begin(), a.end(), 0.0), 0) << "group " << g << " never chosen";
    worst = std::min(worst, rank_correlation(a, b));
  }
  EXPECT_GT(worst, 0.8);
  // The most popular expert stays among the most loaded.
  const auto top = std::max_element(free.begin(), free.end()) - free.begin();
  std::vector<double> sorted = grouped;
  std::sort(sorted.rbegin(), sorted.rend());
  EXPECT_GE(grouped[top], sorted[3]);
}

TEST(ExpertGroups, GroupsSpannedCountsDistinctGroups) {
  const ExpertGroupLimit limit{8, 4, 2};  // groups of 2
  const std::vector<ExpertId> same{0, 1}, three{0, 2, 7}, repeated{6, 7, 3, 2};
  EXPECT_EQ(groups_spanned(limit, same), 1);
  EXPECT_EQ(groups_spanned(limit, three), 3);
  EXPECT_EQ(groups_spanned(limit, repeated), 2);
  EXPECT_FALSE((ExpertGroupLimit{8, 4, 4}).limits());
  EXPECT_TRUE(limit.limits());
}

// A hand-made trace: 8 experts in 4 groups of 2, top-3, 2 layers, at most 2 groups per token.
TEST(ExpertGroups, CheckCountsTheRoutingsBeyondTheLimit) {
  TraceBuilder builder({"m", "hand-made", 2, 8, 3, false});
  // token: layer 0's experts, then layer 1's (groups in comments).
  const std::vector<ExpertId> first{0, 1, 2,    // 0 0 1: 2 groups
                                    0, 2, 4,    // 0 1 2: 3, beyond
                                    6, 7, 5,    // 3 3 2: 2
                                    7, 6, 1};   // 3 3 0: 2
  const std::vector<ExpertId> second{1, 3, 7,   // 0 1 3: 3, beyond
                                     2, 4, 6,   // 1 2 3: 3, beyond
                                     4, 5, 3,   // 2 2 1: 2
                                     1, 0, 5,   // 0 0 2: 2
                                     0, 3, 5,   // 0 1 2: 3, beyond
                                     6, 7, 0};  // 3 3 0: 2
  builder.add({{2, 1, true, 0}, std::vector<std::int32_t>(2, -1), first, {}}, "a");
  builder.add({{3, 1, true, 0}, std::vector<std::int32_t>(3, -1), second, {}}, "b");
  const RoutingTrace trace = std::move(builder).build();
  const GroupLimitCheck check = check_group_limit(trace, {8, 4, 2});
  EXPECT_EQ(check.tokens, 5);
  EXPECT_EQ(check.routings, 10);
  EXPECT_EQ(check.violating_routings, 4);
  EXPECT_EQ(check.violating_tokens, 3);  // token 0, 2 and 4; token 2 beyond at both layers
  EXPECT_EQ(check.most_groups, 3);
  EXPECT_EQ(group_limit_warning(check, "t.semtrace"),
            "4 of the 10 routings (3 of 5 tokens) in t.semtrace span more than 2 of the 4 expert groups (up "
            "to 3): the trace was not recorded with group-limited routing");
  const GroupLimitCheck loose = check_group_limit(trace, {8, 4, 3});
  EXPECT_EQ(loose.violating_routings, 0);
  EXPECT_EQ(group_limit_warning(loose, "t.semtrace"), "");
}

}  // namespace
}  // namespace semsim
