#include "calibrate/fit/fit.hpp"

#include <fmt/format.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/fit/quantile.hpp"
#include "calibrate/format/shape_words.hpp"

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

// Four significant digits: far finer than the measurements' noise, and a third of the profile's size.
double significant_digits(double value) {
  return std::stod(fmt::format("{:.4g}", value));
}

// Pool adjacent violators: the non-decreasing sequence closest to `values` in least squares.
void make_non_decreasing(std::vector<double>& values) {
  std::vector<double> level;
  std::vector<int> width;
  for (const double v : values) {
    level.push_back(v);
    width.push_back(1);
    while (level.size() > 1 && level[level.size() - 2] > level.back()) {
      const int w = width.back() + width[width.size() - 2];
      const double merged =
          (level.back() * width.back() + level[level.size() - 2] * width[width.size() - 2]) / w;
      level.pop_back(), width.pop_back();
      level.back() = merged, width.back() = w;
    }
  }
  values.clear();
  for (std::size_t i = 0; i < level.size(); ++i) values.insert(values.end(), width[i], level[i]);
}

// Whether the mean time at each distinct x never decreases as x grows.
bool never_decreases(const std::vector<std::pair<double, double>>& points) {
  std::map<double, std::pair<double, int>> by_x;  // x -> (sum of seconds, samples)
  for (const auto& [x, seconds] : points) {
    auto& [sum, count] = by_x[x];
    sum += seconds, ++count;
  }
  double previous = 0;
  for (const auto& [x, sum_count] : by_x) {
    const double mean = sum_count.first / sum_count.second;
    if (mean < previous) return false;
    previous = mean;
  }
  return true;
}

// Log seconds at `knots` (log x) of the penalised least-squares linear spline through (u, v).
std::vector<double> fit_linear_spline(const std::vector<double>& knots, const std::vector<double>& u,
                                      const std::vector<double>& v) {
  const auto n = static_cast<Eigen::Index>(knots.size());
  Eigen::MatrixXd normal = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n);
  for (std::size_t s = 0; s < u.size(); ++s) {
    const auto upper = std::upper_bound(knots.begin(), knots.end(), u[s]) - knots.begin();
    const Eigen::Index right = std::clamp<Eigen::Index>(upper, 1, n - 1);
    const Eigen::Index left = right - 1;
    const double t = (u[s] - knots[left]) / (knots[right] - knots[left]);
    const double w[2] = {1 - t, t};
    const Eigen::Index at[2] = {left, right};
    for (int a = 0; a < 2; ++a) {
      rhs(at[a]) += w[a] * v[s];
      for (int b = 0; b < 2; ++b) normal(at[a], at[b]) += w[a] * w[b];
    }
  }
  // Curvature penalty: small next to the data where samples are, decisive between sparse ones.
  constexpr double kPenalty = 1e-3;
  for (Eigen::Index i = 1; i + 1 < n; ++i) {
    const Eigen::Index at[3] = {i - 1, i, i + 1};
    const double d[3] = {1, -2, 1};
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) normal(at[a], at[b]) += kPenalty * d[a] * d[b];
  }
  if (n == 2 && u.size() < 2) normal += 1e-9 * Eigen::MatrixXd::Identity(n, n);
  const Eigen::VectorXd solution = normal.ldlt().solve(rhs);
  return {solution.data(), solution.data() + n};
}

// The rows of a scattered table: for each first-axis value, its (x, seconds) samples.
using ScatteredRows = std::map<double, std::vector<std::pair<double, double>>>;

