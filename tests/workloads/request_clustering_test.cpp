// Topic clusters of requests by their words (workloads/request_clustering.hpp).
#include "workloads/request_clustering.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "models/input_error.hpp"
#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// `groups` topics of `per_group` requests each, interleaved (request r is of topic r % groups). A
// request holds 5 of its topic's 12 own words (drawn from `seed`) and the 3 words every request
// has (ids 0..2: no information, not weighed).
std::vector<std::vector<std::int32_t>> separable_word_sets(int groups, int per_group, std::uint64_t seed) {
  std::vector<std::vector<std::int32_t>> sets;
  for (int r = 0; r < groups * per_group; ++r) {
    const int topic = r % groups;
    std::vector<std::int32_t> tokens{0, 1, 2};
    for (int j = 0; j < 5; ++j)
      tokens.push_back(3 + 12 * topic + static_cast<std::int32_t>(hash_keys(seed, r, j) % 12));
    sets.push_back(tokens);
  }
  return sets;
}

constexpr std::size_t kSeparableVocabulary = 3 + 12 * 4;

TEST(RequestClustering, RecoversSeparableTopicsExactly) {
  for (const int groups : {2, 3, 4}) {
    const auto sets = separable_word_sets(groups, 15, 7);
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      const RequestClusters c = cluster_requests(sets, kSeparableVocabulary, {groups, seed});
      ASSERT_EQ(c.cluster.size(), sets.size());
      // Same topic <=> same cluster.
      for (std::size_t a = 0; a < sets.size(); ++a)
        for (std::size_t b = 0; b < sets.size(); ++b)
          EXPECT_EQ(c.cluster[a] == c.cluster[b], a % groups == b % groups)
              << groups << " topics, seed " << seed << ", requests " << a << " and " << b;
      EXPECT_EQ(c.sizes, std::vector<int>(groups, 15));
      // Equal sizes: numbered by first request, so cluster i is topic i.
      for (int r = 0; r < groups; ++r) EXPECT_EQ(c.cluster[r], r);
      // Disjoint topic words: requests of two topics share only words that are not weighed.
      EXPECT_NEAR(c.between_similarity, 0.0, 1e-12);
      EXPECT_GT(c.within_similarity, 0.2);
      // Each cluster's characteristic words are its topic's, never the shared ones.
      for (int k = 0; k < groups; ++k) {
        ASSERT_FALSE(c.top_words[k].empty());
        for (const ClusterWord& w : c.top_words[k]) {
          EXPECT_GE(w.word, 3 + 12 * k);
          EXPECT_LT(w.word, 3 + 12 * (k + 1));
          EXPECT_GT(w.share_in_cluster, 0.0);
          EXPECT_EQ(w.share_elsewhere, 0.0);
        }
        for (std::size_t i = 1; i < c.top_words[k].size(); ++i)
          EXPECT_GE(c.top_words[k][i - 1].weight, c.top_words[k][i].weight);
      }
    }
  }
}

// Overlapping random word sets: no clear topics, so the outcome depends on the seeding.
std::vector<std::vector<std::int32_t>> random_word_sets(int requests) {
  std::vector<std::vector<std::int32_t>> sets(requests);
  for (int r = 0; r < requests; ++r)
    for (int j = 0; j < 6; ++j) sets[r].push_back(static_cast<std::int32_t>(hash_keys(11, r, j) % 40));
  return sets;
}

TEST(RequestClustering, IsDeterministicForASeed) {
  const auto sets = random_word_sets(80);
  const RequestClusters a = cluster_requests(sets, 40, {4, 5, 3});
  const RequestClusters b = cluster_requests(sets, 40, {4, 5, 3});
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_EQ(a.similarity, b.similarity);
  EXPECT_EQ(a.objective, b.objective);
  bool some_seed_differs = false;
  for (std::uint64_t seed = 6; seed < 16 && !some_seed_differs; ++seed)
    some_seed_differs =
        cluster_requests(sets, 40, {4, seed, 1}).cluster != cluster_requests(sets, 40, {4, 5, 1}).cluster;
  EXPECT_TRUE(some_seed_differs) << "the seed must matter";
  // More seedings keep the best objective found: never worse than one.
  EXPECT_GE(cluster_requests(sets, 40, {4, 5, 10}).objective,
            cluster_requests(sets, 40, {4, 5, 1}).objective);
}

