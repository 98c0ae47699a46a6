#include "workloads/routing_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <unordered_map>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"
#include "models/json_input.hpp"
#include "models/memory_budget.hpp"
#include "models/output_files.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/load_imbalance.hpp"

namespace semsim {

std::string normalized_token_text(std::string_view text) {
  while (true) {
    if (text.starts_with("\xC4\xA0"))
      text.remove_prefix(2);  // Ġ
    else if (text.starts_with("\xE2\x96\x81"))
      text.remove_prefix(3);  // ▁
    else if (text.starts_with(" "))
      text.remove_prefix(1);
    else
      break;
  }
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

namespace {

constexpr int kProfileFormatVersion = 1;

// The k experts with the largest counts (ties: lower id), padded with the most loaded experts of
// the layer when fewer than k have a count.
void top_k_of(std::span<const std::int32_t> counts, std::span<const ExpertId> popular,
              std::span<ExpertId> out) {
  const int k = static_cast<int>(out.size());
  int filled = 0;
  std::vector<ExpertId> order;
  for (int e = 0; e < static_cast<int>(counts.size()); ++e)
    if (counts[e] > 0) order.push_back(static_cast<ExpertId>(e));
  std::stable_sort(order.begin(), order.end(), [&](ExpertId a, ExpertId b) { return counts[a] > counts[b]; });
  for (; filled < k && filled < static_cast<int>(order.size()); ++filled) out[filled] = order[filled];
  for (ExpertId e : popular) {
    if (filled == k) break;
    if (std::find(out.begin(), out.begin() + filled, e) == out.begin() + filled) out[filled++] = e;
  }
}

int overlap(const ExpertId* a, const ExpertId* b, int k) {
  int common = 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) common += a[i] == b[j];
  return common;
}

// What a profile's dense per-layer tables take: a row start per token and the expert-pair
// co-activation counts.
double dense_table_bytes(long long moe_layers, long long experts, long long vocabulary) {
  return static_cast<double>(moe_layers) *
         (static_cast<double>(vocabulary + 1) * sizeof(std::int64_t) +
          static_cast<double>(experts) * static_cast<double>(experts) * sizeof(long long));
}

}  // namespace

std::vector<bool> held_out_requests(std::size_t requests, double fraction, std::uint64_t seed) {
  std::vector<bool> held_out(requests, false);
  if (requests < 2) return held_out;
  const auto count =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(fraction * requests)), 1, requests - 1);
  std::vector<std::size_t> order(requests);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(hash_keys(seed, 0x5b1));
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0; i < count; ++i) held_out[order[i]] = true;
  return held_out;
}

std::vector<bool> ProfileSource::profiled_requests() const {
  std::vector<bool> profiled(static_cast<std::size_t>(requests), true);
  if (split > 0) {
    const std::vector<bool> held_out = held_out_requests(profiled.size(), split, seed);
    for (std::size_t r = 0; r < profiled.size(); ++r) profiled[r] = !held_out[r];
  }
  return profiled;
}

ProfileOverlap profile_overlap(const ProfileSource& source, const std::string& trace_hash,
                               const std::vector<bool>& evaluated, std::size_t trace_requests) {
  ProfileOverlap overlap{source};
  overlap.same_trace =
      source.trace_hash == trace_hash && static_cast<long long>(trace_requests) == source.requests;
  const std::vector<bool> profiled = overlap.same_trace ? source.profiled_requests() : std::vector<bool>();
  for (std::size_t r = 0; r < trace_requests; ++r) {
    if (!evaluated.empty() && !evaluated[r]) continue;
    ++overlap.evaluated;
    if (overlap.same_trace && profiled[r]) ++overlap.profiled;
  }
  return overlap;
}

// ---- building --------------------------------------------------------------------------------------