// The tile (1 for none) under which the rows' measurements, each left out in turn, are best
// predicted from the others (median + p95 of |relative error|), by log-log interpolation over tile
// multiples: a held-out size shares its tile multiple's time with the other sizes rounding to it, or
// lies between its neighbours'. Every tile is scored on the same samples, those inside their row's
// measured range; of tiles as good, the smallest. Only dense sweeps (kMinSizes distinct sizes in a
// row) vote: on a few sizes, a smooth curve's flat start looks like one tile.
double choose_tile(const ScatteredRows& rows) {
  static constexpr double kTiles[] = {1, 8, 16, 32, 64, 128};
  constexpr std::size_t kMinSizes = 16;
  double best_tile = 1, best_score = std::numeric_limits<double>::infinity();
  for (const double tile : kTiles) {
    std::vector<double> errors;
    for (const auto& [row, points] : rows) {
      std::map<double, std::vector<double>> by_size, by_multiple;  // -> log seconds
      for (const auto& [x, seconds] : points) {
        by_size[x].push_back(std::log(seconds));
        by_multiple[whole_tiles(x, tile)].push_back(std::log(seconds));
      }
      if (by_size.size() < kMinSizes) continue;
      auto mean = [](const std::vector<double>& logs) {
        return std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
      };
      for (const auto& [x, seconds] : points) {
        if (x == by_size.begin()->first || x == by_size.rbegin()->first) continue;
        const double left_out = std::log(seconds);
        const auto group = by_multiple.find(whole_tiles(x, tile));
        const double n = static_cast<double>(group->second.size());
        double error = 1;  // nothing to predict it from: no better than nothing
        if (n > 1) {
          error = std::abs(std::exp((mean(group->second) * n - left_out) / (n - 1) - left_out) - 1);
        } else if (group != by_multiple.begin() && std::next(group) != by_multiple.end()) {
          const auto below = std::prev(group), above = std::next(group);
          const double t = std::log(group->first / below->first) / std::log(above->first / below->first);
          const double predicted = mean(below->second) + t * (mean(above->second) - mean(below->second));
          error = std::abs(std::exp(predicted - left_out) - 1);
        }
        errors.push_back(error);
      }
    }
    if (errors.empty()) return 1;
    std::sort(errors.begin(), errors.end());
    const double score = sorted_quantile(errors, 0.5) + sorted_quantile(errors, 0.95);
    if (score < best_score) best_score = score, best_tile = tile;
  }
  return best_tile;
}

// The samples of one row (x, seconds) that are outliers (kOutlierFactor): indices into `points`, and
// for each the mean seconds of the sizes either side of its run.
std::vector<std::pair<std::size_t, std::pair<double, double>>> row_outliers(
    const std::vector<std::pair<double, double>>& points) {
  std::map<double, std::pair<double, int>> by_x;  // x -> (sum of log seconds, samples)
  for (const auto& [x, seconds] : points) {
    auto& [sum, count] = by_x[x];
    sum += std::log(seconds), ++count;
  }
  std::vector<double> xs, level;
  for (const auto& [x, sum_count] : by_x)
    xs.push_back(x), level.push_back(sum_count.first / sum_count.second);
  constexpr std::size_t kMinSizes = 5;
  if (xs.size() < kMinSizes) return {};
  const double jump = std::log(kOutlierFactor);
  // The strongest spike or dip first, judged against the nearest sizes not yet flagged on either side
  // (a size beside a spike is no dip for being lower than the spike); then the next, until none.
  std::vector<bool> flagged(xs.size(), false);
  std::vector<std::pair<std::size_t, std::size_t>> flanks(xs.size());  // of each flagged size's run
  for (;;) {
    double strongest = jump;
    std::size_t best_first = 0, best_last = 0, best_left = 0, best_right = 0;
    for (std::size_t first = 1; first + 1 < xs.size(); ++first) {
      if (flagged[first]) continue;
      std::size_t left = first - 1;
      while (left > 0 && flagged[left]) --left;
      if (flagged[left]) continue;
      std::size_t last = first;
      for (std::size_t sizes = 1; sizes <= kOutlierRun && last + 1 < xs.size(); ++sizes, ++last) {
        if (flagged[last]) break;
        std::size_t right = last + 1;
        while (right + 1 < xs.size() && flagged[right]) ++right;
        if (flagged[right]) break;
        double above = std::numeric_limits<double>::infinity(), below = above;
        for (std::size_t i = first; i <= last; ++i) {
          above = std::min(above, level[i] - std::max(level[left], level[right]));
          below = std::min(below, std::min(level[left], level[right]) - level[i]);
        }
        if (std::max(above, below) > strongest)
          strongest = std::max(above, below), best_first = first, best_last = last, best_left = left,
          best_right = right;
      }
    }
    if (strongest == jump) break;
    for (std::size_t i = best_first; i <= best_last; ++i)
      flagged[i] = true, flanks[i] = {best_left, best_right};
  }
  std::vector<std::pair<std::size_t, std::pair<double, double>>> found;
  for (std::size_t p = 0; p < points.size(); ++p) {
    const std::size_t i = index_of(xs, points[p].first);
    if (flagged[i])
      found.push_back({p, {std::exp(level[flanks[i].first]), std::exp(level[flanks[i].second])}});
  }
  return found;
}

