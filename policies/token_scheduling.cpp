#include "policies/token_scheduling.hpp"

#include "models/input_error.hpp"

namespace semsim {

const std::vector<PolicyInfo>& token_scheduling_policies() {
  static const std::vector<PolicyInfo> policies = {
      {"positional", "equal contiguous slices by position (vanilla Attention-TP)", {}},
      {"semmoe_tp",
       "Sem-MoE: per token T if T_p > A_p else A, aligned to equal slices (shuffled reduce-scatter)",
       {}},
  };
  return policies;
}

std::vector<int> positional_token_ranks(int tokens, int ranks) {
  std::vector<int> rank_of(tokens);
  const int slice = (tokens + ranks - 1) / ranks;
  for (int t = 0; t < tokens; ++t) rank_of[t] = t / slice;
  return rank_of;
}

bool reshuffles_tokens(const PolicyChoice& choice) {
  return choice.name == "semmoe_tp";
}

void check_token_scheduling(const PolicyChoice& choice, const PlacementPlan& plan) {
  if (reshuffles_tokens(choice) && plan.token_devices.empty())
    throw InputError("token scheduling '" + choice.name +
                     "' needs the placement's token→device table: a profile-driven placement (semmoe, ...) "
                     "or a placement file that has one");
}

}  // namespace semsim