RoutingProfile RoutingProfile::build(const RoutingTrace& trace, const std::vector<bool>& held_out,
                                     const ProgressCallback& progress) {
  const TraceHeader& h = trace.header();
  RoutingProfile p;
  p.moe_layers_ = h.moe_layers;
  p.experts_ = h.experts;
  p.top_k_ = h.top_k;
  p.texts_ = trace.vocabulary();
  const std::size_t vocabulary = p.texts_.size();
  const std::size_t experts = static_cast<std::size_t>(h.experts);
  const int k = h.top_k;
  p.occurrences_.assign(vocabulary, 0);

  std::vector<std::int64_t> profiled;  // global indexes of the profiled tokens
  std::vector<bool> profiled_requests(trace.requests(), false);
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!held_out.empty() && held_out[r]) continue;
    profiled_requests[r] = true;
    for (std::int64_t t = trace.first_token(r); t < trace.first_token(r + 1); ++t) {
      profiled.push_back(t);
      const std::int32_t id = trace.token_ids()[t];
      if (id >= 0) ++p.occurrences_[id], ++p.identified_occurrences_;
    }
  }

  check_memory_need(dense_table_bytes(h.moe_layers, h.experts, static_cast<long long>(vocabulary)) +
                        static_cast<double>(vocabulary) * static_cast<double>(experts) * sizeof(std::int32_t),
                    fmt::format("a routing profile of {} MoE layers, {} experts and a vocabulary of {}",
                                h.moe_layers, h.experts, vocabulary));
  std::vector<std::int32_t> counts(vocabulary * experts);
  ProgressCounter tabled(progress, "tables, layer", h.moe_layers);
  for (int layer = 0; layer < h.moe_layers; ++layer) {
    std::fill(counts.begin(), counts.end(), 0);
    std::vector<long long> load(experts, 0);
    std::vector<long long> coactivation(experts * experts, 0);
    for (std::int64_t t : profiled) {
      const ExpertId* set = trace.experts_of(t, layer);
      for (int i = 0; i < k; ++i) {
        ++load[set[i]];
        for (int j = 0; j < k; ++j)
          if (set[i] < set[j]) ++coactivation[set[i] * experts + set[j]];
      }
      const std::int32_t id = trace.token_ids()[t];
      if (id >= 0)
        for (int i = 0; i < k; ++i) ++counts[id * experts + set[i]];
    }
    std::vector<std::int64_t> begin{0};
    std::vector<ExpertCount> entries;
    for (std::size_t token = 0; token < vocabulary; ++token) {
      const std::size_t first = entries.size();
      for (std::size_t e = 0; e < experts; ++e)
        if (counts[token * experts + e] > 0)
          entries.push_back({static_cast<ExpertId>(e), counts[token * experts + e]});
      std::stable_sort(entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end(),
                       [](const ExpertCount& a, const ExpertCount& b) { return a.count > b.count; });
      begin.push_back(static_cast<std::int64_t>(entries.size()));
    }
    p.row_begin_.push_back(std::move(begin));
    p.entries_.push_back(std::move(entries));
    p.load_.push_back(std::move(load));
    p.coactivation_.push_back(std::move(coactivation));
    tabled.finished_one();
  }
  p.paths_ = std::make_shared<const RoutingTrace>(subset_trace(trace, profiled_requests));
  p.index_normalized_texts();
  return p;
}

void RoutingProfile::index_normalized_texts() {
  popular_.clear();
  for (const auto& load : load_) {
    std::vector<ExpertId> order(experts_);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](ExpertId a, ExpertId b) { return load[a] > load[b]; });
    popular_.push_back(std::move(order));
  }
  std::unordered_map<std::string, std::vector<std::int32_t>> by_text;
  for (std::size_t token = 0; token < texts_.size(); ++token)
    if (occurrences_[token] > 0 && !texts_[token].empty())
      by_text[normalized_token_text(texts_[token])].push_back(static_cast<std::int32_t>(token));
  same_text_.assign(texts_.size(), {});
  for (std::size_t token = 0; token < texts_.size(); ++token)
    if (occurrences_[token] == 0 && !texts_[token].empty())
      if (const auto it = by_text.find(normalized_token_text(texts_[token])); it != by_text.end())
        same_text_[token] = it->second;
}

// ---- queries ---------------------------------------------------------------------------------------

long long RoutingProfile::token_occurrences(std::int32_t token) const {
  return token >= 0 && static_cast<std::size_t>(token) < occurrences_.size() ? occurrences_[token] : 0;
}