// Each row without its outliers; `kept_out` gets them as (row, x, seconds, neighbours).
struct KeptOut {
  double row, x, seconds, left, right;
};
ScatteredRows without_outliers(const ScatteredRows& rows, std::vector<KeptOut>* kept_out) {
  ScatteredRows kept;
  for (const auto& [row, points] : rows) {
    const auto outliers = row_outliers(points);
    std::vector<bool> out(points.size(), false);
    for (const auto& [p, neighbours] : outliers) {
      out[p] = true;
      if (kept_out != nullptr)
        kept_out->push_back({row, points[p].first, points[p].second, neighbours.first, neighbours.second});
    }
    for (std::size_t p = 0; p < points.size(); ++p)
      if (!out[p]) kept[row].push_back(points[p]);
  }
  return kept;
}

// One row of a scattered table as fitted: its first-axis value, its knots (the sizes it measured)
// and its curve above its launch floor.
struct FittedRow {
  double value;
  std::vector<double> knots;
  MonotoneCurve above_floor;
  double floor;
  double seconds(double x) const { return floor + above_floor(x); }
  bool measured(double x) const { return std::binary_search(knots.begin(), knots.end(), x); }
};

// Row r's time at x inside its range. Across a gap between the sizes the row measured, its own curve
// is a guess where the rows beside it may have measured x: the row then crosses its gap as they cross
// it, at the share of their rise (in log time) from one end of the gap to x, averaged over the
// neighbouring rows that measured x and both ends and rise monotonely across the gap. A neighbour is
// read at the same size (gaps of kWideGap or more: prefill attention's sweeps jump from 1 to 512
// tokens at some batch sizes) or, for a kernel whose work is the product of its axes, at the same
// work (every gap: a decode kernel that reads batch x context cached tokens switches mode at a
// fixed product, B200 GQA decode 12.5 -> 28.8 us from 32k to 64k tokens read at every batch size).
double seconds_in_row(const std::vector<FittedRow>& rows, std::size_t r, double x, bool product_work) {
  constexpr double kFlatRise = 1e-3;  // in log time: a neighbour this flat across the gap gives no shape
  const FittedRow& row = rows[r];
  const double own = row.seconds(x);
  if (row.measured(x)) return own;
  const auto above = std::upper_bound(row.knots.begin(), row.knots.end(), x);
  const double low = *std::prev(above), high = *above;
  if (!product_work && high < kWideGap * low) return own;
  double shares = 0;
  int neighbours = 0;
  for (const std::size_t other : {r - 1, r + 1}) {
    if (other >= rows.size()) continue;
    const FittedRow& beside = rows[other];
    const double scale = product_work ? row.value / beside.value : 1.0;  // its size at the same work
    const double at = x * scale, from = low * scale, to = high * scale;
    if (!beside.measured(at) || from < beside.knots.front() || to > beside.knots.back()) continue;
    const double at_low = std::log(beside.seconds(from)), rise = std::log(beside.seconds(to)) - at_low;
    if (!(rise > kFlatRise)) continue;
    const double share = (std::log(beside.seconds(at)) - at_low) / rise;
    if (share < 0 || share > 1) continue;
    shares += share, ++neighbours;
  }
  if (neighbours == 0) return own;
  const double at_low = std::log(row.seconds(low)), at_high = std::log(row.seconds(high));
  return std::exp(at_low + shares / neighbours * (at_high - at_low));
}