// Every word weighed (no document-frequency limits): plain TF-IDF.
ClusteringOptions every_word(int clusters) {
  ClusteringOptions options{clusters, 1};
  options.min_requests_per_word = 1;
  options.max_request_share_per_word = 1.0;
  return options;
}

TEST(RequestClustering, EveryClusterGetsARequestAndTheMeasuresAddUp) {
  const auto sets = random_word_sets(12);
  const RequestClusters c = cluster_requests(sets, 40, every_word(12));  // as many clusters as requests
  EXPECT_EQ(c.sizes, std::vector<int>(12, 1));
  EXPECT_TRUE(std::isnan(c.within_similarity));  // no pair within a cluster
  EXPECT_FALSE(std::isnan(c.between_similarity));
  for (const double s : c.similarity) EXPECT_NEAR(s, 1.0, 1e-12);  // a request is its own centroid

  const RequestClusters one = cluster_requests(sets, 40, every_word(1));
  EXPECT_EQ(one.sizes, std::vector<int>{12});
  EXPECT_TRUE(std::isnan(one.between_similarity));  // no second cluster
  // One cluster: the mean similarity of all pairs, computed directly.
  double sum = 0;
  int pairs = 0;
  std::vector<std::map<std::int32_t, double>> unit(sets.size());
  std::vector<int> df(40, 0);
  for (const auto& s : sets)
    for (const std::int32_t t : std::set<std::int32_t>(s.begin(), s.end())) ++df[t];
  for (std::size_t r = 0; r < sets.size(); ++r) {
    double norm = 0;
    for (const std::int32_t t : std::set<std::int32_t>(sets[r].begin(), sets[r].end())) {
      unit[r][t] = std::log(12.0 / df[t]);
      norm += unit[r][t] * unit[r][t];
    }
    for (auto& [t, w] : unit[r]) w /= std::sqrt(norm);
  }
  for (std::size_t a = 0; a < sets.size(); ++a)
    for (std::size_t b = a + 1; b < sets.size(); ++b, ++pairs)
      for (const auto& [t, w] : unit[a])
        if (unit[b].contains(t)) sum += w * unit[b].at(t);
  EXPECT_NEAR(one.within_similarity, sum / pairs, 1e-12);
}

TEST(RequestClustering, WeighsOnlyWordsOfSomeRequestsButNotMost) {
  // Six requests: word 0 in all, 1 in four, 2 in three, 3 in two, 4 in one.
  const std::vector<std::vector<std::int32_t>> sets{{0, 1, 2, 3, 4}, {0, 1, 2, 3}, {0, 1, 2},
                                                    {0, 1},          {0},          {0}};
  auto listed = [&](const ClusteringOptions& options) {
    const RequestClusters c = cluster_requests(sets, 5, options);
    std::set<std::int32_t> words;
    for (const ClusterWord& w : c.top_words[0]) words.insert(w.word);
    return words;
  };
  EXPECT_EQ(listed({1, 1}), (std::set<std::int32_t>{2, 3}));  // in 2 .. 3 of 6 requests
  // Plain TF-IDF: all but the word every request has (idf 0).
  EXPECT_EQ(listed(every_word(1)), (std::set<std::int32_t>{1, 2, 3, 4}));
}

TEST(RequestClustering, RejectsImpossibleClusterCounts) {
  const auto sets = random_word_sets(5);
  EXPECT_THROW(cluster_requests(sets, 40, {0, 1}), InputError);
  EXPECT_THROW(cluster_requests(sets, 40, {-1, 1}), InputError);
  EXPECT_THROW(cluster_requests(sets, 40, {6, 1}), InputError);
  EXPECT_THROW(cluster_requests({}, 40, {1, 1}), InputError);
  EXPECT_THROW(cluster_requests(sets, 40, {2, 1, 0}), InputError);  // no seeding
  EXPECT_THROW(cluster_requests(sets, 10, {2, 1}), InputError);     // word ids beyond the words
  EXPECT_NO_THROW(cluster_requests(sets, 40, {5, 1}));
}

}  // namespace
}  // namespace semsim
