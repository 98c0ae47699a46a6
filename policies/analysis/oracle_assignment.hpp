#pragma once
// Assignments made knowing each item's routing: how many activations a placement lets stay local
// when a token's (TP) or request's (DP) device is chosen with hindsight, under the schedulers' own
// load rules. They are feasible assignments, so their LAR is reachable with that placement and no
// valid upper bound on LAR can lie below it: placement_evaluation reports them beside the
// predicted LAR (what prediction loses) and the upper bound (what the bound may overstate).
#include <span>
#include <vector>

namespace semsim {

// TP: the most local activations reachable when items go to devices with at most `capacity` items
// per device (devices × capacity >= items), where local[i * devices + d] is item i's local
// activations on device d. Exact: a transportation problem, items with equal rows merged, solved
// by CLP (its constraint matrix is totally unimodular, so the optimal vertex is integral).
long long best_capacitated_assignment(std::span<const int> local, int devices, long long capacity);

// DP: requests to devices with hindsight, each device's token load within `cap`: the better of
// `start` (the scheduler's assignment; it may exceed `cap`) and a greedy that places requests by
// decreasing regret (best minus second-best local activations) on their best device with room,
// each then improved by moves and pairwise swaps that gain while no load passes `cap`; of the two,
// one within `cap` first, then the more local. local[r * devices + d]: request r's local activations
// on d over all layers; size[r]: its tokens. Not proven optimal (the problem is a generalised
// assignment), but never below `start`'s local activations when `start` is within `cap`.
std::vector<int> hindsight_request_assignment(std::span<const long long> local,
                                              std::span<const long long> size, int devices, double cap,
                                              std::vector<int> start);

}  // namespace semsim
