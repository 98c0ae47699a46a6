#include "workloads/routing_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <span>

#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "models/memory_budget.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

constexpr int kSpectrumSize = 8;
constexpr int kMinRequestTokens = 32;  // requests shorter than this say little about concentration

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) return 0.0;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n,
               my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

// Per layer, the eigenvalues of C[a][b] / sqrt(load_a load_b) (co-activation normalized by expert
// load) by magnitude, as shares of their total; averaged over layers, the largest kSpectrumSize.
std::vector<double> coactivation_spectrum(const RoutingProfile& profile) {
  const int experts = profile.experts();
  std::vector<double> mean(kSpectrumSize, 0.0);
  for (int layer = 0; layer < profile.moe_layers(); ++layer) {
    const auto load = profile.expert_load(layer);
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(experts, experts);
    for (int a = 0; a < experts; ++a)
      for (int b = a + 1; b < experts; ++b)
        if (load[a] > 0 && load[b] > 0)
          m(a, b) = m(b, a) = static_cast<double>(profile.coactivation(layer, a, b)) /
                              std::sqrt(static_cast<double>(load[a]) * static_cast<double>(load[b]));
    const Eigen::VectorXd values =
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(m, Eigen::EigenvaluesOnly).eigenvalues();
    std::vector<double> magnitudes;
    for (Eigen::Index i = 0; i < values.size(); ++i) magnitudes.push_back(std::abs(values[i]));
    std::sort(magnitudes.rbegin(), magnitudes.rend());
    const double total = std::accumulate(magnitudes.begin(), magnitudes.end(), 0.0);
    for (int i = 0; i < kSpectrumSize && i < experts; ++i)
      mean[i] += total > 0 ? magnitudes[i] / total / profile.moe_layers() : 0.0;
  }
  return mean;
}

// The median of values on the grid 0, 1/k, ..., 1, interpolated within the median's bin (the
// grouped-data median): continuous in the distribution, unlike the plain median of such values.
double grouped_median(const std::vector<double>& values, int k) {
  if (values.empty()) return 0.0;
  std::vector<long long> bins(k + 1, 0);
  for (double v : values) ++bins[static_cast<std::size_t>(std::lround(v * k))];
  const double half = static_cast<double>(values.size()) / 2;
  long long below = 0;
  for (int bin = 0; bin <= k; ++bin) {
    if (below + bins[bin] >= half && bins[bin] > 0)
      return (bin - 0.5 + (half - static_cast<double>(below)) / static_cast<double>(bins[bin])) / k;
    below += bins[bin];
  }
  return 1.0;
}

}  // namespace

RoutingStatistics measure_routing(const RoutingTrace& trace, const std::vector<bool>& held_out) {
  const TraceHeader& h = trace.header();
  const RoutingProfile profile = RoutingProfile::build(trace, held_out);
  RoutingStatistics s;
  s.load_skew = expert_load_skew(profile);
  s.coactivation_spectrum = coactivation_spectrum(profile);
  for (const AffinityStatistics& a : held_out_statistics(trace, profile, held_out, false)) {
    if (a.predictor != "token") continue;
    s.has_token_ids = true;
    s.f1_p50.push_back(a.f1.p50);
    s.f1_mean.push_back(a.f1_mean);
    s.exact_share.push_back(a.f1_exact);
    s.cumulative_hotness.push_back(a.cumulative_hotness.p50);
    s.max_other_hotness.push_back(a.max_other_hotness.p50);
    s.unseen_share =
        a.occurrences > 0 ? static_cast<double>(a.unseen) / static_cast<double>(a.occurrences) : 0.0;
  }

  // Per-occurrence F1 of the profiled held-out tokens, layer by layer (same occurrences in each).
  std::vector<std::vector<double>> f1(h.moe_layers);
  std::vector<ExpertId> predicted(h.top_k);
  double concentration = 0;
  long long concentration_terms = 0;
  std::vector<long long> request_load(h.experts);
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!held_out[r]) continue;
    const std::int64_t first = trace.first_token(r), end = trace.first_token(r + 1);
    for (int layer = 0; layer < h.moe_layers; ++layer) {
      std::fill(request_load.begin(), request_load.end(), 0);
      for (std::int64_t t = first; t < end; ++t) {
        const ExpertId* actual = trace.experts_of(t, layer);
        for (int j = 0; j < h.top_k; ++j) ++request_load[actual[j]];
        const std::int32_t id = trace.token_ids()[t];
        if (id < 0 || profile.token_occurrences(id) == 0) continue;
        profile.predict(layer, id, predicted);
        int common = 0;
        for (int i = 0; i < h.top_k; ++i) common += std::count(actual, actual + h.top_k, predicted[i]) > 0;
        f1[layer].push_back(static_cast<double>(common) / h.top_k);
      }
      if (end - first < kMinRequestTokens) continue;
      std::sort(request_load.rbegin(), request_load.rend());
      const long long total = std::accumulate(request_load.begin(), request_load.end(), 0LL);
      concentration += static_cast<double>(std::accumulate(
                           request_load.begin(), request_load.begin() + std::max(1, h.experts / 4), 0LL)) /
                       static_cast<double>(total);
      ++concentration_terms;
    }
  }
  for (const auto& values : f1) s.f1_grouped_median.push_back(grouped_median(values, h.top_k));
  s.request_concentration =
      concentration_terms > 0 ? concentration / static_cast<double>(concentration_terms) : 0.0;
  double correlation = 0;
  for (int layer = 0; layer + 1 < h.moe_layers; ++layer) correlation += pearson(f1[layer], f1[layer + 1]);
  s.layer_hit_correlation = h.moe_layers > 1 ? correlation / (h.moe_layers - 1) : 0.0;
  return s;
}

