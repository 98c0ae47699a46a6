#include "calibrate/fit/interpolation.hpp"

#include <bit>
#include <cstdint>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace semsim {
namespace {

double sign(double v) {
  return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
}

// End-point slope of a PCHIP curve (the shape-preserving three-point formula).
double end_slope(double h0, double h1, double d0, double d1) {
  const double slope = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
  if (sign(slope) != sign(d0)) return 0.0;
  if (sign(d0) != sign(d1) && std::abs(slope) > 3 * std::abs(d0)) return 3 * d0;
  return slope;
}

}  // namespace

double MonotoneCurve::below_range(double x) const {
  // The launch floor as the fit takes it, and the work above it along the row's first doubling.
  const double first = x_.front(), at_first = std::exp(v_.front());
  const double floor = kLaunchFloorShare * at_first;
  const double next = std::min(2 * first, x_.back()), at_next = (*this)(next);
  const double slope =
      at_next > at_first
          ? std::min(std::log((at_next - floor) / (at_first - floor)) / std::log(next / first), 2.0)
          : 0.0;
  return floor + (at_first - floor) * std::pow(x / first, slope);
}

MonotoneCurve::MonotoneCurve(std::vector<double> x, std::vector<double> y) : x_(std::move(x)) {
  const std::size_t n = x_.size();
  if (n < 2 || y.size() != n) throw std::invalid_argument("MonotoneCurve: needs at least two (x, y) points");
  for (std::size_t i = 0; i < n; ++i) {
    if (!(x_[i] > 0) || !(y[i] > 0) || (i > 0 && !(x_[i] > x_[i - 1])))
      throw std::invalid_argument("MonotoneCurve: x must increase strictly, x and y must be positive");
    u_.push_back(std::log(x_[i]));
    v_.push_back(std::log(y[i]));
  }
  std::vector<double> h(n - 1), secant(n - 1);
  for (std::size_t k = 0; k + 1 < n; ++k) {
    h[k] = u_[k + 1] - u_[k];
    secant[k] = (v_[k + 1] - v_[k]) / h[k];
  }
  std::vector<double> slope(n, secant[0]);
  start_slope_.assign(n - 1, secant[0]);
  end_slope_.assign(n - 1, secant[0]);
  if (n == 2) return;  // a straight segment
  for (std::size_t k = 1; k + 1 < n; ++k) {
    // Weighted harmonic mean of the neighbouring secants (Fritsch-Butland), zero at a local extremum:
    // this keeps every interval monotone where its data is.
    if (secant[k - 1] * secant[k] <= 0) {
      slope[k] = 0;
    } else {
      const double w1 = 2 * h[k] + h[k - 1];
      const double w2 = h[k] + 2 * h[k - 1];
      slope[k] = (w1 + w2) / (w1 / secant[k - 1] + w2 / secant[k]);
    }
  }
  slope[0] = end_slope(h[0], h[1], secant[0], secant[1]);
  slope[n - 1] = end_slope(h[n - 2], h[n - 3], secant[n - 2], secant[n - 3]);
  constexpr double kStep = 0.1;  // an interval this much shorter than its neighbour is a step
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const bool step_before = k > 0 && h[k - 1] < kStep * h[k];
    const bool step_after = k + 2 < n && h[k + 1] < kStep * h[k];
    const bool is_step = (k > 0 && h[k] < kStep * h[k - 1]) || (k + 2 < n && h[k] < kStep * h[k + 1]);
    start_slope_[k] = is_step || step_before ? secant[k] : slope[k];
    end_slope_[k] = is_step || step_after ? secant[k] : slope[k + 1];
  }
}

double MonotoneCurve::end_trend(bool last) const {
  // Over at least a doubling of x: the last two points may be a tile step apart (4096 and 4097
  // rows), whose jump is no trend. Never downward, and no steeper than quadratic (causal attention
  // over its prompt), so that nothing runs away within the reach of extrapolation.
  const std::size_t n = u_.size();
  const std::size_t end = last ? n - 1 : 0;
  std::size_t other = last ? 0 : n - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t k = last ? n - 1 - i : i;
    if (std::abs(u_[end] - u_[k]) >= std::log(2.0)) {
      other = k;
      break;
    }
  }
  return std::clamp((v_[end] - v_[other]) / (u_[end] - u_[other]), 0.0, 2.0);
}

