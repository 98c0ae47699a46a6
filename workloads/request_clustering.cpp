#include "workloads/request_clustering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>

#include "models/input_error.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// A request as a unit TF-IDF vector over its distinct weighed words (empty when it has none).
struct SparseVector {
  std::vector<std::int32_t> words;  // increasing
  std::vector<double> weights;
};

using DenseVector = std::vector<double>;

double dot(const SparseVector& x, const DenseVector& dense) {
  double sum = 0;
  for (std::size_t i = 0; i < x.words.size(); ++i) sum += x.weights[i] * dense[x.words[i]];
  return sum;
}

double dot(const DenseVector& a, const DenseVector& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

void add(DenseVector& sum, const SparseVector& x) {
  for (std::size_t i = 0; i < x.words.size(); ++i) sum[x.words[i]] += x.weights[i];
}

void normalize(DenseVector& v) {
  const double norm = std::sqrt(dot(v, v));
  if (norm > 0)
    for (double& value : v) value /= norm;
}

struct TfIdf {
  std::vector<SparseVector> requests;
  std::vector<int> document_frequency;  // per word: requests containing it
};

// Binary term frequency (a word counts once per request) times idf = ln(requests / df), over the
// words within the options' document-frequency limits; each request's vector scaled to unit length.
TfIdf tfidf_vectors(const std::vector<std::vector<std::int32_t>>& word_sets, std::size_t words,
                    const ClusteringOptions& options) {
  TfIdf t;
  t.document_frequency.assign(words, 0);
  std::vector<std::vector<std::int32_t>> sets(word_sets.size());
  for (std::size_t r = 0; r < word_sets.size(); ++r) {
    sets[r] = word_sets[r];
    std::sort(sets[r].begin(), sets[r].end());
    sets[r].erase(std::unique(sets[r].begin(), sets[r].end()), sets[r].end());
    for (const std::int32_t word : sets[r]) {
      if (word < 0 || static_cast<std::size_t>(word) >= words)
        throw InputError(fmt::format("request {}: word id {} outside the {} words", r, word, words));
      ++t.document_frequency[word];
    }
  }
  const double requests = static_cast<double>(word_sets.size());
  const double most = options.max_request_share_per_word * requests;
  t.requests.resize(sets.size());
  for (std::size_t r = 0; r < sets.size(); ++r) {
    SparseVector& x = t.requests[r];
    double norm = 0;
    for (const std::int32_t word : sets[r]) {
      const int df = t.document_frequency[word];
      if (df < options.min_requests_per_word || df > most) continue;
      const double weight = std::log(requests / df);
      x.words.push_back(word);
      x.weights.push_back(weight);
      norm += weight * weight;
    }
    if (norm > 0)
      for (double& weight : x.weights) weight /= std::sqrt(norm);
  }
  return t;
}

struct KMeansRun {
  std::vector<int> cluster;
  std::vector<DenseVector> centroids;  // unit length (zero for a cluster of zero vectors)
  double objective = 0;                // sum of the requests' similarities to their centroids
  int iterations = 0;
};

DenseVector dense(const SparseVector& x, std::size_t words) {
  DenseVector v(words, 0.0);
  add(v, x);
  return v;
}

// k-means++ on the sphere: the first centre a request drawn uniformly among those with a direction
// (a word of positive weight), each next one drawn with probability proportional to 1 - its best
// similarity to the centres so far (half the squared distance between unit vectors). When every such request
// already matches a centre, the lowest-numbered request not yet one is taken.
std::vector<DenseVector> seed_centroids(const std::vector<SparseVector>& x, int clusters, std::size_t words,
                                        std::mt19937_64& rng) {
  const std::size_t n = x.size();
  std::vector<std::size_t> with_direction;
  for (std::size_t r = 0; r < n; ++r)
    if (std::any_of(x[r].weights.begin(), x[r].weights.end(), [](double w) { return w > 0; }))
      with_direction.push_back(r);
  std::vector<bool> chosen(n, false);
  std::vector<DenseVector> centroids;
  auto take = [&](std::size_t r) {
    chosen[r] = true;
    centroids.push_back(dense(x[r], words));
  };
  take(with_direction.empty() ? 0 : with_direction[rng() % with_direction.size()]);
  std::vector<double> best(n, -1.0);
  while (static_cast<int>(centroids.size()) < clusters) {
    double total = 0;
    std::vector<double> distance(n, 0.0);
    for (const std::size_t r : with_direction) {
      best[r] = std::max(best[r], dot(x[r], centroids.back()));
      distance[r] = chosen[r] ? 0.0 : std::max(0.0, 1.0 - best[r]);
      total += distance[r];
    }
    if (total <= 0) {
      take(static_cast<std::size_t>(std::find(chosen.begin(), chosen.end(), false) - chosen.begin()));
      continue;
    }
    const double target = unit_interval(rng()) * total;
    double cumulative = 0;
    std::size_t pick = with_direction.back();
    for (const std::size_t r : with_direction) {
      cumulative += distance[r];
      if (distance[r] > 0 && cumulative > target) {
        pick = r;
        break;
      }
    }
    take(pick);
  }
  return centroids;
}

// Lloyd's iterations on the sphere: each request to the centroid of highest cosine similarity (ties:
// the lower cluster), an empty cluster refilled with the request least similar to its own centroid
// among clusters of two or more (ties: the lower request), centroids the normalized sums; until no
// request changes cluster or max_iterations.
KMeansRun spherical_kmeans(const std::vector<SparseVector>& x, std::vector<DenseVector> centroids,
                           int max_iterations) {
  const std::size_t n = x.size();
  const auto clusters = static_cast<int>(centroids.size());
  KMeansRun run;
  run.cluster.assign(n, -1);
  std::vector<double> similarity(n, 0.0);
  for (run.iterations = 1; run.iterations <= max_iterations; ++run.iterations) {
    std::vector<int> assignment(n, 0);
    std::vector<int> sizes(clusters, 0);
    for (std::size_t r = 0; r < n; ++r) {
      double best = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < clusters; ++c) {
        const double s = dot(x[r], centroids[c]);
        if (s > best) {
          best = s;
          assignment[r] = c;
        }
      }
      similarity[r] = best;
      ++sizes[assignment[r]];
    }
    for (int c = 0; c < clusters; ++c) {
      if (sizes[c] > 0) continue;
      std::size_t donor = n;
      for (std::size_t r = 0; r < n; ++r)
        if (sizes[assignment[r]] >= 2 && (donor == n || similarity[r] < similarity[donor])) donor = r;
      --sizes[assignment[donor]];
      assignment[donor] = c;
      sizes[c] = 1;
    }
    const bool changed = assignment != run.cluster;
    run.cluster = std::move(assignment);
    for (DenseVector& centroid : centroids) std::fill(centroid.begin(), centroid.end(), 0.0);
    for (std::size_t r = 0; r < n; ++r) add(centroids[run.cluster[r]], x[r]);
    for (DenseVector& centroid : centroids) normalize(centroid);
    if (!changed) break;
  }
  run.iterations = std::min(run.iterations, max_iterations);
  run.objective = 0;
  for (std::size_t r = 0; r < n; ++r) run.objective += dot(x[r], centroids[run.cluster[r]]);
  run.centroids = std::move(centroids);
  return run;
}

