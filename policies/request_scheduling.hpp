#pragma once
// Attention-DP request scheduling: which DP rank serves an arriving request. A scheduler sees only
// what a real one knows at arrival time: the request, its prompt's token ids and the ranks' current
// load — never the routing the request will take. Built by make_request_scheduler
// (policies/policy_registry.hpp).
#include <cstdint>
#include <span>

#include "workloads/request.hpp"

namespace semsim {

struct RankLoad {
  long long outstanding_tokens = 0;  // prompt tokens not yet prefilled + output tokens not yet generated
  int requests = 0;                  // queued + running
  // The arriving request's prompt tokens the rank's prefix cache holds (serving.prefix_cache; 0
  // without): prefill it would skip there.
  long long cached_prefix_tokens = 0;

  // A request given to the rank, with the tokens it will process there: all of them outstanding.
  void add(long long tokens) {
    outstanding_tokens += tokens;
    ++requests;
  }
};

class RequestScheduler {
 public:
  virtual ~RequestScheduler() = default;
  // Whether choose() reads `prompt_tokens` (the caller may skip computing them otherwise).
  virtual bool reads_prompt() const { return false; }
  // `prompt_tokens`: the prompt's vocabulary ids (-1 unknown), empty unless reads_prompt().
  virtual int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
                     std::span<const RankLoad> ranks) = 0;
};

}  // namespace semsim