double MonotoneCurve::operator()(double x) const {
  const double u = std::log(x);
  if (u <= u_.front()) return std::exp(v_.front() + end_trend(false) * (u - u_.front()));
  if (u >= u_.back()) return std::exp(v_.back() + end_trend(true) * (u - u_.back()));
  const std::size_t k = static_cast<std::size_t>(std::upper_bound(u_.begin(), u_.end(), u) - u_.begin()) - 1;
  const double h = u_[k + 1] - u_[k];
  const double t = (u - u_[k]) / h;
  const double t2 = t * t, t3 = t2 * t;
  const double v = (2 * t3 - 3 * t2 + 1) * v_[k] + (t3 - 2 * t2 + t) * h * start_slope_[k] +
                   (-2 * t3 + 3 * t2) * v_[k + 1] + (t3 - t2) * h * end_slope_[k];
  return std::exp(v);
}

BandwidthFactor::BandwidthFactor(const CollectiveFit& fit) {
  if (fit.factor.empty()) return;
  curve_.emplace(fit.factor_bytes, fit.factor);
  last_ = fit.factor.back();
  cache_.assign(4096, CacheEntry{-1.0, 0.0});
}

double BandwidthFactor::operator()(double message_bytes) const {
  if (!curve_) return 1.0;
  if (message_bytes >= curve_->last_x()) return last_;
  // A direct-mapped cache: far cheaper than a hash map, and pairs repeat a few sizes.
  const auto bits = std::bit_cast<std::uint64_t>(message_bytes);
  CacheEntry& entry = cache_[(bits * 0x9E3779B97F4A7C15ULL) >> 52];  // 4096 entries
  if (entry.bytes != message_bytes)
    entry = {message_bytes, (*curve_)(std::max(message_bytes, curve_->first_x()))};
  return entry.factor;
}

KernelTableLookup::KernelTableLookup(const KernelTable& table, std::string label, bool allow_extrapolation,
                                     BeyondWork beyond_work)
    : kernel_(table.kernel),
      label_(std::move(label)),
      table_line_(table.line),
      allow_extrapolation_(allow_extrapolation),
      beyond_work_(beyond_work),
      tile_(table.tile) {
  for (const TableAxis& axis : table.axes) axis_names_.push_back(axis.name);
  const std::vector<double>& columns = table.axes.back().values;
  const std::size_t rows = table.axes.size() == 1 ? 1 : table.axes[0].values.size();
  for (std::size_t row = 0; row < rows; ++row) {
    std::vector<double> x, y;
    double best_rate = 0;
    for (std::size_t column = 0; column < columns.size(); ++column) {
      if (const auto& seconds = table.seconds[row * columns.size() + column]) {
        x.push_back(columns[column]);
        y.push_back(*seconds);
        best_rate = std::max(best_rate, columns[column] / *seconds);
      }
    }
    rows_.emplace_back(std::move(x), std::move(y));
    best_rates_.push_back(best_rate);
    if (table.axes.size() > 1) row_values_.push_back(table.axes[0].values[row]);
  }
}

void KernelTableLookup::check_near(std::size_t axis, double value, double first, double last) const {
  if (allow_extrapolation_ || (value >= first / kNearGridFactor && value <= last * kNearGridFactor)) return;
  throw CalibrationGridError(
      fmt::format("{}: {} = {} is far outside the measured grid [{}, {}] (more than {}x beyond it); measure "
                  "it, or set calibration.extrapolate: true to extrapolate",
                  label_, axis_names_[axis], value, first, last, kNearGridFactor),
      kernel_, axis_names_[axis], value, table_line_);
}

double KernelTableLookup::seconds(double x, double y) const {
  return memo_.get(x, y, [&] { return evaluate(x, y); });
}