// The best of options.restarts seedings (k-means++, then Lloyd's): the highest objective.
KMeansRun best_kmeans(const std::vector<SparseVector>& x, std::size_t words,
                      const ClusteringOptions& options) {
  KMeansRun best;
  best.objective = -std::numeric_limits<double>::infinity();
  for (int restart = 0; restart < options.restarts; ++restart) {
    std::mt19937_64 rng(hash_keys(options.seed, 0xc105e2, static_cast<std::uint64_t>(restart)));
    KMeansRun run =
        spherical_kmeans(x, seed_centroids(x, options.clusters, words, rng), options.max_iterations);
    if (run.objective > best.objective) best = std::move(run);
  }
  return best;
}

// label[c] of each of the k clusters: clusters numbered by decreasing size, ties by their first
// request.
std::vector<int> labels_by_size(const std::vector<int>& cluster, int k) {
  std::vector<int> sizes(k, 0), first(k, static_cast<int>(cluster.size()));
  for (std::size_t r = 0; r < cluster.size(); ++r) {
    ++sizes[cluster[r]];
    first[cluster[r]] = std::min(first[cluster[r]], static_cast<int>(r));
  }
  std::vector<int> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return sizes[a] != sizes[b] ? sizes[a] > sizes[b] : first[a] < first[b]; });
  std::vector<int> label(k);
  for (int c = 0; c < k; ++c) label[order[c]] = c;
  return label;
}

// Per cluster: the sum of its requests' vectors, and of their squared norms (1, or 0 for a request
// without words).
struct ClusterSums {
  std::vector<DenseVector> vectors;
  std::vector<double> squared_norms;
};

ClusterSums cluster_sums(const std::vector<SparseVector>& x, const std::vector<int>& cluster, int k,
                         std::size_t words) {
  ClusterSums sums{std::vector<DenseVector>(k, DenseVector(words, 0.0)), std::vector<double>(k, 0.0)};
  for (std::size_t r = 0; r < x.size(); ++r) {
    add(sums.vectors[cluster[r]], x[r]);
    for (const double w : x[r].weights) sums.squared_norms[cluster[r]] += w * w;
  }
  return sums;
}

