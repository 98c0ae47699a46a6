#include "workloads/routing_drift.hpp"

#include <fmt/format.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>

#include "models/input_error.hpp"

namespace semsim {
namespace {

double jensen_shannon_bits(const std::vector<double>& p_counts, const std::vector<double>& q_counts) {
  double p_total = 0, q_total = 0;
  for (const double c : p_counts) p_total += c;
  for (const double c : q_counts) q_total += c;
  if (!(p_total > 0) || !(q_total > 0)) return 0;
  auto term = [](double x, double mean) { return x > 0 ? x * std::log2(x / mean) : 0.0; };
  double divergence = 0;
  for (std::size_t e = 0; e < p_counts.size(); ++e) {
    const double p = p_counts[e] / p_total, q = q_counts[e] / q_total, mean = (p + q) / 2;
    divergence += 0.5 * (term(p, mean) + term(q, mean));
  }
  return std::max(0.0, divergence);
}

// Eigenvalues, ascending, of the symmetric co-activation matrix scaled to unit Frobenius norm.
Eigen::VectorXd unit_spectrum(const std::vector<double>& pairs, int experts) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(experts, experts);
  for (int a = 0; a < experts; ++a)
    for (int b = a + 1; b < experts; ++b)
      m(a, b) = m(b, a) = pairs[static_cast<std::size_t>(a) * experts + b];
  const double norm = m.norm();
  if (!(norm > 0)) return Eigen::VectorXd::Zero(experts);
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(m / norm, Eigen::EigenvaluesOnly).eigenvalues();
}

}  // namespace

RoutingCounts RoutingCounts::of(const RoutingProfile& profile) {
  const int layers = profile.moe_layers(), experts = profile.experts();
  RoutingCounts s;
  s.experts = experts;
  s.load.assign(layers, std::vector<double>(experts, 0));
  if (profile.top_k() > 1)
    s.coactivation.assign(layers, std::vector<double>(static_cast<std::size_t>(experts) * experts, 0));
  for (int layer = 0; layer < layers; ++layer) {
    const auto load = profile.expert_load(layer);
    std::copy(load.begin(), load.end(), s.load[layer].begin());
    if (s.coactivation.empty()) continue;
    for (int a = 0; a < experts; ++a)
      for (int b = a + 1; b < experts; ++b)
        s.coactivation[layer][static_cast<std::size_t>(a) * experts + b] =
            static_cast<double>(profile.coactivation(layer, a, b));
  }
  return s;
}

RoutingCounts RoutingCounts::of(const RoutingTrace& trace, const std::vector<bool>& selected) {
  const TraceHeader& h = trace.header();
  RoutingCounts s;
  s.experts = h.experts;
  s.load.assign(h.moe_layers, std::vector<double>(h.experts, 0));
  if (h.top_k > 1)
    s.coactivation.assign(h.moe_layers,
                          std::vector<double>(static_cast<std::size_t>(h.experts) * h.experts, 0));
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!selected.empty() && !selected[r]) continue;
    const std::int64_t first = trace.first_token(r), end = trace.first_token(r + 1);
    for (std::int64_t token = first; token < end; ++token)
      for (int layer = 0; layer < h.moe_layers; ++layer) {
        const ExpertId* set = trace.experts_of(token, layer);
        for (int j = 0; j < h.top_k; ++j) {
          s.load[layer][set[j]] += 1;
          if (s.coactivation.empty()) continue;
          for (int i = 0; i < j; ++i) {
            const int a = std::min(set[i], set[j]), b = std::max(set[i], set[j]);
            s.coactivation[layer][static_cast<std::size_t>(a) * h.experts + b] += 1;
          }
        }
      }
  }
  return s;
}

RoutingDrift routing_drift(const RoutingCounts& profiled, const RoutingCounts& evaluated) {
  if (profiled.load.size() != evaluated.load.size() || profiled.experts != evaluated.experts)
    throw InputError(
        fmt::format("routing drift: the profile has {} MoE layers x {} experts, the requests {} x {}",
                    profiled.load.size(), profiled.experts, evaluated.load.size(), evaluated.experts));
  RoutingDrift d;
  const std::size_t layers = profiled.load.size();
  const bool pairs = !profiled.coactivation.empty() && !evaluated.coactivation.empty();
  double spectrum_sum = 0, spectrum_max = 0;
  for (std::size_t layer = 0; layer < layers; ++layer) {
    const double jsd = jensen_shannon_bits(profiled.load[layer], evaluated.load[layer]);
    d.popularity_mean += jsd / static_cast<double>(layers);
    if (jsd > d.popularity_max) d.popularity_max = jsd, d.popularity_max_layer = static_cast<int>(layer);
    if (!pairs) continue;
    const double distance = (unit_spectrum(profiled.coactivation[layer], profiled.experts) -
                             unit_spectrum(evaluated.coactivation[layer], evaluated.experts))
                                .norm();
    spectrum_sum += distance;
    spectrum_max = std::max(spectrum_max, distance);
  }
  if (pairs && layers > 0) {
    d.coactivation_mean = spectrum_sum / static_cast<double>(layers);
    d.coactivation_max = spectrum_max;
  }
  return d;
}

RoutingDrift routing_drift(const RoutingCounts& profiled, const RoutingTrace& trace,
                           const std::vector<bool>& evaluated) {
  RoutingDrift drift = routing_drift(profiled, RoutingCounts::of(trace, evaluated));
  std::vector<bool> halves[2];
  for (auto& half : halves) half.assign(trace.requests(), false);
  int seen = 0;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    if (evaluated.empty() || evaluated[r]) halves[seen++ % 2][r] = true;
  if (seen < 2) return drift;
  const RoutingDrift noise =
      routing_drift(RoutingCounts::of(trace, halves[0]), RoutingCounts::of(trace, halves[1]));
  drift.popularity_noise = noise.popularity_max;
  drift.coactivation_noise = noise.coactivation_max;
  return drift;
}

}  // namespace semsim
