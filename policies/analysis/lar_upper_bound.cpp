#include "policies/analysis/lar_upper_bound.hpp"

#include <ClpSimplex.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "models/input_error.hpp"

namespace semsim {
namespace {

// Experts that must share one device, with multiplicities (a TP token or a DP request at one layer).
struct Item {
  std::vector<std::pair<int, double>> experts;  // (expert, h), distinct experts
  double count = 1;                             // identical items merged
  double cap = 0;                               // the N/D largest h summed
  double largest = 0;                           // g = max h
};

// Rows collected before handing them to CLP in one call.
class RowBatch {
 public:
  void add(const std::vector<std::pair<int, double>>& terms, double lower, double upper) {
    for (const auto& [column, value] : terms) {
      columns_.push_back(column);
      values_.push_back(value);
    }
    starts_.push_back(static_cast<CoinBigIndex>(columns_.size()));
    lower_.push_back(lower);
    upper_.push_back(upper);
  }
  bool empty() const { return lower_.empty(); }
  void flush(ClpSimplex& model) {
    if (empty()) return;
    model.addRows(static_cast<int>(lower_.size()), lower_.data(), upper_.data(), starts_.data(),
                  columns_.data(), values_.data());
    *this = RowBatch{};
  }

 private:
  std::vector<CoinBigIndex> starts_{0};
  std::vector<int> columns_;
  std::vector<double> values_, lower_, upper_;
};

constexpr double kTolerance = 1e-7;
constexpr double kConverged = 1e-4;
constexpr int kStalledIterations = 2;

// The items' pair coefficients h[a]·h[b], compressed by item.
struct PairTerms {
  std::vector<std::size_t> begin{0};  // item i: [begin[i], begin[i + 1])
  std::vector<int> pair;
  std::vector<double> coefficient;
};

// ψ(w) = (w² − g·w)/2: the least co-located pair weight an item with largest multiplicity g needs
// for w local activations.
double pair_weight_needed(double w, double g) {
  return (w * w - g * w) / 2;
}

// The least upper bound on an item's integer local activations W given its co-located pair weight
// q: the piecewise-linear interpolation of φ(q) = (g + √(g² + 8q))/2 at the integers w >= g, where
// φ(ψ(w)) = w (concave, since φ is), capped at c; with its slope (0 where the cap binds).
struct Reach {
  double value, slope;
};
Reach reach(const Item& item, double q) {
  const double g = item.largest;
  double w = std::max(g, std::floor((g + std::sqrt(g * g + 8 * std::max(q, 0.0))) / 2));
  while (pair_weight_needed(w + 1, g) <= q) ++w;  // rounding in the square root
  while (w > g && pair_weight_needed(w, g) > q) --w;
  const double slope = 1 / (pair_weight_needed(w + 1, g) - pair_weight_needed(w, g));
  const double value = w + (q - pair_weight_needed(w, g)) * slope;
  return value < item.cap ? Reach{value, slope} : Reach{item.cap, 0};
}

// The pair polytope U: u_ab in [0, 1], Σ_b u_ab = N/D − 1, and the triangle inequalities found
// violated so far. linear_max(w) = max over U of w·u (an LP solved by CLP, warm-started).
class PairPolytope {
 public:
  // `cut_rounds`: rounds of triangle separation per linear_max (0: the degree polytope alone).
  PairPolytope(int experts, int per_device, int cut_rounds) : experts_(experts), cut_rounds_(cut_rounds) {
    const int pairs = experts * (experts - 1) / 2;
    model_.setLogLevel(0);
    model_.resize(0, pairs);
    model_.setOptimizationDirection(-1);
    for (int p = 0; p < pairs; ++p) model_.setColumnBounds(p, 0, 1);
    RowBatch rows;
    for (int a = 0; a < experts; ++a) {
      std::vector<std::pair<int, double>> degree;
      for (int b = 0; b < experts; ++b)
        if (b != a) degree.push_back({pair(a, b), 1});
      rows.add(degree, per_device - 1, per_device - 1);
    }
    rows.flush(model_);
  }
  int pair(int a, int b) const {
    if (a > b) std::swap(a, b);
    return a * experts_ - a * (a + 1) / 2 + (b - a - 1);
  }
  int pairs() const { return model_.numberColumns(); }

