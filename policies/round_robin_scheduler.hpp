#pragma once
#include "policies/request_scheduling.hpp"

namespace semsim {

// Request i goes to rank i mod D (SGLang's default DP dispatch).
class RoundRobinScheduler final : public RequestScheduler {
 public:
  int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
             std::span<const RankLoad> ranks) override;

 private:
  long long next_ = 0;
};

}  // namespace semsim
