#pragma once
// Monotone interpolation of measured times (and bandwidth factors) over their grids. Curves are
// interpolated in log-log space, where kernel times and message-size effects are close to
// piecewise linear over decades, with Fritsch-Carlson (PCHIP) slopes: monotone wherever the data is,
// no overshoot between grid points. A step (an interval far shorter than its neighbour: 4096 to 4097
// rows, a tile boundary) sets no slope beside it: its neighbour leaves it along its own secant. Beyond the
// grid a curve continues along its trend over the last doubling of x (never downward, at most quadratic); a
// table refuses queries far outside its grid unless told otherwise.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/fit/point_memo.hpp"
#include "calibrate/format/profile.hpp"
#include "models/input_error.hpp"

namespace semsim {

class MonotoneCurve {
 public:
  // x strictly increasing and positive, y positive, at least two points.
  MonotoneCurve(std::vector<double> x, std::vector<double> y);

  double operator()(double x) const;
  double first_x() const { return x_.front(); }
  // Below the first point, a kernel's continuation: its launch floor (kLaunchFloorShare of the time
  // at the first point) plus the work above it, scaled along the curve's first doubling (between
  // flat and quadratic), as fit_scattered_table models a row. Never below the floor.
  double below_range(double x) const;
  double last_x() const { return x_.back(); }

 private:
  double end_trend(bool last) const;  // d ln y / d ln x beyond the first or last point

  std::vector<double> x_;  // as given (for the range)
  std::vector<double> u_;  // ln x
  std::vector<double> v_;  // ln y
  // dv/du at the start and the end of each interval
  std::vector<double> start_slope_, end_slope_;
};

// A collective fit's bandwidth factor by message size: interpolated between measured sizes, held at
// the end values beyond them (a bandwidth factor is bounded, so flat is the safe continuation), and
// 1 for a fit without a curve.
class BandwidthFactor {
 public:
  explicit BandwidthFactor(const CollectiveFit& fit);
  // Memoised: pairs of one step move a few distinct sizes, again and again.
  double operator()(double message_bytes) const;

 private:
  struct CacheEntry {
    double bytes;
    double factor;
  };
  std::optional<MonotoneCurve> curve_;
  double last_ = 1.0;  // the factor at and beyond the largest size
  mutable std::vector<CacheEntry> cache_;
};

// A kernel's time is a launch floor plus its work: fit_scattered_table (calibrate/fit/fit.hpp) fits rows in
// log(seconds - floor), the floor this share of the row's least time. Bending from flat to steep in log-log,
// the curve then crosses gaps between measured sizes as the kernels do (prefill attention p95 on rows left
// out: H100 22.3 %
// -> 20.9 %, H200 23.2 % -> 21.8 %; the share was chosen on H100's tables, H200's checked it).
inline constexpr double kLaunchFloorShare = 0.8;

// `x` rounded up to whole tiles; unchanged for tile 1 (fractional sizes: the MoE kernel's tokens per
// expert).
inline double whole_tiles(double x, double tile) {
  return tile > 1 ? std::ceil(x / tile) * tile : x;
}

// How far beyond its measured range a table answers without being told to extrapolate: a query
// within [first / kNearGridFactor, last * kNearGridFactor] of every axis it uses is near the grid.
inline constexpr double kNearGridFactor = 2.0;

// How a two-axis table answers beyond the work measured at its row value.
enum class BeyondWork {
  kTrend,  // the rows continue along their trends (MonotoneCurve), as near the grid as allowed
  // The larger of the time at the most work measured there (more work never takes less) and the
  // work at the best rate (most work per second) of the rows around x or of the last row (the most
  // units: the fused MoE kernel without EP), whichever is higher: a kernel's rate does not fall with
  // more work. The MoE table's rows of few experts are EP ranks the collector measured at small loads
  // only; a DeepEP rank of a wide EP group gives its few experts far more tokens each. Not the last
  // row's rate alone: with 512 experts it is still weight-bound at its largest load (an 8-expert EP
  // row continued at its rate came back 10-22x too slow at 12k-16k tokens). Not other EP rows'
  // rates: an EP row's copies include its group's remote ones, which it computes at another cost (an
  // 8-way EP rank "reaches" twice the copies per second of the whole kernel).
  kBestRate,
};

// A query far outside a measured table's grid (or between rows too far apart): an InputError that
// says which kernel and axis, and the value asked, so that the run can name what in its scenario asked,
// and the table's line in its profile file (0: not read from a file).
class CalibrationGridError : public InputError {
 public:
  CalibrationGridError(const std::string& message, std::string kernel, std::string axis, double value,
                       int table_line)
      : InputError(message),
        kernel_(std::move(kernel)),
        axis_(std::move(axis)),
        value_(value),
        table_line_(table_line) {}
  const std::string& kernel() const { return kernel_; }
  const std::string& axis() const { return axis_; }
  double value() const { return value_; }
  int table_line() const { return table_line_; }

 private:
  std::string kernel_, axis_;
  double value_;
  int table_line_;
};

// Answers "how long does this kernel take at (x0[, x1])" from a profile's KernelTable: a
// MonotoneCurve along the last axis of every row, then one across the rows that reach the query.
// Below the measured range of the last axis (the work: tokens, context, bytes) it answers the
// least work measured: small kernels are launch- or weight-bound. A tiled table's last axis is
// rounded up to whole tiles first.
class KernelTableLookup {
 public:
  // `label` names the table in errors (profile and kernel); far queries throw InputError unless
  // `allow_extrapolation`.
  KernelTableLookup(const KernelTable& table, std::string label, bool allow_extrapolation,
                    BeyondWork beyond_work = BeyondWork::kTrend);

  // Seconds at `x` on a one-axis table, or at (`x`, `y`) on a two-axis one. Memoised: the engine
  // asks the same few points again and again.
  double seconds(double x, double y = 0) const;

 private:
  double evaluate(double x, double y) const;
  double interpolate(double x, double y) const;  // y already in whole tiles and at least the least work
  // One row (two-axis tables) at y: on its curve inside its range; beyond it, from its end at the
  // ratio the rows beside it that measured both measured, else its launch floor below or trend above.
  double row_seconds(std::size_t row, double y) const;
  // kBestRate beyond the work the rows around x measured; nothing within it.
  std::optional<double> at_best_rate(double x, double y) const;
  void check_near(std::size_t axis, double value, double first, double last) const;

  std::vector<std::string> axis_names_;
  std::string kernel_;
  std::string label_;
  int table_line_;
  bool allow_extrapolation_;
  BeyondWork beyond_work_;
  double tile_;
  std::vector<double> row_values_;  // first-axis value of each row (two-axis tables)
  std::vector<MonotoneCurve> rows_;
  std::vector<double> best_rates_;  // per row, the most work per second it measured
  mutable PointMemo memo_;
};

}  // namespace semsim
