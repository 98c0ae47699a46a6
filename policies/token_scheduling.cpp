#include "policies/token_scheduling.hpp"

#include <algorithm>

namespace semsim {

void positional_token_ranks(int ranks, std::span<int> rank) {
  const std::size_t tokens = rank.size();
  const std::size_t slice = (tokens + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
  for (std::size_t first = 0, r = 0; first < tokens; first += slice, ++r)
    std::fill_n(rank.begin() + static_cast<std::ptrdiff_t>(first), std::min(slice, tokens - first),
                static_cast<int>(r));
}

void PositionalTokenScheduler::assign(int, std::span<const std::int32_t> token_ids, std::span<const int>,
                                      std::vector<int>& rank) {
  rank.resize(token_ids.size());
  positional_token_ranks(ranks_, rank);
}

int SemMoeTpTokenScheduler::history(int layer) const {
  return std::min(plan_.inter_layer.lookback, layer);
}

void SemMoeTpTokenScheduler::assign(int layer, std::span<const std::int32_t> token_ids,
                                    std::span<const int> previous_devices, std::vector<int>& rank) {
  reshuffle_tokens(plan_, layer, token_ids, previous_devices, history(layer), ranks_, reshuffle_);
  rank.assign(reshuffle_.rank.begin(), reshuffle_.rank.end());
}

}  // namespace semsim
