#include "policies/prefix_aware_scheduler.hpp"

namespace semsim {

int PrefixAwareScheduler::choose(const Request&, std::span<const std::int32_t>,
                                 std::span<const RankLoad> ranks) {
  long double total = 0;
  for (const RankLoad& rank : ranks) total += static_cast<long double>(rank.outstanding_tokens);
  const long double cap = load_cap_ * total / static_cast<long double>(ranks.size());
  int best = -1;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const RankLoad& rank = ranks[r];
    if (static_cast<long double>(rank.outstanding_tokens) > cap) continue;
    if (best < 0 || rank.cached_prefix_tokens > ranks[best].cached_prefix_tokens ||
        (rank.cached_prefix_tokens == ranks[best].cached_prefix_tokens &&
         rank.outstanding_tokens < ranks[best].outstanding_tokens))
      best = r;
  }
  return best;
}

}  // namespace semsim
