#pragma once
// coact placement: per MoE layer, the experts' co-activation graph (edge a-b weighted by the
// profiled tokens routed to both) cut into D parts by METIS (k-way, seeded), then repaired to
// exactly N/D experts per part. Experts that fire together end up on the same device, so a token's
// top-k tends to be local to one device; token assignment is left to the schedulers. Each layer's
// parts are then numbered to agree with the previous layer's devices for the profiled tokens, so a
// request kept on one device (Attention-DP) finds its experts there layer after layer.
#include <vector>

#include "policies/placement_policies.hpp"

namespace semsim {

// Part of each of `experts` vertices, exactly experts/parts per part. `weight` is the symmetric
// edge weight matrix (experts x experts, row-major, diagonal ignored); `seed` seeds METIS.
std::vector<int> balanced_graph_partition(const std::vector<long long>& weight, int experts, int parts,
                                          int seed);

// Registered as "coact" (param: seed).
PlacementResult coact_placement(const PlacementInput& input, const PolicyChoice& choice);

}  // namespace semsim