RoutingTrace synthesize_trace(std::span<const TraceRequest> requests, std::span<const int> topics,
                              const SyntheticRouting& routing, TraceHeader header, int first_id) {
  header.moe_layers = routing.moe_layers();
  header.experts = routing.experts();
  header.top_k = routing.top_k();
  header.gate_weights = false;
  // What the routing of every token needs at once (its token, its experts here and in the trace), so
  // that too many requests are refused before the first allocation rather than by bad_alloc.
  const int layers = routing.moe_layers(), k = routing.top_k();
  double routed = 0;
  for (const TraceRequest& q : requests) routed += q.routed_tokens();
  check_memory_need(routed * static_cast<double>(sizeof(TokenRef) + 2 * sizeof(std::int32_t) +
                                                 (2.0 * layers + 1) * k * sizeof(ExpertId)),
                    fmt::format("a trace of {} requests ({:.4g} routed tokens x {} MoE layers x top-{})",
                                requests.size(), routed, layers, k));
  TraceBuilder builder(std::move(header));
  for (std::int32_t id = 0; id < routing.vocabulary(); ++id)
    builder.declare_token(id, "", "synthetic vocabulary");
  std::vector<TokenRef> tokens;
  std::vector<std::size_t> first_token{0};
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const TraceRequest& q = requests[r];
    const int first_position = q.prefill_routed ? 0 : q.input_tokens;
    for (int i = 0; i < q.routed_tokens(); ++i) {
      TokenRef token{first_id + static_cast<int>(r), topics[r], first_position + i};
      token.id = routing.token_id(token);
      tokens.push_back(token);
    }
    first_token.push_back(tokens.size());
  }
  std::vector<ExpertId> by_layer(tokens.size() * k), experts(tokens.size() * layers * k);
  for (int layer = 0; layer < layers; ++layer) {
    routing.route(layer, tokens, by_layer);
    for (std::size_t t = 0; t < tokens.size(); ++t)
      std::copy_n(&by_layer[t * k], k, &experts[(t * layers + layer) * k]);
  }
  std::vector<std::int32_t> ids(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) ids[t] = tokens[t].id;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const std::size_t first = first_token[r], count = first_token[r + 1] - first;
    builder.add({requests[r],
                 std::span(ids).subspan(first, count),
                 std::span(experts).subspan(first * layers * k, count * layers * k),
                 {}},
                "synthetic request " + std::to_string(r));
  }
  return std::move(builder).build();
}

RoutingTrace synthesize_trace(const RoutingTrace& shape, const SyntheticRouting& routing) {
  std::vector<TraceRequest> requests;
  std::vector<int> topics;
  for (std::size_t r = 0; r < shape.requests(); ++r) {
    requests.push_back(shape.request(r));
    topics.push_back(static_cast<int>(r) % routing.topics());
  }
  return synthesize_trace(requests, topics, routing, {"synthetic", "synthetic routing"});
}

