#pragma once
// The memo of a pure function of two counts (a row and a column): the step builder asks some prices
// millions of times a run at a few thousand points (the routed experts' seconds by active experts and
// token copies; DeepEP's kernel time by the busiest rank's copies). Rows indexed by the column keep
// the points of a step on a few cache lines, where a hashed memo (calibrate/fit/point_memo.hpp)
// spreads them over its slots, and recomputes a slot that two live points share for each.
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace semsim {

class IntegerMemo {
 public:
  // Columns from here on are computed at every question (a row holds 512 KiB at most).
  static constexpr long long kColumns = 1 << 16;

  // The value at (row, column): remembered, or `compute()` remembered. A throw remembers nothing.
  template <typename Compute>
  double get(std::size_t row, long long column, Compute&& compute) {
    if (column < 0 || column >= kColumns) return compute();
    if (row >= rows_.size()) rows_.resize(row + 1);
    std::vector<double>& values = rows_[row];
    const auto at = static_cast<std::size_t>(column);
    if (at >= values.size()) values.resize(std::bit_ceil(at + 1), kUnknown);
    if (std::isnan(values[at])) values[at] = compute();
    return values[at];
  }

  // Forgets the values of `row`.
  void clear(std::size_t row) {
    if (row < rows_.size()) rows_[row].clear();
  }

 private:
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<double>> rows_;  // [row][column], kUnknown where not yet computed
};

}  // namespace semsim
