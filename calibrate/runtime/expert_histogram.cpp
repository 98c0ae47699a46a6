#include "calibrate/runtime/expert_histogram.hpp"

#include <cmath>
#include <numeric>

namespace semsim {

std::vector<int> expert_histogram(int active, long long tokens, bool skewed) {
  std::vector<int> counts(active, static_cast<int>(tokens / active));
  for (int i = 0; i < tokens % active; ++i) ++counts[i];
  if (!skewed || active == 1) return counts;
  // One token each, the rest by weight (rounded down), what rounding leaves one each to the hottest:
  // never increasing from one expert to the next.
  std::vector<double> weight(active);
  for (int i = 0; i < active; ++i) weight[i] = std::pow(i + 1.0, -1.2);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  const long long spare = tokens - active;
  long long left = spare;
  for (int i = 0; i < active; ++i) {
    const auto share = static_cast<long long>(std::floor(static_cast<double>(spare) * weight[i] / total));
    counts[i] = static_cast<int>(1 + share);
    left -= share;
  }
  for (int i = 0; left > 0; ++i, --left) ++counts[i];
  return counts;
}

}  // namespace semsim