namespace {

// Token-frequency statistics of a token stream split into profiled and held-out requests: the share
// of held-out occurrences whose token is never profiled, and the share of the profiled occurrences
// taken by the kTopTokens most frequent tokens.
constexpr int kTopTokens = 10;
struct TokenStreamStatistics {
  double unseen_share = 0, top_share = 0;
};

TokenStreamStatistics token_stream_statistics(std::span<const std::int32_t> ids, const RoutingTrace& shape,
                                              const std::vector<bool>& held_out, std::size_t vocabulary) {
  std::vector<long long> profiled(vocabulary, 0);
  long long tested = 0, unseen = 0, total = 0;
  for (std::size_t r = 0; r < shape.requests(); ++r)
    for (std::int64_t t = shape.first_token(r); t < shape.first_token(r + 1); ++t)
      if (ids[t] >= 0 && !held_out[r]) ++profiled[ids[t]], ++total;
  for (std::size_t r = 0; r < shape.requests(); ++r)
    for (std::int64_t t = shape.first_token(r); t < shape.first_token(r + 1); ++t)
      if (ids[t] >= 0 && held_out[r]) ++tested, unseen += profiled[ids[t]] == 0;
  std::partial_sort(profiled.begin(), profiled.begin() + std::min<std::size_t>(kTopTokens, vocabulary),
                    profiled.end(), std::greater<>());
  TokenStreamStatistics s;
  s.unseen_share = tested > 0 ? static_cast<double>(unseen) / static_cast<double>(tested) : 0.0;
  s.top_share =
      total > 0
          ? static_cast<double>(std::accumulate(
                profiled.begin(), profiled.begin() + std::min<std::size_t>(kTopTokens, vocabulary), 0LL)) /
                static_cast<double>(total)
          : 0.0;
  return s;
}

// The synthetic token ids `params` draws for the requests of `shape` (one layer is enough: only the
// vocabulary model matters).
TokenStreamStatistics synthetic_token_statistics(const RoutingTrace& shape, const std::vector<bool>& held_out,
                                                 const SyntheticRoutingParams& params, std::uint64_t seed) {
  const SyntheticTokens routing(params.vocabulary, params.topics, params.token_skew, seed);
  std::vector<std::int32_t> ids;
  for (std::size_t r = 0; r < shape.requests(); ++r) {
    const TraceRequest& q = shape.request(r);
    const int first_position = q.prefill_routed ? 0 : q.input_tokens;
    for (int i = 0; i < q.routed_tokens(); ++i)
      ids.push_back(routing.token_id(
          {static_cast<int>(r), static_cast<int>(r) % routing.topics(), first_position + i}));
  }
  return token_stream_statistics(ids, shape, held_out, static_cast<std::size_t>(routing.vocabulary()));
}

// Token model: for each Zipf exponent on a grid, the vocabulary size (bisection on its logarithm: a
// larger vocabulary leaves more held-out tokens unseen) that matches the trace's unseen share; then
// the exponent whose most frequent tokens take the trace's share.
void fit_token_model(const RoutingTrace& trace, const std::vector<bool>& held_out,
                     const TokenStreamStatistics& real, std::uint64_t seed, SyntheticRoutingParams& params) {
  double best_gap = INFINITY;
  SyntheticRoutingParams candidate = params;
  for (double skew = 0.6; skew <= 1.301; skew += 0.1) {
    candidate.token_skew = skew;
    double low = std::log(std::max(16, params.topics)), high = std::log(1 << 20);
    for (int i = 0; i < 12; ++i) {
      candidate.vocabulary = static_cast<int>(std::exp((low + high) / 2));
      (synthetic_token_statistics(trace, held_out, candidate, seed).unseen_share < real.unseen_share ? low
                                                                                                     : high) =
          (low + high) / 2;
    }
    candidate.vocabulary = static_cast<int>(std::exp((low + high) / 2));
    const double gap =
        std::abs(synthetic_token_statistics(trace, held_out, candidate, seed).top_share - real.top_share);
    if (gap < best_gap) best_gap = gap, params.token_skew = skew, params.vocabulary = candidate.vocabulary;
  }
}

// The fit's schedule of evaluations, counted ahead for the progress report.
constexpr int kLayerIterations = 9, kRefitIterations = 5, kCorrelationIterations = 8;
constexpr std::array<std::pair<int, double>, 8> kTopicCandidates{
    {{4, 2.0}, {4, 8.0}, {4, 32.0}, {16, 2.0}, {16, 8.0}, {16, 32.0}, {64, 8.0}, {64, 32.0}}};

// The per-layer parameters of the evaluations so far that came closest to both targets, per layer.
struct BestLayers {
  std::vector<double> error;
  SyntheticRoutingParams params;
};

// The fit's steps, each evaluating candidate generators against the trace's statistics (`real`) and
// leaving the best parameters in the fit.
class RoutingFitter {
 public:
  RoutingFitter(const RoutingTrace& trace, const std::vector<bool>& held_out, std::uint64_t seed,
                const ProgressCallback& progress)
      : trace_(trace),
        held_out_(held_out),
        seed_(seed),
        progress_(progress),
        layers_(trace.header().moe_layers),
        real_(fit_.real = measure_routing(trace, held_out)),
        real_tokens_(token_stream_statistics(trace.token_ids(), trace, held_out, trace.vocabulary().size())),
        planned_(fit_layers_evaluations(kLayerIterations) + 1 +
                 static_cast<long long>(kTopicCandidates.size()) + fit_layers_evaluations(kRefitIterations) +
                 (real_.has_token_ids ? kCorrelationIterations : 0) + 1) {
    if (progress_) progress_("evaluation", 0, planned_);
  }

