#include "policies/lar_upper_bound.hpp"

#include <ClpSimplex.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
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

// ψ(w) = (w² − g·w)/2: the fewest co-located pair weight with w local activations.
double pair_weight_needed(double w, double g) {
  return (w * w - g * w) / 2;
}

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
constexpr int kMaxRounds = 40;

// max Σ count·W over the pair relaxation described in the header; `local_cap` bounds Σ count·W.
double pair_relaxation_bound(const std::vector<Item>& items, int experts, int per_device, double local_cap) {
  const int pairs = experts * (experts - 1) / 2;
  auto pair = [experts](int a, int b) {
    if (a > b) std::swap(a, b);
    return a * experts - a * (a + 1) / 2 + (b - a - 1);
  };
  const int items_count = static_cast<int>(items.size());
  auto q_column = [&](int i) { return pairs + 2 * i; };
  auto w_column = [&](int i) { return pairs + 2 * i + 1; };

  ClpSimplex model;
  model.setLogLevel(0);
  model.resize(0, pairs + 2 * items_count);
  model.setOptimizationDirection(-1);
  for (int p = 0; p < pairs; ++p) model.setColumnBounds(p, 0, 1);
  for (int i = 0; i < items_count; ++i) {
    model.setColumnBounds(q_column(i), 0, COIN_DBL_MAX);
    model.setColumnBounds(w_column(i), 0, items[i].cap);
    model.setObjectiveCoefficient(w_column(i), items[i].count);
  }
  RowBatch rows;
  for (int a = 0; a < experts; ++a) {
    std::vector<std::pair<int, double>> degree;
    for (int b = 0; b < experts; ++b)
      if (b != a) degree.push_back({pair(a, b), 1});
    rows.add(degree, per_device - 1, per_device - 1);
  }
  std::vector<std::pair<int, double>> total;
  for (int i = 0; i < items_count; ++i) total.push_back({w_column(i), items[i].count});
  rows.add(total, -COIN_DBL_MAX, local_cap);
  auto add_secant = [&](int i, double w) {
    const double g = items[i].largest, slope = 1 / (pair_weight_needed(w + 1, g) - pair_weight_needed(w, g));
    rows.add({{w_column(i), 1}, {q_column(i), -slope}}, -COIN_DBL_MAX, w - slope * pair_weight_needed(w, g));
  };
  for (int i = 0; i < items_count; ++i) {
    const Item& item = items[i];
    std::vector<std::pair<int, double>> definition{{q_column(i), 1}};
    for (std::size_t x = 0; x < item.experts.size(); ++x)
      for (std::size_t y = x + 1; y < item.experts.size(); ++y)
        definition.push_back({pair(item.experts[x].first, item.experts[y].first),
                              -item.experts[x].second * item.experts[y].second});
    rows.add(definition, 0, 0);
    // The first few secants up front (all of them for a TP token); the rest where violated.
    for (double w = item.largest; w < item.cap && w < item.largest + 4; ++w) add_secant(i, w);
  }
  rows.flush(model);

  for (int round = 0;; ++round) {
    model.dual();
    if (!model.isProvenOptimal())
      throw std::runtime_error("LAR upper bound: CLP did not solve the relaxation");
    if (round == kMaxRounds) break;
    const double* value = model.primalColumnSolution();
    for (int i = 0; i < items_count; ++i) {
      const double g = items[i].largest, q = value[q_column(i)], w = value[w_column(i)];
      const double reachable = (g + std::sqrt(g * g + 8 * std::max(q, 0.0))) / 2;
      if (w <= reachable + kTolerance) continue;
      const double from = std::max(g, std::floor(reachable));
      if (from < items[i].cap) add_secant(i, from);
    }
    // Most violated triangle inequalities, at most a few per expert per round.
    std::vector<std::tuple<double, int, int, int>> violated;  // (violation, pair+, pair+, pair−)
    for (int a = 0; a < experts; ++a)
      for (int b = a + 1; b < experts; ++b)
        for (int c = b + 1; c < experts; ++c) {
          const int ab = pair(a, b), ac = pair(a, c), bc = pair(b, c);
          for (const auto& [p, r, s] :
               {std::tuple{ab, ac, bc}, std::tuple{ab, bc, ac}, std::tuple{ac, bc, ab}})
            if (const double excess = value[p] + value[r] - value[s] - 1; excess > kTolerance)
              violated.push_back({excess, p, r, s});
        }
    std::sort(violated.begin(), violated.end(), [](const auto& x, const auto& y) {
      return std::get<0>(x) > std::get<0>(y) || (std::get<0>(x) == std::get<0>(y) && x < y);
    });
    violated.resize(std::min<std::size_t>(violated.size(), static_cast<std::size_t>(4 * experts)));
    for (const auto& [excess, p, r, s] : violated) rows.add({{p, 1}, {r, 1}, {s, -1}}, -COIN_DBL_MAX, 1);
    if (rows.empty()) break;
    rows.flush(model);
  }
  return model.objectiveValue();
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

}  // namespace

LarUpperBound lar_upper_bound(const RoutingTrace& trace, const std::vector<bool>& use, int devices,
                              double balance) {
  const TraceHeader& h = trace.header();
  if (devices <= 0 || h.experts % devices != 0)
    throw InputError("LAR upper bound: " + std::to_string(devices) + " devices do not divide " +
                     std::to_string(h.experts) + " experts");
  if (balance < 1) throw InputError("LAR upper bound: balance must be at least 1");
  if (!use.empty() && use.size() != trace.requests())
    throw std::invalid_argument("LAR upper bound: request mask size differs from the trace");
  const int per_device = h.experts / devices, k = h.top_k;
  auto used = [&](std::size_t r) { return use.empty() || use[r]; };
  double tokens = 0;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    if (used(r)) tokens += trace.request(r).routed_tokens();

  LarUpperBound out;
  double tp_local = 0, dp_local = 0;
  for (int layer = 0; layer < h.moe_layers; ++layer) {
    std::map<std::vector<int>, double> token_sets;
    std::vector<Item> requests;
    std::vector<double> load(h.experts, 0.0);
    for (std::size_t r = 0; r < trace.requests(); ++r) {
      if (!used(r)) continue;
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
    double local_cap = 0;
    for (double l : load) local_cap += std::min(l, balance * tokens / devices);
    const double activations = tokens * k;
    const double tp = pair_relaxation_bound(token_items, h.experts, per_device, local_cap);
    const double dp = std::min(tp, pair_relaxation_bound(requests, h.experts, per_device, local_cap));
    out.tp_layer.push_back(activations > 0 ? std::min(1.0, tp / activations) : 0);
    out.dp_layer.push_back(activations > 0 ? std::min(1.0, dp / activations) : 0);
    tp_local += tp;
    dp_local += dp;
  }
  const double all = tokens * k * h.moe_layers;
  out.tp = all > 0 ? std::min(1.0, tp_local / all) : 0;
  out.dp = all > 0 ? std::min(1.0, dp_local / all) : 0;
  return out;
}

}  // namespace semsim
