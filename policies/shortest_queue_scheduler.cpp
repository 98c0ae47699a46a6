#include "policies/shortest_queue_scheduler.hpp"

namespace semsim {

int ShortestQueueScheduler::choose(const Request&, std::span<const std::int32_t>,
                                   std::span<const RankLoad> ranks) {
  int best = 0;
  for (int rank = 1; rank < static_cast<int>(ranks.size()); ++rank)
    if (ranks[rank].outstanding_tokens < ranks[best].outstanding_tokens) best = rank;
  return best;
}

}  // namespace semsim
