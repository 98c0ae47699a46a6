#include "policies/semmoe_token_scheduling.hpp"

#include <algorithm>

namespace semsim {

std::vector<int> align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence,
                                       int ranks) {
  const auto tokens = static_cast<int>(predicted.size());
  std::vector<int> capacity(ranks, tokens / ranks);
  for (int r = 0; r < tokens % ranks; ++r) ++capacity[r];
  std::vector<std::vector<int>> wanted(ranks);
  for (int t = 0; t < tokens; ++t)
    if (predicted[t] >= 0) wanted[predicted[t]].push_back(t);
  std::vector<int> rank(tokens, -1);
  for (int r = 0; r < ranks; ++r) {
    auto& list = wanted[r];
    const auto keep = static_cast<std::ptrdiff_t>(std::min<std::size_t>(list.size(), capacity[r]));
    if (static_cast<std::size_t>(keep) < list.size())
      std::nth_element(list.begin(), list.begin() + keep, list.end(), [&](int a, int b) {
        return confidence[a] != confidence[b] ? confidence[a] > confidence[b] : a < b;
      });
    for (std::ptrdiff_t i = 0; i < keep; ++i) rank[list[i]] = r;
    capacity[r] -= static_cast<int>(keep);
  }
  int open = 0;
  for (int t = 0; t < tokens; ++t) {
    if (rank[t] >= 0) continue;
    while (capacity[open] == 0) ++open;
    rank[t] = open;
    --capacity[open];
  }
  return rank;
}

}  // namespace semsim
