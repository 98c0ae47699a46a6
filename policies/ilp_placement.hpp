#pragma once
// ilp placement: per MoE layer, the exact co-clustering of the J most frequent profiled tokens and
// the experts (Sem-MoE's objective without the load term, the load as a hard constraint), solved by
// CBC. The model has N·D + J·D binaries and J·D continuous columns:
//   x[k,d] = expert k on device d, y[j,d] = token j on device d,
//   v[j,d] = token j's local activations on d: v <= Σ_k T[j,k]·x[k,d], v <= A_j·y[j,d]  (A_j = Σ_k T[j,k])
//   maximise  Σ v[j,d]   (local activations of the modelled tokens)
//   s.t. Σ_d x[k,d] = 1, Σ_k x[k,d] = N/D, Σ_d y[j,d] = 1,
//        Σ_j occ_j·y[j,d] <= max(balance·Σ_j occ_j / D, max_j occ_j)   (one token always fits)
//        x[0,0] = 1 (devices are interchangeable)
// (The per-(token, expert, device) linearisation z <= x, z <= y has the same integer optimum and the
// same LP bound, with nnz(T)·D columns: at 64 tokens its root LP alone outlasted any time limit.)
// time_limit is wall-clock seconds per layer, root LP included, as CBC checks it between its stages.
// Single-threaded with a fixed seed; a layer that hits the time limit keeps CBC's best solution
// (at worst the greedy start), so only runs that prove optimality everywhere are reproducible.
#include "policies/placement_policies.hpp"

namespace semsim {

// Registered as "ilp" (params: tokens, balance, time_limit). PlacementResult.solver: objective and
// best_bound (local activations of the modelled tokens, summed over layers), gap ((best_bound −
// objective) / best_bound of those sums), max_layer_gap (the worst layer's relative gap),
// optimal_layers. token_devices holds the modelled tokens' devices (-1 for every other token) with
// confidence = the share of the token's profiled activations its device hosts. A profile without
// token identities gets coact's placement, with solver coact_without_token_identities = 1.
PlacementResult ilp_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