  // The starting point: one topic, the same skew and overlap at every layer, the token affinity
  // that the trace's share of exact predictions leaves; with token ids, the token model.
  void start() {
    SyntheticRoutingParams& p = fit_.params;
    p.load_balance = 1.0;  // trained routers balance their load; skew then comes from expert_skew
    p.expert_skew.assign(layers_, 0.3);
    p.variant_overlap.assign(layers_, 0.5);
    p.token_affinity.assign(layers_, 0.0);
    if (real_.has_token_ids) {
      for (int layer = 0; layer < layers_; ++layer)
        p.token_affinity[layer] = std::max(0.0, real_.exact_share[layer] - std::pow(0.5, top_k()));
    }
    p.topics = 1;
    p.topic_boost = 0;
    if (real_.has_token_ids) fit_token_model(trace_, held_out_, real_tokens_, seed_, p);
  }

  // Per layer: popularity skew to the load skew, then variant overlap to the (grouped) median
  // static-predictor F1 (token affinity following the exact-match share), then the skew again in a
  // narrower bracket (the overlap moves load a little). Each is a bisection, every statistic
  // increasing in its parameter; layers are independent (each has its own random stream) and each
  // keeps the evaluated parameters that came closest to both targets.
  void fit_layers(double skew_radius, double overlap_radius, int iterations) {
    SyntheticRoutingParams& p = fit_.params;
    BestLayers best{std::vector<double>(layers_, INFINITY), p};
    bisect(p.expert_skew, skew_radius, 4.0, &RoutingStatistics::load_skew, iterations, best);
    if (real_.has_token_ids)
      bisect(p.variant_overlap, overlap_radius, 1.0, &RoutingStatistics::f1_grouped_median, iterations, best);
    bisect(p.expert_skew, skew_radius / 8, 4.0, &RoutingStatistics::load_skew, iterations, best);
    evaluate_and_track(best);
    p.expert_skew = best.params.expert_skew;
    p.variant_overlap = best.params.variant_overlap;
    p.token_affinity = best.params.token_affinity;
  }

  // Topic structure: with the per-layer parameters in place, the (topics, boost) whose requests
  // concentrate their activations, and whose co-activation spectrum is, closest to the trace's
  // without moving load skew and F1 off their targets (each candidate with its own token model);
  // the layers fitted again for it.
  void fit_topics() {
    SyntheticRoutingParams& p = fit_.params;
    double best_gap = topic_gap(evaluate(p));
    SyntheticRoutingParams best = p;
    for (const auto& [topics, boost] : kTopicCandidates) {
      SyntheticRoutingParams candidate = p;
      candidate.topics = topics;
      candidate.topic_boost = boost;
      candidate.vocabulary = std::max(candidate.vocabulary, topics);
      if (real_.has_token_ids) fit_token_model(trace_, held_out_, real_tokens_, seed_, candidate);
      if (const double gap = topic_gap(evaluate(candidate)); gap < best_gap) best_gap = gap, best = candidate;
    }
    if (best.topics != p.topics) {
      p = best;
      fit_layers(0.5, 0.2, kRefitIterations);
    } else {
      planned_ -= fit_layers_evaluations(kRefitIterations);
    }
  }