// Pairwise similarities from the clusters' sums: |S_c|^2 = sum |x|^2 + 2 sum over pairs x_i.x_j.
void add_pair_similarities(const ClusterSums& sums, RequestClusters& result) {
  const auto k = static_cast<int>(result.sizes.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double within_sum = 0, within_pairs = 0, between_sum = 0, between_pairs = 0;
  for (int c = 0; c < k; ++c) {
    const double pairs = 0.5 * result.sizes[c] * (result.sizes[c] - 1.0);
    const double sum = 0.5 * (dot(sums.vectors[c], sums.vectors[c]) - sums.squared_norms[c]);
    result.within_cluster_similarity.push_back(pairs > 0 ? sum / pairs : nan);
    within_sum += sum;
    within_pairs += pairs;
    for (int d = c + 1; d < k; ++d) {
      between_sum += dot(sums.vectors[c], sums.vectors[d]);
      between_pairs += static_cast<double>(result.sizes[c]) * result.sizes[d];
    }
  }
  result.within_similarity = within_pairs > 0 ? within_sum / within_pairs : nan;
  result.between_similarity = between_pairs > 0 ? between_sum / between_pairs : nan;
}

// Characteristic words: the largest components of each cluster's mean vector.
void add_top_words(const TfIdf& tfidf, const ClusterSums& sums, int top_words, RequestClusters& result) {
  const std::vector<SparseVector>& x = tfidf.requests;
  const auto k = static_cast<int>(result.sizes.size());
  const std::size_t words = tfidf.document_frequency.size();
  std::vector<std::vector<int>> contained(k, std::vector<int>(words, 0));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (const std::int32_t word : x[r].words) ++contained[result.cluster[r]][word];
  result.top_words.resize(k);
  for (int c = 0; c < k; ++c) {
    const DenseVector& sum = sums.vectors[c];
    std::vector<std::int32_t> present;
    for (std::size_t t = 0; t < words; ++t)
      if (sum[t] > 0) present.push_back(static_cast<std::int32_t>(t));
    const std::size_t listed = std::min(present.size(), static_cast<std::size_t>(std::max(0, top_words)));
    std::partial_sort(
        present.begin(), present.begin() + static_cast<std::ptrdiff_t>(listed), present.end(),
        [&](std::int32_t a, std::int32_t b) { return sum[a] != sum[b] ? sum[a] > sum[b] : a < b; });
    const double elsewhere = static_cast<double>(x.size()) - result.sizes[c];
    for (std::size_t i = 0; i < listed; ++i) {
      const std::int32_t t = present[i];
      const int in = contained[c][t];
      result.top_words[c].push_back({t, sum[t] / result.sizes[c], static_cast<double>(in) / result.sizes[c],
                                     elsewhere > 0 ? (tfidf.document_frequency[t] - in) / elsewhere : 0.0});
    }
  }
}

}  // namespace

RequestClusters cluster_requests(const std::vector<std::vector<std::int32_t>>& word_sets, std::size_t words,
                                 const ClusteringOptions& options) {
  const std::size_t n = word_sets.size();
  const int k = options.clusters;
  if (k < 1 || static_cast<std::size_t>(k) > n)
    throw InputError(
        fmt::format("{} clusters of {} requests: the number of clusters must be from 1 to the "
                    "number of requests",
                    k, n));
  if (options.restarts < 1 || options.max_iterations < 1)
    throw InputError(fmt::format("clustering: {} restarts and {} iterations; both must be at least 1",
                                 options.restarts, options.max_iterations));
  const TfIdf tfidf = tfidf_vectors(word_sets, words, options);
  const std::vector<SparseVector>& x = tfidf.requests;
  const KMeansRun best = best_kmeans(x, words, options);
  const std::vector<int> label = labels_by_size(best.cluster, k);

  RequestClusters result;
  result.cluster.resize(n);
  result.similarity.resize(n);
  result.sizes.assign(k, 0);
  for (std::size_t r = 0; r < n; ++r) {
    result.cluster[r] = label[best.cluster[r]];
    result.similarity[r] = dot(x[r], best.centroids[best.cluster[r]]);
    ++result.sizes[result.cluster[r]];
  }
  result.objective = best.objective / static_cast<double>(n);
  result.iterations = best.iterations;
  const ClusterSums sums = cluster_sums(x, result.cluster, k, words);
  add_pair_similarities(sums, result);
  add_top_words(tfidf, sums, options.top_words, result);
  return result;
}

RequestWords request_words(const RoutingTrace& trace, const std::string& trace_name) {
  if (trace.vocabulary().empty())
    throw InputError(trace_name +
                     ": the trace has no token identities (every token id is -1), so its requests cannot be "
                     "clustered by their words");
  RequestWords w;
  std::unordered_map<std::string, std::int32_t> ids;
  std::vector<std::int32_t> word_of_token;  // per vocabulary id; -1: no word (a word-start marker alone)
  for (const std::string& text : trace.vocabulary()) {
    std::string word = normalized_token_text(text);
    if (word.empty()) {
      word_of_token.push_back(-1);
      continue;
    }
    const auto [it, inserted] = ids.emplace(word, static_cast<std::int32_t>(w.words.size()));
    if (inserted) w.words.push_back(word);
    word_of_token.push_back(it->second);
  }
  w.sets.resize(trace.requests());
  for (std::size_t r = 0; r < trace.requests(); ++r)
    for (const std::int32_t id : trace.view(r).token_ids)
      if (id >= 0 && word_of_token[id] >= 0) w.sets[r].push_back(word_of_token[id]);
  return w;
}

}  // namespace semsim