double RoutingProfile::token_frequency(std::int32_t token) const {
  return identified_occurrences_ > 0
             ? static_cast<double>(token_occurrences(token)) / static_cast<double>(identified_occurrences_)
             : 0.0;
}

std::span<const ExpertCount> RoutingProfile::token_experts(int layer, std::int32_t token) const {
  if (token < 0 || static_cast<std::size_t>(token) >= texts_.size()) return {};
  const auto& begin = row_begin_[layer];
  return std::span(entries_[layer]).subspan(begin[token], begin[token + 1] - begin[token]);
}

double RoutingProfile::confidence(int layer, std::int32_t token, int expert) const {
  long long total = 0, hit = 0;
  for (const ExpertCount& c : token_experts(layer, token)) {
    total += c.count;
    if (c.expert == expert) hit = c.count;
  }
  return total > 0 ? static_cast<double>(hit) / static_cast<double>(total) : 0.0;
}

std::span<const long long> RoutingProfile::expert_load(int layer) const {
  return load_[layer];
}

long long RoutingProfile::coactivation(int layer, int a, int b) const {
  if (a > b) std::swap(a, b);
  return a == b ? 0 : coactivation_[layer][static_cast<std::size_t>(a) * experts_ + b];
}

RoutingProfile::Basis RoutingProfile::predict(int layer, std::int32_t token, std::span<ExpertId> out) const {
  std::vector<std::int32_t> counts(experts_, 0);
  Basis basis = Basis::kLayerPopularity;
  if (const auto row = token_experts(layer, token); !row.empty()) {
    for (const ExpertCount& c : row) counts[c.expert] = c.count;
    basis = Basis::kToken;
  } else if (token >= 0 && static_cast<std::size_t>(token) < same_text_.size() &&
             !same_text_[token].empty()) {
    for (std::int32_t other : same_text_[token])
      for (const ExpertCount& c : token_experts(layer, other)) counts[c.expert] += c.count;
    basis = Basis::kNormalizedText;
  }
  top_k_of(counts, popular_[layer], out);
  return basis;
}

std::span<const std::int32_t> RoutingProfile::same_text_tokens(std::int32_t token) const {
  if (token < 0 || static_cast<std::size_t>(token) >= same_text_.size()) return {};
  return same_text_[token];
}

std::vector<double> expert_load_skew(const RoutingProfile& profile) {
  std::vector<double> skew;
  for (int layer = 0; layer < profile.moe_layers(); ++layer)
    skew.push_back(load_imbalance(profile.expert_load(layer)));
  return skew;
}

// ---- held-out statistics ---------------------------------------------------------------------------

Quartiles quartiles(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto low = static_cast<std::size_t>(position);
    const std::size_t high = std::min(low + 1, values.size() - 1);
    return values[low] + (values[high] - values[low]) * (position - static_cast<double>(low));
  };
  return {at(0.25), at(0.5), at(0.75)};
}

namespace {

// Accumulates one predictor's held-out record at one layer: keys are predictor-specific integers.
class PredictorEvaluation {
 public:
  PredictorEvaluation(int experts, int k) : experts_(experts), k_(k) {}

  // `predicted` is the predictor's top-k for the key; `seen` whether the key was profiled.
  void add(std::int64_t key, bool seen, const ExpertId* predicted, const ExpertId* actual) {
    const double f1 = static_cast<double>(overlap(predicted, actual, k_)) / k_;
    if (!seen) {
      ++unseen_;
      unseen_f1_sum_ += f1;
      return;
    }
    f1_.push_back(f1);
    auto [it, inserted] = keys_.try_emplace(key);
    if (inserted) {
      it->second.predicted.assign(predicted, predicted + k_);
      it->second.counts.assign(experts_, 0);
    }
    for (int i = 0; i < k_; ++i) ++it->second.counts[actual[i]];
  }

