#include "workloads/alias_table.hpp"

#include <stdexcept>

namespace semsim {

AliasTable::AliasTable(const std::vector<double>& weights) {
  const int n = static_cast<int>(weights.size());
  double total = 0;
  for (double w : weights) {
    if (!(w >= 0)) throw std::invalid_argument("alias table weights must be non-negative");
    total += w;
  }
  if (n == 0 || !(total > 0)) throw std::invalid_argument("alias table needs a positive total weight");
  probability_.assign(n, 0.0);
  alias_.assign(n, 0);
  std::vector<double> scaled(n);
  std::vector<int> small, large;
  for (int i = 0; i < n; ++i) {
    scaled[i] = weights[i] * n / total;
    (scaled[i] < 1.0 ? small : large).push_back(i);
  }
  while (!small.empty() && !large.empty()) {
    const int s = small.back();
    small.pop_back();
    const int l = large.back();
    probability_[s] = scaled[s];
    alias_[s] = l;
    scaled[l] -= 1.0 - scaled[s];
    if (scaled[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (int i : large) probability_[i] = 1.0;
  for (int i : small) probability_[i] = 1.0;  // numerical leftovers
  remainder_factor_ = ~std::uint64_t{0} / static_cast<std::uint64_t>(n) + 1;
}

}  // namespace semsim
