#pragma once
// Quantiles, linear between order statistics: shared by the fitter (residuals) and the
// microbenchmarks (trial times), which build without the rest of the project.
#include <algorithm>
#include <vector>

namespace semsim {

// The q-quantile (q in [0, 1]) of non-empty `sorted` values.
inline double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(rank);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (rank - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

inline double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  return sorted_quantile(values, q);
}

}  // namespace semsim