  AffinityStatistics finish(int layer, const std::string& predictor) const {
    AffinityStatistics s;
    s.layer = layer;
    s.predictor = predictor;
    s.occurrences = static_cast<long long>(f1_.size()) + unseen_;
    s.unseen = unseen_;
    s.keys = static_cast<long long>(keys_.size());
    s.f1 = quartiles(f1_);
    s.f1_mean =
        f1_.empty() ? 0.0 : std::accumulate(f1_.begin(), f1_.end(), 0.0) / static_cast<double>(f1_.size());
    s.f1_exact = f1_.empty() ? 0.0
                             : static_cast<double>(std::count(f1_.begin(), f1_.end(), 1.0)) /
                                   static_cast<double>(f1_.size());
    s.f1_unseen_mean = unseen_ > 0 ? unseen_f1_sum_ / static_cast<double>(unseen_) : 0.0;
    std::vector<double> cumulative, max_other;
    for (const auto& [key, record] : keys_) {
      const double total = std::accumulate(record.counts.begin(), record.counts.end(), 0.0);
      double top = 0, other = 0;
      for (int e = 0; e < experts_; ++e) {
        const bool in_top =
            std::find(record.predicted.begin(), record.predicted.end(), e) != record.predicted.end();
        if (in_top)
          top += record.counts[e];
        else
          other = std::max(other, static_cast<double>(record.counts[e]));
      }
      cumulative.push_back(top / total);
      max_other.push_back(other / total);
    }
    s.cumulative_hotness = quartiles(cumulative);
    s.max_other_hotness = quartiles(max_other);
    return s;
  }

 private:
  struct KeyRecord {
    std::vector<ExpertId> predicted;
    std::vector<long long> counts;  // held-out activations per expert
  };
  int experts_, k_;
  std::vector<double> f1_;
  long long unseen_ = 0;
  double unseen_f1_sum_ = 0;
  std::unordered_map<std::int64_t, KeyRecord> keys_;
};

std::uint64_t set_key(const ExpertId* set, int k) {
  ExpertId sorted[64];
  std::copy(set, set + k, sorted);
  std::sort(sorted, sorted + k);
  std::uint64_t key = 0x5e7;
  for (int i = 0; i < k; ++i) key = splitmix64(key ^ static_cast<std::uint64_t>(sorted[i]));
  return key;
}

// The previous_layer predictor at `layer` (> 0): keyed by the token's expert set at layer - 1.
AffinityStatistics previous_layer_statistics(const RoutingTrace& trace, const RoutingProfile& profile,
                                             const std::vector<std::int64_t>& profiled,
                                             const std::vector<std::int64_t>& tested, int layer) {
  const TraceHeader& h = trace.header();
  const int k = h.top_k;
  const std::vector<std::int32_t> no_counts(h.experts, 0);
  std::vector<ExpertId> predicted(k);
  // Inter-layer affinity: count, on the profiled part, the experts that follow each expert set of
  // the previous layer.
  // One flat row of counts per distinct previous set (no allocation per key).
  std::unordered_map<std::uint64_t, std::int32_t> row_of;
  row_of.reserve(profiled.size());
  std::vector<std::int32_t> following;
  for (std::int64_t t : profiled) {
    const auto [it, inserted] = row_of.try_emplace(set_key(trace.experts_of(t, layer - 1), k),
                                                   static_cast<std::int32_t>(row_of.size()));
    if (inserted) following.resize(following.size() + h.experts, 0);
    const ExpertId* set = trace.experts_of(t, layer);
    for (int i = 0; i < k; ++i) ++following[static_cast<std::size_t>(it->second) * h.experts + set[i]];
  }
  // Keys never profiled, and rows with fewer than k experts, fall back to the layer's popularity.
  const auto load = profile.expert_load(layer);
  std::vector<ExpertId> popular(h.experts);
  std::iota(popular.begin(), popular.end(), 0);
  std::stable_sort(popular.begin(), popular.end(), [&](ExpertId a, ExpertId b) { return load[a] > load[b]; });
  PredictorEvaluation previous(h.experts, k);
  for (std::int64_t t : tested) {
    const std::uint64_t key = set_key(trace.experts_of(t, layer - 1), k);
    const auto it = row_of.find(key);
    top_k_of(it == row_of.end()
                 ? std::span<const std::int32_t>(no_counts)
                 : std::span(following).subspan(static_cast<std::size_t>(it->second) * h.experts,
                                                static_cast<std::size_t>(h.experts)),
             popular, predicted);
    previous.add(static_cast<std::int64_t>(key), it != row_of.end(), predicted.data(),
                 trace.experts_of(t, layer));
  }
  return previous.finish(layer, "previous_layer");
}

}  // namespace

