#pragma once
// Sem-MoE's offline profiling (design.md, "Sem-MoE, precisely"; definitions in
// workloads/PROFILE_FORMAT.md): per MoE layer, the token -> expert count table T, confidence
// C_p = T / row sum, token frequencies a, expert co-activation counts and per-expert load, built
// from the profiling part of a trace; and the Table-1 statistics of static predictors measured on
// the held-out part. The tables are what placement and scheduling policies read (RoutingProfile).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/progress.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

// The fallback key of a token text: without the tokenizer's word-start marker (byte-level BPE 'Ġ',
// SentencePiece '▁') or leading spaces, ASCII letters lower-cased.
std::string normalized_token_text(std::string_view text);

// Exactly round(fraction * requests) requests (at least 1, and at least 1 left to profile), chosen
// by a seeded shuffle: true = held out.
std::vector<bool> held_out_requests(std::size_t requests, double fraction, std::uint64_t seed);

// Which requests a profile was made from: a trace (as named and by content, trace_content_hash) and
// the split and seed that held the others out (held_out_requests). Profiles and the placements made
// from them keep it, so that evaluating or replaying a trace can tell which requests were profiled.
struct ProfileSource {
  std::string trace;       // the trace file as the profile command was given it
  std::string trace_hash;  // trace_content_hash
  double split = 0;        // held-out fraction (0: every request profiled)
  std::uint64_t seed = 0;
  long long requests = 0;  // the trace's
  long long profiled = 0;  // of which profiled

  // profiled[r] for the trace's requests (the held_out_requests complement).
  std::vector<bool> profiled_requests() const;
  friend bool operator==(const ProfileSource&, const ProfileSource&) = default;
};

// How many of the evaluated requests of `trace` (evaluated empty: all) a profile made from `source`
// saw. Known only when `trace` is the profiled one (same content hash).
struct ProfileOverlap {
  ProfileSource source;
  bool same_trace = false;
  long long evaluated = 0;
  long long profiled = 0;  // of the evaluated requests (0 unless same_trace)
};
ProfileOverlap profile_overlap(const ProfileSource& source, const std::string& trace_hash,
                               const std::vector<bool>& evaluated, std::size_t trace_requests);

struct ExpertCount {
  ExpertId expert = 0;
  std::int32_t count = 0;
};

class RoutingProfile {
 public:
  // Tables from the requests of `trace` not held out (held_out empty: every request); `progress` is
  // told each MoE layer tabled.
  static RoutingProfile build(const RoutingTrace& trace, const std::vector<bool>& held_out,
                              const ProgressCallback& progress = {});
  static RoutingProfile load(const std::string& dir);  // what write() wrote; InputError on bad files
  void write(const std::string& dir) const;

  int moe_layers() const { return moe_layers_; }
  int experts() const { return experts_; }
  int top_k() const { return top_k_; }
  std::size_t vocabulary() const { return texts_.size(); }
  const std::optional<ProfileSource>& source() const { return source_; }  // none in older folders
  void set_source(ProfileSource source) { source_ = std::move(source); }
  const std::string& token_text(std::int32_t token) const { return texts_[token]; }
  const std::vector<std::string>& token_texts() const { return texts_; }  // [token]
  long long token_occurrences(std::int32_t token) const;                  // in the profiling part
  double token_frequency(std::int32_t token) const;  // a_j = occurrences / all occurrences with an id
  // T[layer][token]: its experts with counts, by count (descending) then expert id.
  std::span<const ExpertCount> token_experts(int layer, std::int32_t token) const;
  double confidence(int layer, std::int32_t token, int expert) const;  // C_p; 0 for unseen tokens
  std::span<const long long> expert_load(int layer) const;             // activations per expert
  long long coactivation(int layer, int a, int b) const;               // tokens routed to both a and b
  // The profiled requests' routing itself (paths.semtrace), for tables keyed by a token's path
  // across layers (Sem-MoE's inter-layer affinity); null for a profile folder written without it.
  const RoutingTrace* profiled_paths() const { return paths_.get(); }

  // The static top-k prediction for a token (writes top_k ids, by confidence): its T row's top-k
  // when profiled; otherwise the fallback: the summed rows of the profiled tokens with the same
  // normalized text (workloads/PROFILE_FORMAT.md), else the layer's k most loaded experts.
  enum class Basis { kToken, kNormalizedText, kLayerPopularity };
  // For an unprofiled token: the profiled tokens sharing its normalized text (empty otherwise).
  std::span<const std::int32_t> same_text_tokens(std::int32_t token) const;
  Basis predict(int layer, std::int32_t token, std::span<ExpertId> out) const;

 private:
  void index_normalized_texts();

  int moe_layers_ = 0, experts_ = 0, top_k_ = 0;
  std::vector<std::string> texts_;
  std::vector<long long> occurrences_;
  long long identified_occurrences_ = 0;
  std::vector<std::vector<std::int64_t>> row_begin_;  // [layer][token] -> entries_[layer] range (vocab + 1)
  std::vector<std::vector<ExpertCount>> entries_;     // [layer]
  std::vector<std::vector<long long>> load_;          // [layer][expert]
  std::vector<std::vector<long long>> coactivation_;  // [layer][a * experts + b], a < b
  std::vector<std::vector<ExpertId>> popular_;        // [layer] -> experts by load, descending
  std::vector<std::vector<std::int32_t>> same_text_;  // [token] -> profiled tokens with its normalized text
  std::shared_ptr<const RoutingTrace> paths_;
  std::optional<ProfileSource> source_;
};

// Quartiles with linear interpolation between order statistics (numpy's default).
struct Quartiles {
  double p25 = 0, p50 = 0, p75 = 0;
};
Quartiles quartiles(std::vector<double> values);

// Table-1 statistics of one static predictor at one MoE layer, on the held-out requests.
struct AffinityStatistics {
  int layer = 0;
  std::string predictor;      // token | popularity | previous_layer
  long long occurrences = 0;  // held-out routed tokens the predictor has a key for
  long long unseen = 0;       // held-out tokens whose key was not profiled (token: fallback used)
  long long keys = 0;         // distinct keys seen in both parts (hotness quartiles are over these)
  Quartiles f1;               // per occurrence: |predicted ∩ actual| / k
  double f1_mean = 0;
  double f1_exact = 0;           // share of occurrences predicted exactly (F1 = 1)
  double f1_unseen_mean = 0;     // token predictor: mean F1 of unseen tokens with the fallback
  Quartiles cumulative_hotness;  // per key: share of its held-out activations on its predicted top-k
  Quartiles max_other_hotness;   // per key: largest share of one expert outside its predicted top-k
};

// Held-out statistics of three predictors per layer: `token` (the profile's prediction; needs
// token ids), `popularity` (the layer's k most loaded experts for every token: no affinity) and
// `previous_layer` (keyed by the token's expert set at the previous MoE layer: inter-layer affinity).
// `inter_layer` false skips the previous_layer predictor (the costliest). `progress` is told each
// MoE layer measured.
std::vector<AffinityStatistics> held_out_statistics(const RoutingTrace& trace, const RoutingProfile& profile,
                                                    const std::vector<bool>& held_out,
                                                    bool inter_layer = true,
                                                    const ProgressCallback& progress = {});

// Per layer: max over experts of profiled load / mean (workloads/load_imbalance.hpp).
std::vector<double> expert_load_skew(const RoutingProfile& profile);

void write_statistics_csv(const std::vector<AffinityStatistics>& statistics,
                          const std::vector<double>& load_skew, const std::string& path);

}  // namespace semsim
