#pragma once
#include "policies/request_scheduling.hpp"

namespace semsim {

// Cache-aware Attention-DP scheduling (serving.prefix_cache): the request goes to the rank whose
// prefix cache holds most of its prompt, among ranks not overloaded — outstanding tokens at most
// load_cap x the ranks' mean — so a popular prefix does not pile its requests onto one rank. Ties
// (no hit anywhere, among them): fewest outstanding tokens, then lowest index. The least loaded rank
// always qualifies, so with no cache hit it is shortest_queue.
class PrefixAwareScheduler final : public RequestScheduler {
 public:
  explicit PrefixAwareScheduler(double load_cap) : load_cap_(load_cap) {}
  int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
             std::span<const RankLoad> ranks) override;

 private:
  double load_cap_;
};

}  // namespace semsim