std::vector<AffinityStatistics> held_out_statistics(const RoutingTrace& trace, const RoutingProfile& profile,
                                                    const std::vector<bool>& held_out, bool inter_layer,
                                                    const ProgressCallback& progress) {
  const TraceHeader& h = trace.header();
  const int k = h.top_k;
  if (k > 64) throw InputError("profiling supports top-k up to 64");
  std::vector<std::int64_t> tested, profiled;
  bool any_identity = false;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    for (std::int64_t t = trace.first_token(r); t < trace.first_token(r + 1); ++t) {
      (held_out[r] ? tested : profiled).push_back(t);
      any_identity = any_identity || trace.token_ids()[t] >= 0;
    }

  std::vector<AffinityStatistics> out;
  std::vector<ExpertId> predicted(k);
  ProgressCounter measured(progress, "held-out statistics, layer", h.moe_layers);
  for (int layer = 0; layer < h.moe_layers; ++layer) {
    if (any_identity) {
      PredictorEvaluation token(h.experts, k);
      for (std::int64_t t : tested) {
        const std::int32_t id = trace.token_ids()[t];
        if (id < 0) continue;
        profile.predict(layer, id, predicted);
        token.add(id, profile.token_occurrences(id) > 0, predicted.data(), trace.experts_of(t, layer));
      }
      out.push_back(token.finish(layer, "token"));
    }

    PredictorEvaluation popularity(h.experts, k);
    profile.predict(layer, -1, predicted);
    for (std::int64_t t : tested) popularity.add(0, true, predicted.data(), trace.experts_of(t, layer));
    out.push_back(popularity.finish(layer, "popularity"));

    if (layer > 0 && inter_layer)
      out.push_back(previous_layer_statistics(trace, profile, profiled, tested, layer));
    measured.finished_one();
  }
  return out;
}

void write_statistics_csv(const std::vector<AffinityStatistics>& statistics,
                          const std::vector<double>& load_skew, const std::string& path) {
  std::string text =
      "layer,predictor,occurrences,unseen,keys,f1_p25,f1_p50,f1_p75,f1_mean,f1_exact,f1_unseen_mean,"
      "cum_topk_hotness_p25,cum_topk_hotness_p50,cum_topk_hotness_p75,max_nontopk_hotness_p25,"
      "max_nontopk_hotness_p50,max_nontopk_hotness_p75,load_max_over_mean\n";
  for (const AffinityStatistics& s : statistics)
    text += fmt::format(
        "{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{:.6f}\n",
        s.layer, s.predictor, s.occurrences, s.unseen, s.keys, s.f1.p25, s.f1.p50, s.f1.p75, s.f1_mean,
        s.f1_exact, s.f1_unseen_mean, s.cumulative_hotness.p25, s.cumulative_hotness.p50,
        s.cumulative_hotness.p75, s.max_other_hotness.p25, s.max_other_hotness.p50, s.max_other_hotness.p75,
        load_skew[s.layer]);
  write_text_file(path, text);
}

// ---- files -----------------------------------------------------------------------------------------

