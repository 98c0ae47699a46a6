#include "policies/analysis/oracle_assignment.hpp"

#include <ClpSimplex.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace semsim {

long long best_capacitated_assignment(std::span<const int> local, int devices, long long capacity) {
  const std::size_t items = local.size() / static_cast<std::size_t>(devices);
  if (static_cast<long double>(capacity) * devices < static_cast<long double>(items))
    throw std::invalid_argument("best_capacitated_assignment: capacity below items / devices");
  std::map<std::vector<int>, double> rows;  // equal rows are interchangeable
  for (std::size_t i = 0; i < items; ++i)
    rows[std::vector<int>(local.begin() + static_cast<std::ptrdiff_t>(i * devices),
                          local.begin() + static_cast<std::ptrdiff_t>((i + 1) * devices))] += 1;
  // Column (row type j, device d) = x_jd items of type j on d. Rows: Σ_d x_jd = count_j, then
  // Σ_j x_jd <= capacity.
  const int types = static_cast<int>(rows.size());
  std::vector<CoinBigIndex> starts{0};
  std::vector<int> indexes;
  std::vector<double> values, objective, lower, upper;
  int j = 0;
  for (const auto& [row, count] : rows) {
    for (int d = 0; d < devices; ++d) {
      indexes.insert(indexes.end(), {j, types + d});
      values.insert(values.end(), {1.0, 1.0});
      starts.push_back(static_cast<CoinBigIndex>(indexes.size()));
      objective.push_back(row[d]);
    }
    lower.push_back(count);
    upper.push_back(count);
    ++j;
  }
  lower.insert(lower.end(), devices, 0.0);
  upper.insert(upper.end(), devices, static_cast<double>(capacity));
  const std::vector<double> column_lower(objective.size(), 0.0), column_upper(objective.size(), COIN_DBL_MAX);
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(static_cast<int>(objective.size()), types + devices, starts.data(), indexes.data(),
                    values.data(), column_lower.data(), column_upper.data(), objective.data(), lower.data(),
                    upper.data());
  model.setOptimizationDirection(-1);
  model.primal();
  if (!model.isProvenOptimal())
    throw std::runtime_error("best_capacitated_assignment: CLP did not solve the transportation problem");
  return std::llround(model.objectiveValue());
}

namespace {

long long total_local(std::span<const long long> local, int devices, const std::vector<int>& device) {
  long long sum = 0;
  for (std::size_t r = 0; r < device.size(); ++r) sum += local[r * devices + device[r]];
  return sum;
}

// Requests by decreasing regret, each on its best device with room, else the least loaded.
std::vector<int> regret_greedy(std::span<const long long> local, std::span<const long long> size, int devices,
                               double cap) {
  const std::size_t requests = size.size();
  std::vector<long long> regret(requests);
  for (std::size_t r = 0; r < requests; ++r) {
    std::vector<long long> row(local.begin() + static_cast<std::ptrdiff_t>(r * devices),
                               local.begin() + static_cast<std::ptrdiff_t>((r + 1) * devices));
    std::sort(row.rbegin(), row.rend());
    regret[r] = devices > 1 ? row[0] - row[1] : 0;
  }
  std::vector<std::size_t> order(requests);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return regret[a] > regret[b]; });
  std::vector<int> device(requests);
  std::vector<long long> load(devices, 0);
  for (std::size_t r : order) {
    int best = -1;
    for (int d = 0; d < devices; ++d)
      if (static_cast<double>(load[d] + size[r]) <= cap &&
          (best < 0 || local[r * devices + d] > local[r * devices + best]))
        best = d;
    if (best < 0) best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    device[r] = best;
    load[best] += size[r];
  }
  return device;
}

// Moves and swaps that gain local activations with every load within `cap`, until none does.
void improve(std::span<const long long> local, std::span<const long long> size, int devices, double cap,
             std::vector<int>& device) {
  std::vector<long long> load(devices, 0);
  for (std::size_t r = 0; r < device.size(); ++r) load[device[r]] += size[r];
  auto fits = [&](int d, long long add) { return static_cast<double>(load[d] + add) <= cap; };
  auto gain = [&](std::size_t r, int d) { return local[r * devices + d] - local[r * devices + device[r]]; };
  for (bool improved = true; improved;) {
    improved = false;
    for (std::size_t r = 0; r < device.size(); ++r)
      for (int d = 0; d < devices; ++d)
        if (d != device[r] && gain(r, d) > 0 && fits(d, size[r])) {
          load[device[r]] -= size[r];
          load[d] += size[r];
          device[r] = d;
          improved = true;
        }
    // A swap that gains moves at least one request to a device it gains on: only such requests
    // start one, so a pass costs (requests wanting to move) x requests, not requests squared.
    for (std::size_t a = 0; a < device.size(); ++a) {
      bool wants_to_move = false;
      for (int d = 0; d < devices; ++d) wants_to_move = wants_to_move || gain(a, d) > 0;
      if (!wants_to_move) continue;
      for (std::size_t b = 0; b < device.size(); ++b) {
        const int da = device[a], db = device[b];
        if (da == db || gain(a, db) + gain(b, da) <= 0) continue;
        if (!fits(db, size[a] - size[b]) || !fits(da, size[b] - size[a])) continue;
        load[da] += size[b] - size[a];
        load[db] += size[a] - size[b];
        device[a] = db;
        device[b] = da;
        improved = true;
      }
    }
  }
}

}  // namespace

std::vector<int> hindsight_request_assignment(std::span<const long long> local,
                                              std::span<const long long> size, int devices, double cap,
                                              std::vector<int> start) {
  std::vector<int> greedy = regret_greedy(local, size, devices, cap);
  improve(local, size, devices, cap, greedy);
  improve(local, size, devices, cap, start);
  // Within the cap first, then more local activations.
  auto rank = [&](const std::vector<int>& device) {
    std::vector<long long> load(devices, 0);
    for (std::size_t r = 0; r < device.size(); ++r) load[device[r]] += size[r];
    const bool within = static_cast<double>(*std::max_element(load.begin(), load.end())) <= cap;
    return std::pair{within, total_local(local, devices, device)};
  };
  return rank(greedy) >= rank(start) ? greedy : start;
}

}  // namespace semsim