double KernelTableLookup::evaluate(double x, double y) const {
  double& work = row_values_.empty() ? x : y;
  work = whole_tiles(work, tile_);
  // Below the measured range of the last axis (tokens, context, bytes: the work) a kernel is
  // launch- or weight-bound: it takes as long as the least work measured.
  if (row_values_.empty()) {
    x = std::max(x, rows_[0].first_x());
    check_near(0, x, rows_[0].first_x(), rows_[0].last_x());
    return rows_[0](x);
  }
  double least = rows_[0].first_x();
  for (const MonotoneCurve& row : rows_) least = std::min(least, row.first_x());
  y = std::max(y, least);
  if (const std::optional<double> seconds = at_best_rate(x, y)) return *seconds;
  return interpolate(x, y);
}

std::optional<double> KernelTableLookup::at_best_rate(double x, double y) const {
  if (beyond_work_ != BeyondWork::kBestRate || x < row_values_.front() || x > row_values_.back())
    return std::nullopt;
  // The rows on either side of x, and the most work both measured.
  const auto above = std::lower_bound(row_values_.begin(), row_values_.end(), x) - row_values_.begin();
  const auto below = row_values_[above] == x ? above : above - 1;
  const double reached = std::min(rows_[below].last_x(), rows_[above].last_x());
  if (y <= reached) return std::nullopt;
  const double rate = std::max({best_rates_[below], best_rates_[above], best_rates_.back()});
  return std::max(interpolate(x, reached), y / rate);
}

double KernelTableLookup::row_seconds(std::size_t row, double y) const {
  const MonotoneCurve& curve = rows_[row];
  if (y >= curve.first_x() && y <= curve.last_x()) return curve(y);
  // Beyond its range a row grows from its end as the rows beside it that measured both grow (the log
  // ratio, averaged): a kernel's law along its work carries across neighbouring rows where its own
  // trend or launch floor is a guess.
  const double end = y < curve.first_x() ? curve.first_x() : curve.last_x();
  double log_ratio = 0;
  int neighbours = 0;
  for (const std::size_t other : {row - 1, row + 1}) {
    if (other >= rows_.size()) continue;
    const MonotoneCurve& beside = rows_[other];
    if (std::min(y, end) < beside.first_x() || std::max(y, end) > beside.last_x()) continue;
    log_ratio += std::log(beside(y) / beside(end)), ++neighbours;
  }
  if (neighbours > 0) return curve(end) * std::exp(log_ratio / neighbours);
  return y < curve.first_x() ? curve.below_range(y) : curve(y);
}

double KernelTableLookup::interpolate(double x, double y) const {
  // The rows near y (rows of a triangular grid start or stop at different columns), each at y
  // (row_seconds), then interpolated across at x; where rows that measured y lie on both sides of x
  // (or at x), those alone: a row continued beyond its own range is a guess the rows around it
  // measured.
  std::vector<double> across_x, across_seconds;
  std::vector<double> measured_x, measured_seconds;
  double first = rows_[0].first_x(), last = rows_[0].last_x();
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    first = std::min(first, rows_[row].first_x());
    last = std::max(last, rows_[row].last_x());
    if (allow_extrapolation_ ||
        (y >= rows_[row].first_x() / kNearGridFactor && y <= rows_[row].last_x() * kNearGridFactor)) {
      across_x.push_back(row_values_[row]);
      across_seconds.push_back(row_seconds(row, y));
      if (y >= rows_[row].first_x() && y <= rows_[row].last_x())
        measured_x.push_back(across_x.back()), measured_seconds.push_back(across_seconds.back());
    }
  }
  check_near(1, y, first, last);
  if (!measured_x.empty() && measured_x.front() <= x && measured_x.back() >= x &&
      (measured_x.size() > 1 || measured_x.front() == x))
    across_x = std::move(measured_x), across_seconds = std::move(measured_seconds);
  if (!across_x.empty()) check_near(0, x, across_x.front(), across_x.back());
  if (across_x.size() == 1 && across_x[0] == x) return across_seconds[0];
  if (across_x.size() < 2)
    throw CalibrationGridError(fmt::format("{}: no measured rows near {} = {} to interpolate {} = {} from",
                                           label_, axis_names_[1], y, axis_names_[0], x),
                               kernel_, axis_names_[1], y, table_line_);
  return MonotoneCurve(std::move(across_x), std::move(across_seconds))(x);
}

}  // namespace semsim
