#include "workloads/load_imbalance.hpp"

#include <algorithm>

namespace semsim {

double load_imbalance(std::span<const long long> loads) {
  long long total = 0, peak = 0;
  for (long long load : loads) {
    total += load;
    peak = std::max(peak, load);
  }
  if (total == 0) return 1.0;
  return static_cast<double>(peak) * static_cast<double>(loads.size()) / static_cast<double>(total);
}

}  // namespace semsim
