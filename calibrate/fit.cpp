#include "calibrate/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "calibrate/interpolation.hpp"
#include "calibrate/quantile.hpp"

namespace semsim {
namespace {

double relative_error(double predicted, double measured) {
  return std::abs(predicted - measured) / measured;
}

std::vector<double> distinct(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::size_t index_of(const std::vector<double>& sorted, double value) {
  return static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
}

// Keeps the longest run of contiguous measured entries of a row; a row with fewer than two is cleared.
void keep_longest_run(std::vector<std::optional<double>>& row) {
  std::size_t best_start = 0, best_length = 0;
  for (std::size_t start = 0; start < row.size();) {
    if (!row[start]) {
      ++start;
      continue;
    }
    std::size_t end = start;
    while (end < row.size() && row[end]) ++end;
    if (end - start > best_length) best_start = start, best_length = end - start;
    start = end;
  }
  for (std::size_t i = 0; i < row.size(); ++i)
    if (best_length < 2 || i < best_start || i >= best_start + best_length) row[i].reset();
}

// Leave-one-out errors of the interior points of one row (x increasing, all measured).
void leave_one_out(const std::vector<double>& x, const std::vector<double>& y, std::vector<double>& errors) {
  for (std::size_t skip = 1; skip + 1 < x.size(); ++skip) {
    std::vector<double> other_x, other_y;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (i != skip) other_x.push_back(x[i]), other_y.push_back(y[i]);
    errors.push_back(relative_error(MonotoneCurve(other_x, other_y)(x[skip]), y[skip]));
  }
}

// The bandwidth factor that makes the alpha-beta model meet one sample, within [1e-3, 1 / efficiency]
// (a message never beats the datasheet link).
double factor_through(const CollectiveFit& fit, const CollectiveSample& s) {
  const double cap = std::max(1.0, 1.0 / fit.efficiency);
  const double transfer = s.seconds - fit.alpha;
  if (!(transfer > 0)) return cap;
  return std::clamp(s.bus_bytes / fit.bus_bandwidth / transfer, 1e-3, cap);
}

}  // namespace

FitResiduals residuals_of(std::vector<double> relative_errors) {
  FitResiduals r;
  r.samples = static_cast<int>(relative_errors.size());
  if (relative_errors.empty()) return r;
  std::sort(relative_errors.begin(), relative_errors.end());
  r.median = sorted_quantile(relative_errors, 0.5);
  r.p95 = sorted_quantile(relative_errors, 0.95);
  return r;
}

std::optional<KernelTable> fit_kernel_table(const KernelSpec& spec, const std::string& shape,
                                            const std::string& dtype, const std::string& implementation,
                                            const std::vector<KernelSample>& grid,
                                            const std::vector<KernelSample>& held_out) {
  const bool two_axes = spec.axes.size() == 2;
  std::vector<double> xs, ys;
  for (const KernelSample& s : grid) {
    if (!(s.seconds > 0) || !(s.x > 0) || (two_axes && !(s.y > 0))) continue;
    xs.push_back(s.x);
    ys.push_back(s.y);
  }
  const std::vector<double> rows_axis = two_axes ? distinct(xs) : std::vector<double>{0};
  const std::vector<double> columns_axis = distinct(two_axes ? ys : xs);
  const std::size_t columns = columns_axis.size();
  // Repeated samples of one point keep their median.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> cells;
  for (const KernelSample& s : grid) {
    if (!(s.seconds > 0) || !(s.x > 0) || (two_axes && !(s.y > 0))) continue;
    cells[{two_axes ? index_of(rows_axis, s.x) : 0, index_of(columns_axis, two_axes ? s.y : s.x)}].push_back(
        s.seconds);
  }
  std::vector<std::vector<std::optional<double>>> rows(rows_axis.size(),
                                                       std::vector<std::optional<double>>(columns));
  for (const auto& [cell, values] : cells) rows[cell.first][cell.second] = quantile(values, 0.5);
  KernelTable table;
  table.kernel = std::string(spec.name);
  table.shape = shape;
  table.dtype = dtype;
  table.implementation = implementation;
  std::vector<double> kept_rows;
  std::vector<double> errors;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    keep_longest_run(rows[r]);
    std::vector<double> x, y;
    for (std::size_t c = 0; c < columns; ++c)
      if (rows[r][c]) x.push_back(columns_axis[c]), y.push_back(*rows[r][c]);
    if (x.empty()) continue;
    kept_rows.push_back(rows_axis[r]);
    leave_one_out(x, y, errors);
    table.seconds.insert(table.seconds.end(), rows[r].begin(), rows[r].end());
  }
  if (kept_rows.size() < (two_axes ? 2u : 1u) || columns < 2) return std::nullopt;
  if (two_axes) table.axes.push_back({std::string(spec.axes[0]), kept_rows});
  table.axes.push_back({std::string(spec.axes.back()), columns_axis});
  // Columns no kept row measures would fail validation: drop them.
  for (std::size_t c = columns; c-- > 0;) {
    bool measured = false;
    for (std::size_t r = 0; r < kept_rows.size(); ++r) measured = measured || table.seconds[r * columns + c];
    if (measured) continue;
    table.axes.back().values.erase(table.axes.back().values.begin() + static_cast<std::ptrdiff_t>(c));
    for (std::size_t r = kept_rows.size(); r-- > 0;)
      table.seconds.erase(table.seconds.begin() + static_cast<std::ptrdiff_t>(r * columns + c));
  }
  const KernelTableLookup lookup(table, table.kernel, false);
  for (const KernelSample& s : held_out) {
    try {
      errors.push_back(relative_error(lookup.seconds(s.x, s.y), s.seconds));
    } catch (const InputError&) {
      // Far outside the grid: not a prediction the table is meant to make.
    }
  }
  table.residuals = residuals_of(errors);
  return table;
}

std::optional<CollectiveFit> fit_collective(const std::string& collective, const std::string& level,
                                            int ranks, std::vector<CollectiveSample> samples,
                                            double link_bandwidth) {
  std::erase_if(samples, [](const CollectiveSample& s) {
    return !(s.bus_bytes > 0) || !(s.message_bytes > 0) || !(s.seconds > 0);
  });
  std::sort(samples.begin(), samples.end(), [](const CollectiveSample& a, const CollectiveSample& b) {
    return a.message_bytes < b.message_bytes;
  });
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const CollectiveSample& a, const CollectiveSample& b) {
                              return a.message_bytes == b.message_bytes;
                            }),
                samples.end());
  if (samples.size() < 3 || !(link_bandwidth > 0)) return std::nullopt;

  // Least-squares slope of time over bus bytes among the largest messages: the asymptotic bandwidth.
  const double largest = samples.back().bus_bytes;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const CollectiveSample& s : samples) {
    if (s.bus_bytes < largest / 8) continue;
    n += 1, sx += s.bus_bytes, sy += s.seconds, sxx += s.bus_bytes * s.bus_bytes,
        sxy += s.bus_bytes * s.seconds;
  }
  double beta = n >= 2 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) : 0.0;
  if (!(beta > 0))  // noise at the top: the average slope over the whole range instead
    beta = (samples.back().seconds - samples.front().seconds) /
           (samples.back().bus_bytes - samples.front().bus_bytes);
  if (!(beta > 0)) return std::nullopt;

  CollectiveFit fit;
  fit.collective = collective;
  fit.level = level;
  fit.ranks = ranks;
  fit.bus_bandwidth = 1.0 / beta;
  fit.efficiency = fit.bus_bandwidth / link_bandwidth;
  fit.alpha = std::max(0.0, samples.front().seconds - samples.front().bus_bytes * beta);
  for (const CollectiveSample& s : samples) {
    fit.factor_bytes.push_back(s.message_bytes);
    fit.factor.push_back(factor_through(fit, s));
  }
  std::vector<double> errors;
  for (std::size_t skip = 1; skip + 1 < samples.size(); ++skip) {
    CollectiveFit without = fit;
    without.factor_bytes.erase(without.factor_bytes.begin() + static_cast<std::ptrdiff_t>(skip));
    without.factor.erase(without.factor.begin() + static_cast<std::ptrdiff_t>(skip));
    const CollectiveSample& s = samples[skip];
    errors.push_back(relative_error(collective_seconds(without, s.bus_bytes, s.message_bytes), s.seconds));
  }
  fit.residuals = residuals_of(errors);
  return fit;
}

double collective_seconds(const CollectiveFit& fit, double bus_bytes, double message_bytes) {
  return fit.alpha + bus_bytes / (fit.bus_bandwidth * BandwidthFactor(fit)(message_bytes));
}

}  // namespace semsim
