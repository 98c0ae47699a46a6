#pragma once
// Sem-MoE's Attention-TP token reshuffle (design.md, online intra-request scheduling): tokens go to
// their predicted devices, then the step is aligned so every rank gets an equal slice (the shuffled
// reduce-scatter needs equal shards).
#include <span>
#include <vector>

namespace semsim {

// Rank of each token, every rank holding T/R tokens (the first T mod R ranks one more). Stated
// overflow rule: a rank keeps the tokens predicted for it in decreasing confidence (ties: earlier
// token) up to its slice; the tokens it cannot keep and those without a prediction (-1) then fill
// the ranks with room, in token order, lowest rank first. O(T) expected.
std::vector<int> align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence,
                                       int ranks);

}  // namespace semsim