void RoutingProfile::write(const std::string& dir) const {
  const std::filesystem::path folder(dir);
  nlohmann::ordered_json meta;
  meta["format"] = "semsim-routing-profile";
  meta["version"] = kProfileFormatVersion;
  meta["moe_layers"] = moe_layers_;
  meta["experts"] = experts_;
  meta["top_k"] = top_k_;
  meta["vocabulary"] = texts_.size();
  meta["identified_occurrences"] = identified_occurrences_;
  if (source_)
    meta["source"] = {{"trace", source_->trace},       {"trace_hash", source_->trace_hash},
                      {"split", source_->split},       {"seed", source_->seed},
                      {"requests", source_->requests}, {"profiled", source_->profiled}};
  write_text_file((folder / "profile.json").string(), meta.dump(2) + "\n");

  std::string tokens = "token\toccurrences\tfrequency\ttext\n";
  for (std::size_t t = 0; t < texts_.size(); ++t)
    tokens += fmt::format("{}\t{}\t{:.9g}\t{}\n", t, occurrences_[t],
                          token_frequency(static_cast<std::int32_t>(t)), escape_token_text(texts_[t]));
  write_text_file((folder / "tokens.tsv").string(), tokens);

  std::string table = "layer\ttoken\tactivations\texperts\n";
  for (int layer = 0; layer < moe_layers_; ++layer)
    for (std::size_t t = 0; t < texts_.size(); ++t) {
      const auto row = token_experts(layer, static_cast<std::int32_t>(t));
      if (row.empty()) continue;
      long long total = 0;
      for (const ExpertCount& c : row) total += c.count;
      table += fmt::format("{}\t{}\t{}\t", layer, t, total);
      for (std::size_t i = 0; i < row.size(); ++i)
        table += fmt::format("{}{}:{}", i ? "," : "", row[i].expert, row[i].count);
      table += '\n';
    }
  write_text_file((folder / "token_experts.tsv").string(), table);

  std::string load = "layer,expert,activations,share\n";
  std::string pairs = "layer,expert_a,expert_b,tokens\n";
  for (int layer = 0; layer < moe_layers_; ++layer) {
    const double total = std::accumulate(load_[layer].begin(), load_[layer].end(), 0.0);
    for (int e = 0; e < experts_; ++e)
      load += fmt::format("{},{},{},{:.9g}\n", layer, e, load_[layer][e],
                          total > 0 ? load_[layer][e] / total : 0.0);
    for (int a = 0; a < experts_; ++a)
      for (int b = a + 1; b < experts_; ++b)
        if (const long long n = coactivation(layer, a, b); n > 0)
          pairs += fmt::format("{},{},{},{}\n", layer, a, b, n);
  }
  write_text_file((folder / "expert_load.csv").string(), load);
  write_text_file((folder / "coactivation.csv").string(), pairs);
  if (paths_) write_trace(*paths_, (folder / "paths.semtrace").string());
}

namespace {

// Splits `line` on `separator` into exactly `count` fields or fails naming file and line.
std::vector<std::string_view> fields_of(std::string_view line, char separator, std::size_t count,
                                        const std::string& where) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const auto end = line.find(separator, start);
    fields.push_back(
        line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (fields.size() != count)
    throw InputError(fmt::format("{}: expected {} fields, got {}", where, count, fields.size()));
  return fields;
}

long long integer_field(std::string_view field, long long min, long long max, const std::string& where) {
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() || value < min || value > max)
    throw InputError(fmt::format("{}: expected an integer in [{}, {}], got '{}'", where, min, max, field));
  return value;
}

// Calls `row(fields, where)` for each data line of a table file (after its header line).
template <typename Row>
void for_each_row(const std::string& path, const std::string& header, char separator, Row&& row) {
  LineReader lines(path);
  std::string_view line;
  if (!lines.next(line) || line != header)
    throw InputError(fmt::format("{}:1: expected the header '{}'", path, header));
  const auto columns = static_cast<std::size_t>(std::count(header.begin(), header.end(), separator) + 1);
  while (lines.next(line)) {
    const std::string where = fmt::format("{}:{}", path, lines.line_number());
    row(fields_of(line, separator, columns, where), where);
  }
}

// profile.json: the counts, checked against the limits and the memory their tables need, and the
// source.
struct ProfileMeta {
  int moe_layers = 0, experts = 0, top_k = 0;
  long long vocabulary = 0, identified_occurrences = 0;
  std::optional<ProfileSource> source;
};

