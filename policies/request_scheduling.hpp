#pragma once
// Attention-DP request scheduling: which DP rank serves an arriving request. A scheduler sees only
// what a real one knows at arrival time: the request (prompt) and the ranks' current load.
#include <memory>
#include <span>

#include "policies/policy_params.hpp"
#include "workloads/request.hpp"

namespace semsim {

struct RankLoad {
  long long outstanding_tokens = 0;  // prompt tokens not yet prefilled + output tokens not yet generated
  int requests = 0;                  // queued + running
};

class RequestScheduler {
 public:
  virtual ~RequestScheduler() = default;
  virtual int choose(const Request& request, std::span<const RankLoad> ranks) = 0;
};

const std::vector<PolicyInfo>& request_scheduling_policies();
std::unique_ptr<RequestScheduler> make_request_scheduler(const PolicyChoice& choice);

}  // namespace semsim
