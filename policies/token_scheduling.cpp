#include "policies/token_scheduling.hpp"

namespace semsim {

const std::vector<PolicyInfo>& token_scheduling_policies() {
  static const std::vector<PolicyInfo> policies = {
      {"positional", "equal contiguous slices by position (vanilla Attention-TP)", {}},
  };
  return policies;
}

std::vector<int> positional_token_ranks(int tokens, int ranks) {
  std::vector<int> rank_of(tokens);
  const int slice = (tokens + ranks - 1) / ranks;
  for (int t = 0; t < tokens; ++t) rank_of[t] = t / slice;
  return rank_of;
}

}  // namespace semsim
