#pragma once
// Attention-TP token scheduling: which rank's slice of the MoE layer each token of a step joins.
#include <vector>

#include "policies/policy_params.hpp"

namespace semsim {

const std::vector<PolicyInfo>& token_scheduling_policies();

// Vanilla: equal contiguous slices by position (the first ceil(T/R) tokens on rank 0, ...).
std::vector<int> positional_token_ranks(int tokens, int ranks);

}  // namespace semsim