  // Solves, adds the triangle inequalities the optimum violates and solves again, a few times.
  // `tightened`: whether inequalities were added (U shrank).
  double linear_max(const std::vector<double>& weight, std::vector<double>& argmax, bool& tightened) {
    for (int p = 0; p < pairs(); ++p) model_.setObjectiveCoefficient(p, weight[p]);
    model_.setPerturbation(kAutomaticPerturbation);
    model_.primal();
    tightened = false;
    for (int round = 0; round < cut_rounds_ && add_violated_triangles(); ++round) {
      tightened = true;
      // The pair LPs are very degenerate (most pairs weigh nothing): re-solving after cuts was ~3x
      // faster with costs always perturbed (CLP removes it before declaring optimality), while
      // the primal solves were slower with it.
      model_.setPerturbation(kAlwaysPerturb);
      model_.dual();
    }
    if (!model_.isProvenOptimal()) throw std::runtime_error("LAR upper bound: CLP did not solve the pair LP");
    argmax.assign(model_.primalColumnSolution(), model_.primalColumnSolution() + pairs());
    return model_.objectiveValue();
  }

 private:
  static constexpr std::size_t kCutsPerRound = 500;                        // the most violated
  static constexpr int kAlwaysPerturb = 50, kAutomaticPerturbation = 100;  // ClpSimplex::setPerturbation
  // Bounds the LP's size (and the time of each re-solve) on degenerate inputs; DeepSeek-V2-Lite's
  // held-out layers needed up to ~8,000 at EP4.
  static constexpr std::size_t kMostCuts = 12000;

  bool add_violated_triangles() {
    if (cuts_ >= kMostCuts) return false;
    const double* u = model_.primalColumnSolution();
    std::vector<std::tuple<double, int, int, int>> violated;  // (excess, pair+, pair+, pair−)
    for (int a = 0; a < experts_; ++a)
      for (int b = a + 1; b < experts_; ++b)
        for (int c = b + 1; c < experts_; ++c) {
          const int ab = pair(a, b), ac = pair(a, c), bc = pair(b, c);
          for (const auto& [p, r, s] :
               {std::tuple{ab, ac, bc}, std::tuple{ab, bc, ac}, std::tuple{ac, bc, ab}})
            if (const double excess = u[p] + u[r] - u[s] - 1; excess > kTolerance)
              violated.push_back({excess, p, r, s});
        }
    const bool added = !violated.empty();
    std::sort(violated.begin(), violated.end(), [](const auto& x, const auto& y) {
      return std::get<0>(x) > std::get<0>(y) || (std::get<0>(x) == std::get<0>(y) && x < y);
    });
    violated.resize(std::min({violated.size(), kCutsPerRound, kMostCuts - cuts_}));
    cuts_ += violated.size();
    RowBatch rows;
    for (const auto& [excess, p, r, s] : violated) rows.add({{p, 1}, {r, 1}, {s, -1}}, -COIN_DBL_MAX, 1);
    rows.flush(model_);
    return added;
  }

