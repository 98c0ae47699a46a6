#include "policies/routing_metrics.hpp"

#include <algorithm>

namespace semsim {

double load_imbalance(std::span<const long long> device_loads) {
  long long total = 0, peak = 0;
  for (long long load : device_loads) {
    total += load;
    peak = std::max(peak, load);
  }
  if (total == 0) return 1.0;
  return static_cast<double>(peak) * static_cast<double>(device_loads.size()) / static_cast<double>(total);
}

}  // namespace semsim