  // Inter-layer correlation: how often a layer reuses the occurrence's shared draw.
  void fit_layer_correlation() {
    if (!real_.has_token_ids) return;
    SyntheticRoutingParams& p = fit_.params;
    double low = 0.0, high = 1.0;
    for (int iteration = 0; iteration < kCorrelationIterations; ++iteration) {
      p.layer_correlation = (low + high) / 2;
      (evaluate(p).layer_hit_correlation < real_.layer_hit_correlation ? low : high) = p.layer_correlation;
    }
    p.layer_correlation = (low + high) / 2;
  }

  RoutingFit finish() {
    fit_.synthetic = evaluate(fit_.params);
    return std::move(fit_);
  }

 private:
  int top_k() const { return trace_.header().top_k; }

  // fit_layers: two bisections of the skew and, with token ids, one of the overlap, then one more.
  long long fit_layers_evaluations(int iterations) const {
    return iterations * (real_.has_token_ids ? 3 : 2) + 1;
  }

  RoutingStatistics evaluate(const SyntheticRoutingParams& params) {
    const TraceHeader& h = trace_.header();
    RoutingStatistics s = measure_routing(
        synthesize_trace(trace_, SyntheticRouting(params, layers_, h.experts, h.top_k, seed_)), held_out_);
    ++fit_.evaluations;
    if (progress_) progress_("evaluation", fit_.evaluations, planned_);
    return s;
  }

  // In units of 10% load skew, 0.05 F1.
  double layer_error(const RoutingStatistics& s, int layer) const {
    double error = std::abs(s.load_skew[layer] / real_.load_skew[layer] - 1) / 0.10;
    // The grouped median steers; the plain median (on the 1/k grid) is the target itself.
    if (real_.has_token_ids)
      error += (std::abs(s.f1_grouped_median[layer] - real_.f1_grouped_median[layer]) +
                std::abs(s.f1_p50[layer] - real_.f1_p50[layer])) /
               0.05;
    return error;
  }

  double topic_gap(const RoutingStatistics& s) const {
    double gap = std::abs(s.request_concentration - real_.request_concentration);
    for (std::size_t i = 0; i < s.coactivation_spectrum.size(); ++i)
      gap += std::abs(s.coactivation_spectrum[i] - real_.coactivation_spectrum[i]);
    for (int layer = 0; layer < layers_; ++layer) gap += layer_error(s, layer) / layers_;
    return gap;
  }

  // Evaluates the parameters as they stand (token affinity following the overlap) and keeps each
  // layer's that came closer than before.
  RoutingStatistics evaluate_and_track(BestLayers& best) {
    SyntheticRoutingParams& p = fit_.params;
    for (int layer = 0; layer < layers_ && real_.has_token_ids; ++layer)
      p.token_affinity[layer] =
          std::max(0.0, real_.exact_share[layer] - std::pow(p.variant_overlap[layer], top_k()));
    RoutingStatistics s = evaluate(p);
    for (int layer = 0; layer < layers_; ++layer)
      if (const double error = layer_error(s, layer); error < best.error[layer]) {
        best.error[layer] = error;
        best.params.expert_skew[layer] = p.expert_skew[layer];
        best.params.variant_overlap[layer] = p.variant_overlap[layer];
        best.params.token_affinity[layer] = p.token_affinity[layer];
      }
    return s;
  }

