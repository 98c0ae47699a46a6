#include "policies/round_robin_scheduler.hpp"

namespace semsim {

int RoundRobinScheduler::choose(const Request&, std::span<const std::int32_t>,
                                std::span<const RankLoad> ranks) {
  return static_cast<int>(next_++ % static_cast<long long>(ranks.size()));
}

}  // namespace semsim