ProfileMeta read_profile_meta(const std::string& dir, const std::string& meta_path) {
  if (!path_exists(meta_path)) throw InputError(dir + ": not a routing profile folder (no profile.json)");
  const nlohmann::json meta = parse_json_file(read_text_file(meta_path), meta_path);
  if (!meta.is_object() || !meta.contains("format") || meta["format"] != "semsim-routing-profile" ||
      !meta.contains("version") || meta["version"] != kProfileFormatVersion)
    throw InputError(meta_path + ": not a version-1 semsim routing profile");
  // Whole numbers checked before any cast: 31.5 layers or 2^40 experts are errors, not 31 or garbage.
  auto count = [&](const char* key) {
    if (!meta.contains(key)) throw InputError(fmt::format("{}: missing key '{}'", meta_path, key), key);
    return json_integer(meta[key], meta_path, key);
  };
  const long long layers = count("moe_layers"), expert_count = count("experts"), top_k = count("top_k");
  ProfileMeta m;
  m.vocabulary = count("vocabulary");
  m.identified_occurrences = count("identified_occurrences");
  try {
    if (meta.contains("source")) {
      const nlohmann::json& s = meta["source"];
      m.source = ProfileSource{s.at("trace").get<std::string>(),  s.at("trace_hash").get<std::string>(),
                               s.at("split").get<double>(),       s.at("seed").get<std::uint64_t>(),
                               s.at("requests").get<long long>(), s.at("profiled").get<long long>()};
      if (!(m.source->split >= 0 && m.source->split < 1) || m.source->requests < 0)
        throw InputError(meta_path + ": source: split outside [0, 1) or a negative request count");
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(meta_path + ": source: " + e.what(), "source");
  }
  if (layers < 1 || layers > limits::kLayers || expert_count < 1 || expert_count > limits::kExperts ||
      top_k < 1 || top_k > expert_count || m.vocabulary < 0 || m.vocabulary > limits::kVocabulary)
    throw InputError(
        fmt::format("{}: impossible counts: {} MoE layers, {} experts, top-{}, vocabulary {} (at most {} "
                    "layers, {} experts, "
                    "a vocabulary of {})",
                    meta_path, layers, expert_count, top_k, m.vocabulary, limits::kLayers, limits::kExperts,
                    limits::kVocabulary));
  m.moe_layers = static_cast<int>(layers);
  m.experts = static_cast<int>(expert_count);
  m.top_k = static_cast<int>(top_k);
  check_memory_need(dense_table_bytes(m.moe_layers, m.experts, m.vocabulary),
                    fmt::format("routing profile '{}' ({} MoE layers, {} experts, a vocabulary of {})", dir,
                                m.moe_layers, m.experts, m.vocabulary));
  return m;
}

// tokens.tsv: each token's occurrences and text, tokens in increasing order.
void read_profile_tokens(const std::string& path, std::vector<long long>& occurrences,
                         std::vector<std::string>& texts) {
  const auto vocabulary = static_cast<long long>(texts.size());
  for_each_row(path, "token\toccurrences\tfrequency\ttext", '\t',
               [&, last = -1LL](const auto& f, const std::string& where) mutable {
                 const auto token = integer_field(f[0], 0, vocabulary - 1, where);
                 if (token <= last) throw InputError(where + ": token ids must be in increasing order");
                 last = token;
                 occurrences[token] = integer_field(f[1], 0, 1LL << 50, where);
                 texts[token] = unescape_token_text(f[3], where);
               });
}

// A token_experts.tsv list "expert:count,...", appended to `entries`; returns the counts' sum.
long long read_expert_counts(std::string_view list, int experts, const std::string& where,
                             std::vector<ExpertCount>& entries) {
  long long counted = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) throw InputError(where + ": expected expert:count items");
    entries.push_back(
        {static_cast<ExpertId>(integer_field(item.substr(0, colon), 0, experts - 1, where)),
         static_cast<std::int32_t>(integer_field(item.substr(colon + 1), 1, 1LL << 30, where))});
    counted += entries.back().count;
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  return counted;
}

// token_experts.tsv: per layer, each token's row of expert counts (tokens in increasing order), as
// `entries[layer]` and the rows' starts in it (`row_begin[layer]`, sized vocabulary + 1).
void read_profile_token_experts(const std::string& path, int experts,
                                std::vector<std::vector<std::int64_t>>& row_begin,
                                std::vector<std::vector<ExpertCount>>& entries) {
  const auto layers = static_cast<int>(row_begin.size());
  const auto vocabulary = static_cast<long long>(row_begin.front().size()) - 1;
  std::vector<long long> last_token(layers, -1);
  for_each_row(path, "layer\ttoken\tactivations\texperts", '\t',
               [&](const auto& f, const std::string& where) {
                 const auto layer = integer_field(f[0], 0, layers - 1, where);
                 const auto token = integer_field(f[1], 0, vocabulary - 1, where);
                 if (token <= last_token[layer])
                   throw InputError(where + ": tokens must be in increasing order per layer");
                 for (long long t = last_token[layer] + 1; t <= token; ++t)
                   row_begin[layer][t] = static_cast<std::int64_t>(entries[layer].size());
                 last_token[layer] = token;
                 const auto activations = integer_field(f[2], 1, 1LL << 50, where);
                 const long long counted = read_expert_counts(f[3], experts, where, entries[layer]);
                 if (counted != activations)
                   throw InputError(fmt::format("{}: activations {}, but the expert counts add up to {}",
                                                where, activations, counted));
               });
  for (int layer = 0; layer < layers; ++layer)
    for (long long t = last_token[layer] + 1; t <= vocabulary; ++t)
      row_begin[layer][t] = static_cast<std::int64_t>(entries[layer].size());
}