  // Per layer, `parameter` bisected in [value - radius, value + radius] ∩ [0, limit] so that
  // `statistic` meets the trace's.
  void bisect(std::vector<double>& parameter, double radius, double limit,
              const std::vector<double> RoutingStatistics::*statistic, int iterations, BestLayers& best) {
    std::vector<double> low(layers_), high(layers_);
    for (int layer = 0; layer < layers_; ++layer) {
      low[layer] = std::max(0.0, parameter[layer] - radius);
      high[layer] = std::min(limit, parameter[layer] + radius);
    }
    for (int iteration = 0; iteration < iterations; ++iteration) {
      for (int layer = 0; layer < layers_; ++layer) parameter[layer] = (low[layer] + high[layer]) / 2;
      const RoutingStatistics s = evaluate_and_track(best);
      for (int layer = 0; layer < layers_; ++layer)
        ((s.*statistic)[layer] < (real_.*statistic)[layer] ? low : high)[layer] = parameter[layer];
    }
    for (int layer = 0; layer < layers_; ++layer) parameter[layer] = (low[layer] + high[layer]) / 2;
  }

  const RoutingTrace& trace_;
  const std::vector<bool>& held_out_;
  const std::uint64_t seed_;
  const ProgressCallback& progress_;
  const int layers_;
  RoutingFit fit_;
  const RoutingStatistics& real_;  // fit_.real
  const TokenStreamStatistics real_tokens_;
  long long planned_;
};

}  // namespace

RoutingFit fit_synthetic_routing(const RoutingTrace& trace, const std::vector<bool>& held_out,
                                 std::uint64_t seed, const ProgressCallback& progress) {
  RoutingFitter fitter(trace, held_out, seed, progress);
  fitter.start();
  fitter.fit_layers(4.0, 1.0, kLayerIterations);
  fitter.fit_topics();
  fitter.fit_layer_correlation();
  return fitter.finish();
}

void write_fit_report(const RoutingFit& fit, const std::string& csv_path, const std::string& json_path) {
  const RoutingStatistics &real = fit.real, &syn = fit.synthetic;
  auto at = [](const std::vector<double>& v, std::size_t i) { return i < v.size() ? v[i] : NAN; };
  std::string csv =
      "layer,real_load_max_over_mean,synthetic_load_max_over_mean,real_f1_p50,synthetic_f1_p50,real_f1_mean,"
      "synthetic_f1_mean,real_cum_topk_hotness_p50,synthetic_cum_topk_hotness_p50,real_max_nontopk_hotness_"
      "p50,"
      "synthetic_max_nontopk_hotness_p50,expert_skew,token_affinity,variant_overlap\n";
  double worst_skew = 0, worst_f1 = 0;
  for (std::size_t l = 0; l < real.load_skew.size(); ++l) {
    worst_skew = std::max(worst_skew, std::abs(syn.load_skew[l] / real.load_skew[l] - 1));
    if (real.has_token_ids) worst_f1 = std::max(worst_f1, std::abs(syn.f1_p50[l] - real.f1_p50[l]));
    csv += fmt::format(
        "{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6g},{:.6g},{:.6g}\n", l,
        real.load_skew[l], syn.load_skew[l], at(real.f1_p50, l), at(syn.f1_p50, l), at(real.f1_mean, l),
        at(syn.f1_mean, l), at(real.cumulative_hotness, l), at(syn.cumulative_hotness, l),
        at(real.max_other_hotness, l), at(syn.max_other_hotness, l), fit.params.expert_skew[l],
        fit.params.token_affinity[l], fit.params.variant_overlap[l]);
  }
  write_text_file(csv_path, csv);
  auto side = [](const RoutingStatistics& s) {
    return nlohmann::ordered_json{{"unseen_share", s.unseen_share},
                                  {"layer_hit_correlation", s.layer_hit_correlation},
                                  {"request_concentration", s.request_concentration},
                                  {"coactivation_spectrum", s.coactivation_spectrum}};
  };
  nlohmann::ordered_json j;
  j["evaluations"] = fit.evaluations;
  j["token_ids"] = real.has_token_ids;
  j["max_relative_load_skew_error"] = worst_skew;
  j["max_abs_f1_p50_error"] =
      real.has_token_ids ? nlohmann::ordered_json(worst_f1) : nlohmann::ordered_json();
  j["topics"] = fit.params.topics;
  j["topic_boost"] = fit.params.topic_boost;
  j["token_skew"] = fit.params.token_skew;
  j["layer_correlation"] = fit.params.layer_correlation;
  j["real"] = side(real);
  j["synthetic"] = side(syn);
  write_text_file(json_path, j.dump(2) + "\n");
}

}  // namespace semsim