std::optional<KernelTable> table_from_rows(const KernelSpec& spec, const ScatteredRows& measured_rows,
                                           bool product_work, std::vector<KeptOut>* kept_out = nullptr) {
  const ScatteredRows rows = without_outliers(measured_rows, kept_out);
  const bool two_axes = spec.axes.size() == 2;
  const double tile = spec.tiled ? choose_tile(rows) : 1.0;
  std::vector<double> grid;
  std::map<double, std::vector<double>> fitted_knots, fitted_values;
  std::map<double, double> floors;
  for (const auto& [row, measured] : rows) {
    std::vector<std::pair<double, double>> points = measured;
    for (auto& point : points) point.first = whole_tiles(point.first, tile);
    std::vector<double> x;
    for (const auto& point : points) x.push_back(point.first);
    std::sort(x.begin(), x.end());
    if (!(x.back() > x.front())) continue;
    // A knot at every distinct measured value: kernels change tile configuration from one size to
    // the next (a GEMM of 4097 rows is not one of 4096), which coarser knots would average away.
    std::vector<double> knots = x;
    knots.erase(std::unique(knots.begin(), knots.end()), knots.end());
    double least = std::numeric_limits<double>::infinity();
    for (const auto& point : points) least = std::min(least, point.second);
    const double floor = kLaunchFloorShare * least;
    std::vector<double> log_knots, u, v;
    for (const double k : knots) log_knots.push_back(std::log(k));
    for (const auto& [px, seconds] : points)
      u.push_back(std::log(px)), v.push_back(std::log(seconds - floor));
    std::vector<double> values = fit_linear_spline(log_knots, u, v);
    // Monotone where the data is: a row whose measurements (repeats averaged) never decrease gets a
    // curve that never decreases, though the spline's curvature penalty may dip at a step. A row
    // whose measurements do dip (a kernel switching tile configuration) keeps its dips.
    if (never_decreases(points)) make_non_decreasing(values);
    fitted_knots[row] = knots;
    fitted_values[row] = values;
    floors[row] = floor;
    grid.insert(grid.end(), knots.begin(), knots.end());
  }
  // A table of two axes needs two rows (a profile's axis holds two values at least): a shape measured at
  // one EP size only (Hopper's MXFP4 MoE rows) makes none.
  if (fitted_knots.empty() || (two_axes && fitted_knots.size() < 2)) return std::nullopt;
  grid = distinct(grid);
  KernelTable table;
  table.kernel = std::string(spec.name);
  table.tile = tile;
  std::vector<double> row_values;
  std::vector<FittedRow> fitted;
  for (const auto& [row, knots] : fitted_knots) {
    row_values.push_back(row);
    std::vector<double> above_floor;
    for (const double value : fitted_values[row]) above_floor.push_back(std::exp(value));
    fitted.push_back({row, knots, MonotoneCurve(knots, above_floor), floors[row]});
  }
  // Grid points inside the row's range that are another row's knots: on the row's own curve, or
  // across a wide gap of its own shaped as its neighbours measured it.
  for (std::size_t r = 0; r < fitted.size(); ++r)
    for (const double x : grid)
      table.seconds.push_back(
          x >= fitted[r].knots.front() && x <= fitted[r].knots.back()
              ? std::optional<double>(significant_digits(seconds_in_row(fitted, r, x, product_work)))
              : std::nullopt);
  if (two_axes) table.axes.push_back({std::string(spec.axes[0]), row_values});
  table.axes.push_back({std::string(spec.axes.back()), grid});
  return table;
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

std::optional<KernelTable> fit_scattered_table(const KernelSpec& spec, const std::string& shape,
                                               const std::string& dtype, const std::string& implementation,
                                               const std::vector<KernelSample>& samples, int folds,
                                               std::vector<std::optional<double>>* predictions,
                                               std::vector<OutlierRow>* outliers) {
  const bool two_axes = spec.axes.size() == 2;
  auto rows_of = [&](auto&& keep) {
    ScatteredRows rows;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const KernelSample& s = samples[i];
      if (!keep(i) || !(s.seconds > 0) || !(s.x > 0) || (two_axes && !(s.y > 0))) continue;
      rows[two_axes ? s.x : 0].emplace_back(two_axes ? s.y : s.x, s.seconds);
    }
    return rows;
  };
  // A sliding window caps the context a decode kernel reads: its work is no product beyond it.
  const bool product_work = spec.product_work && shape_value(shape, "window").value_or(0) == 0;
  std::vector<KeptOut> kept_out;
  std::optional<KernelTable> table =
      table_from_rows(spec, rows_of([](std::size_t) { return true; }), product_work, &kept_out);
  if (!table) return std::nullopt;
  table->shape = shape;
  table->dtype = dtype;
  table->implementation = implementation;
  // The samples kept out of the whole fit are no prediction the table makes: not scored.
  const auto is_outlier = [&](const KernelSample& s) {
    return std::any_of(kept_out.begin(), kept_out.end(), [&](const KeptOut& o) {
      return o.row == (two_axes ? s.x : 0) && o.x == (two_axes ? s.y : s.x) && o.seconds == s.seconds;
    });
  };
  std::sort(kept_out.begin(), kept_out.end(), [](const KeptOut& a, const KeptOut& b) {
    return std::tie(a.row, a.x, a.seconds) < std::tie(b.row, b.x, b.seconds);
  });
  if (outliers != nullptr)
    for (const KeptOut& o : kept_out)
      outliers->push_back({table->kernel,
                           shape,
                           dtype,
                           two_axes ? std::vector{o.row, o.x} : std::vector{o.x},
                           o.seconds,
                           {o.left, o.right}});
  std::vector<double> errors;
  if (predictions != nullptr) predictions->assign(samples.size(), std::nullopt);
  for (int fold = 0; fold < folds && folds >= 2; ++fold) {
    // Samples go to folds in a fixed interleaved order (the database's row order is its own).
    const auto held_out = [&](std::size_t i) {
      return static_cast<int>(i % static_cast<std::size_t>(folds)) == fold;
    };
    const std::optional<KernelTable> without =
        table_from_rows(spec, rows_of([&](std::size_t i) { return !held_out(i); }), product_work);
    if (!without) continue;
    // Held-out points beyond 2x of what the rest measured are no test of interpolation: skipped.
    const KernelTableLookup lookup(*without, table->kernel, false);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (!held_out(i) || !(samples[i].seconds > 0) || is_outlier(samples[i])) continue;
      try {
        const double predicted = lookup.seconds(samples[i].x, samples[i].y);
        errors.push_back(relative_error(predicted, samples[i].seconds));
        if (predictions != nullptr) (*predictions)[i] = predicted;
      } catch (const InputError&) {
      }
    }
  }
  table->residuals = residuals_of(std::move(errors));
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
  // More bytes never take less time: each size is fitted at the least time of it and every larger
  // size, so that one slow small message (H200's 4-GPU all-to-all: 11.1 us at 512 B, 6.6 us at 1 KiB)
  // sets neither alpha nor the factors of the sizes beside it.
  for (std::size_t i = samples.size() - 1; i-- > 0;)
    samples[i].seconds = std::min(samples[i].seconds, samples[i + 1].seconds);

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

double nccl_bus_bytes(const std::string& collective, int ranks, double bytes) {
  const double n = ranks;
  return collective == "all_reduce" ? bytes * 2 * (n - 1) / n : bytes * (n - 1) / n;
}

double nccl_message_bytes(const std::string& collective, int ranks, double bytes) {
  return collective == "all_reduce" ? bytes : bytes / ranks;
}

}  // namespace semsim