// expert_load.csv: each (layer, expert)'s activations into load[layer][expert].
void read_profile_expert_load(const std::string& path, int experts,
                              std::vector<std::vector<long long>>& load) {
  const auto layers = static_cast<int>(load.size());
  for_each_row(path, "layer,expert,activations,share", ',', [&](const auto& f, const std::string& where) {
    load[integer_field(f[0], 0, layers - 1, where)][integer_field(f[1], 0, experts - 1, where)] =
        integer_field(f[2], 0, 1LL << 50, where);
  });
}

// coactivation.csv: each (layer, a < b)'s tokens into coactivation[layer][a * experts + b].
void read_profile_coactivation(const std::string& path, int experts,
                               std::vector<std::vector<long long>>& coactivation) {
  const auto layers = static_cast<int>(coactivation.size());
  const auto n = static_cast<std::size_t>(experts);
  for_each_row(path, "layer,expert_a,expert_b,tokens", ',', [&](const auto& f, const std::string& where) {
    const auto a = integer_field(f[1], 0, experts - 1, where);
    const auto b = integer_field(f[2], a + 1, experts - 1, where);
    coactivation[integer_field(f[0], 0, layers - 1, where)][a * n + b] =
        integer_field(f[3], 1, 1LL << 50, where);
  });
}

}  // namespace

RoutingProfile RoutingProfile::load(const std::string& dir) {
  const std::filesystem::path folder(dir);
  ProfileMeta meta = read_profile_meta(dir, (folder / "profile.json").string());
  RoutingProfile p;
  p.identified_occurrences_ = meta.identified_occurrences;
  p.source_ = std::move(meta.source);
  p.moe_layers_ = meta.moe_layers;
  p.experts_ = meta.experts;
  p.top_k_ = meta.top_k;
  p.texts_.resize(static_cast<std::size_t>(meta.vocabulary));
  p.occurrences_.assign(p.texts_.size(), 0);
  read_profile_tokens((folder / "tokens.tsv").string(), p.occurrences_, p.texts_);
  p.row_begin_.assign(p.moe_layers_, std::vector<std::int64_t>(p.texts_.size() + 1, 0));
  p.entries_.assign(p.moe_layers_, {});
  read_profile_token_experts((folder / "token_experts.tsv").string(), p.experts_, p.row_begin_, p.entries_);
  p.load_.assign(p.moe_layers_, std::vector<long long>(p.experts_, 0));
  read_profile_expert_load((folder / "expert_load.csv").string(), p.experts_, p.load_);
  const auto experts = static_cast<std::size_t>(p.experts_);
  p.coactivation_.assign(p.moe_layers_, std::vector<long long>(experts * experts, 0));
  read_profile_coactivation((folder / "coactivation.csv").string(), p.experts_, p.coactivation_);
  if (const auto paths = folder / "paths.semtrace"; path_exists(paths)) {
    auto trace = load_trace(paths.string());
    const TraceHeader& h = trace.header();
    if (h.moe_layers != p.moe_layers_ || h.experts != p.experts_ || h.top_k != p.top_k_ ||
        trace.vocabulary().size() != p.texts_.size())
      throw InputError(paths.string() +
                       ": its layers, experts, top-k or vocabulary differ from profile.json");
    p.paths_ = std::make_shared<const RoutingTrace>(std::move(trace));
  }
  p.index_normalized_texts();
  return p;
}

}  // namespace semsim
