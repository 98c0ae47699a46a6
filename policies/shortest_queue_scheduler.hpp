#pragma once
#include "policies/request_scheduling.hpp"

namespace semsim {

// The rank with the fewest outstanding tokens (lowest index on ties).
class ShortestQueueScheduler final : public RequestScheduler {
 public:
  int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
             std::span<const RankLoad> ranks) override;
};

}  // namespace semsim
