#pragma once
// Topic clusters of requests by the words they contain (docs: workloads/REQUEST_CLUSTERING.md):
// spherical k-means over TF-IDF vectors of each request's set of words (token texts, normalized),
// seeded by k-means++ from a seed, best of several seedings. A pure function of its inputs: the same
// word sets, options and seed give the same clusters on every platform.
#include <cstdint>
#include <vector>

#include "workloads/routing_trace.hpp"

namespace semsim {

struct ClusteringOptions {
  int clusters = 4;
  std::uint64_t seed = 1;
  int restarts = 10;  // independent k-means++ seedings; the clustering of the highest objective is kept
  int max_iterations = 100;
  int top_words = 10;  // words listed per cluster
  // Words weighed: those in at least this many requests (one request's words make no two requests
  // alike) and in at most this share of them (words nearly every request has say nothing of a topic).
  int min_requests_per_word = 2;
  double max_request_share_per_word = 0.5;
};

// A word that characterizes a cluster: large weight in the cluster's mean TF-IDF vector.
struct ClusterWord {
  std::int32_t word = 0;
  double weight = 0;            // mean over the cluster's requests of the word's unit-vector component
  double share_in_cluster = 0;  // fraction of the cluster's requests that contain the word
  double share_elsewhere = 0;   // fraction of the other requests that contain it (0 with one cluster)
};

struct RequestClusters {
  std::vector<int> cluster;        // per request: 0 .. clusters-1, numbered by decreasing size
  std::vector<double> similarity;  // per request: cosine similarity to its cluster's centroid
  std::vector<int> sizes;          // requests per cluster (none empty)
  // Mean cosine similarity of two requests: per cluster over its pairs, and over all pairs within
  // one cluster and all pairs across two. NaN where there is no such pair (one-request clusters,
  // one cluster).
  std::vector<double> within_cluster_similarity;
  double within_similarity = 0;
  double between_similarity = 0;
  double objective = 0;                             // mean similarity of a request to its cluster's centroid
  int iterations = 0;                               // of the kept seeding
  std::vector<std::vector<ClusterWord>> top_words;  // per cluster, by decreasing weight
};

// Clusters requests by `word_sets[r]`, the words of request r as ids in [0, words) (any order;
// repeats count once). InputError when clusters < 1 or clusters > requests, restarts or iterations
// < 1, or a word id out of range.
RequestClusters cluster_requests(const std::vector<std::vector<std::int32_t>>& word_sets, std::size_t words,
                                 const ClusteringOptions& options);

// The words of each request of a trace: its routed tokens' texts, normalized as the profile's
// fallback key (normalized_token_text: no word-start marker, ASCII lower-cased), whitespace-only
// tokens and tokens of unknown identity left out; ids in order of first appearance.
struct RequestWords {
  std::vector<std::vector<std::int32_t>> sets;  // per request, ids into `words`
  std::vector<std::string> words;               // id -> normalized text, in order of first appearance
};
// InputError naming `trace_name` when the trace has no token identities.
RequestWords request_words(const RoutingTrace& trace, const std::string& trace_name);

}  // namespace semsim