  int experts_, cut_rounds_;
  std::size_t cuts_ = 0;
  ClpSimplex model_;
};

// max Σ count·W over the relaxation described in the header, bounded from above by Frank-Wolfe on
// the concave F(u) = Σ count·reach(q(u)): for any u and supergradient ∇F(u),
// max_U F <= F(u) + max_{s∈U} ∇F(u)·(s − u); the least of these over the iterations.
double pair_relaxation_bound(const std::vector<Item>& items, int experts, int per_device, int iterations,
                             int cut_rounds) {
  PairPolytope polytope(experts, per_device, cut_rounds);
  PairTerms terms;
  for (const Item& item : items) {
    for (std::size_t x = 0; x < item.experts.size(); ++x)
      for (std::size_t y = x + 1; y < item.experts.size(); ++y) {
        terms.pair.push_back(polytope.pair(item.experts[x].first, item.experts[y].first));
        terms.coefficient.push_back(item.experts[x].second * item.experts[y].second);
      }
    terms.begin.push_back(terms.pair.size());
  }
  auto pair_weights = [&](const std::vector<double>& u, std::vector<double>& q) {
    q.assign(items.size(), 0.0);
    for (std::size_t i = 0; i < items.size(); ++i)
      for (std::size_t t = terms.begin[i]; t < terms.begin[i + 1]; ++t)
        q[i] += terms.coefficient[t] * u[terms.pair[t]];
  };
  auto value = [&](const std::vector<double>& q) {
    double sum = 0;
    for (std::size_t i = 0; i < items.size(); ++i) sum += items[i].count * reach(items[i], q[i]).value;
    return sum;
  };
  // The uniform point: every expert's N/D − 1 partners spread evenly (it satisfies every triangle).
  std::vector<double> u(polytope.pairs(), static_cast<double>(per_device - 1) / (experts - 1)), q, step_q,
      gradient, vertex;
  double best = COIN_DBL_MAX;
  int stalled = 0;  // iterations since the bound last fell by more than kConverged
  for (int iteration = 0; iteration < iterations; ++iteration) {
    pair_weights(u, q);
    const double f = value(q);
    gradient.assign(u.size(), 0.0);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const double slope = items[i].count * reach(items[i], q[i]).slope;
      for (std::size_t t = terms.begin[i]; t < terms.begin[i + 1]; ++t)
        gradient[terms.pair[t]] += slope * terms.coefficient[t];
    }
    bool tightened = false;
    const double at_vertex = polytope.linear_max(gradient, vertex, tightened);
    double at_u = 0;
    for (std::size_t p = 0; p < u.size(); ++p) at_u += gradient[p] * u[p];
    const double bound = f + at_vertex - at_u;
    stalled = bound < best - kConverged * best ? 0 : stalled + 1;
    best = std::min(best, bound);
    // Stop once max F over U is known closely enough, unless new cuts may still lower it; while
    // cuts keep coming, stop once they no longer move the bound (degenerate inputs would otherwise
    // spend every iteration re-solving ever larger LPs).
    if (best - f <= kConverged * best && (!tightened || stalled >= kStalledIterations)) break;
    // Exact line search on the concave γ -> F(u + γ(vertex − u)) by bisection on its slope.
    std::vector<double> direction(u.size());
    for (std::size_t p = 0; p < u.size(); ++p) direction[p] = vertex[p] - u[p];
    pair_weights(direction, step_q);
    double low = 0, high = 1;
    for (int halving = 0; halving < 40; ++halving) {
      const double mid = (low + high) / 2;
      double slope = 0;
      for (std::size_t i = 0; i < items.size(); ++i)
        slope += items[i].count * reach(items[i], q[i] + mid * step_q[i]).slope * step_q[i];
      (slope > 0 ? low : high) = mid;
    }
    for (std::size_t p = 0; p < u.size(); ++p) u[p] += low * direction[p];
  }
  return best;
}

Item make_item(std::vector<std::pair<int, double>> experts, int per_device) {
  Item item;
  std::sort(experts.begin(), experts.end(), [](const auto& x, const auto& y) {
    return x.second > y.second || (x.second == y.second && x < y);
  });
  for (std::size_t e = 0; e < experts.size() && e < static_cast<std::size_t>(per_device); ++e)
    item.cap += experts[e].second;
  item.largest = experts.empty() ? 0 : experts.front().second;
  std::sort(experts.begin(), experts.end());
  item.experts = std::move(experts);
  return item;
}

// Local activations of one layer's items at most: {TP, DP}.
std::pair<double, double> layer_bound(const RoutingTrace& trace, const std::vector<bool>& use, int layer,
                                      int devices, double tokens, const LarBoundOptions& options) {
  const TraceHeader& h = trace.header();
  const int per_device = h.experts / devices, k = h.top_k;
  std::map<std::vector<int>, double> token_sets;
  std::vector<Item> requests;
  std::vector<double> load(h.experts, 0.0);
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!use.empty() && !use[r]) continue;
    std::vector<double> histogram(h.experts, 0.0);
    const std::int64_t first = trace.first_token(r);
    for (std::int64_t t = first; t < first + trace.request(r).routed_tokens(); ++t) {
      const ExpertId* experts = trace.experts_of(t, layer);
      std::vector<int> set(experts, experts + k);
      std::sort(set.begin(), set.end());
      token_sets[set] += 1;
      for (int e : set) histogram[e] += 1;
    }
    std::vector<std::pair<int, double>> request;
    for (int e = 0; e < h.experts; ++e)
      if (histogram[e] > 0) {
        request.push_back({e, histogram[e]});
        load[e] += histogram[e];
      }
    if (!request.empty()) requests.push_back(make_item(std::move(request), per_device));
  }
  std::vector<Item> token_items;
  for (const auto& [set, count] : token_sets) {
    std::vector<std::pair<int, double>> experts;
    for (int e : set) experts.push_back({e, 1.0});
    token_items.push_back(make_item(std::move(experts), per_device));
    token_items.back().count = count;
  }
  auto local_cap = [&](double balance) {
    double cap = 0;
    for (double l : load) cap += std::min(l, balance * tokens / devices);
    return cap;
  };
  const double tp_pairs =
      pair_relaxation_bound(token_items, h.experts, per_device, options.iterations, options.triangle_rounds);
  const double dp_pairs = pair_relaxation_bound(requests, h.experts, per_device, options.iterations, 0);
  return {std::min(tp_pairs, local_cap(options.tp_balance)),
          std::min({tp_pairs, dp_pairs, local_cap(options.dp_balance)})};
}

}  // namespace

