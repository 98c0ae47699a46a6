#pragma once
// Attention-TP token scheduling: which rank's slice of the MoE layer each token of a step joins.
#include <vector>

#include "policies/placement_plan.hpp"
#include "policies/policy_params.hpp"

namespace semsim {

const std::vector<PolicyInfo>& token_scheduling_policies();

// Vanilla: equal contiguous slices by position (the first ceil(T/R) tokens on rank 0, ...).
std::vector<int> positional_token_ranks(int tokens, int ranks);

// Whether `choice` reshuffles tokens by Sem-MoE's tables (policies/semmoe_token_scheduling.hpp).
bool reshuffles_tokens(const PolicyChoice& choice);
// InputError when `choice` needs a table the plan lacks (semmoe_tp reads the token→device table T).
void check_token_scheduling(const PolicyChoice& choice, const PlacementPlan& plan);

}  // namespace semsim