LarUpperBound lar_upper_bound(const RoutingTrace& trace, const std::vector<bool>& use, int devices,
                              const LarBoundOptions& options) {
  const TraceHeader& h = trace.header();
  if (devices <= 0 || h.experts % devices != 0)
    throw InputError("LAR upper bound: " + std::to_string(devices) + " devices do not divide " +
                     std::to_string(h.experts) + " experts");
  if (options.tp_balance < 1 || options.dp_balance < 1)
    throw InputError("LAR upper bound: balance must be at least 1");
  if (options.iterations < 1 || options.triangle_rounds < 0 || options.threads < 1)
    throw InputError(
        "LAR upper bound: iterations and threads must be at least 1 and triangle rounds at least 0");
  if (!use.empty() && use.size() != trace.requests())
    throw std::invalid_argument("LAR upper bound: request mask size differs from the trace");
  const auto tokens = static_cast<double>(routed_tokens(trace, use));

  // Layers are independent: workers take the next layer and write only its own slot.
  std::vector<std::pair<double, double>> local(h.moe_layers);
  std::vector<std::exception_ptr> failed(h.moe_layers);
  std::atomic<int> next_layer{0};
  ProgressCounter bounded(options.progress, "bound, layer", h.moe_layers);
  auto work = [&] {
    for (int layer = next_layer++; layer < h.moe_layers; layer = next_layer++) {
      try {
        local[layer] = layer_bound(trace, use, layer, devices, tokens, options);
      } catch (...) {
        failed[layer] = std::current_exception();
      }
      bounded.finished_one();
    }
  };
  {
    std::vector<std::jthread> workers;
    for (int t = 1; t < std::min(options.threads, h.moe_layers); ++t) workers.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);

  LarUpperBound out;
  const double activations = tokens * h.top_k;
  double tp_local = 0, dp_local = 0;
  for (const auto& [tp, dp] : local) {
    out.tp_layer.push_back(activations > 0 ? std::min(1.0, tp / activations) : 0);
    out.dp_layer.push_back(activations > 0 ? std::min(1.0, dp / activations) : 0);
    tp_local += tp;
    dp_local += dp;
  }
  const double all = activations * h.moe_layers;
  out.tp = all > 0 ? std::min(1.0, tp_local / all) : 0;
  out.dp = all > 0 ? std::min(1.0, dp_local / all) : 0;
  return out;
}

}  // namespace semsim
