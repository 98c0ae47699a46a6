#pragma once
// Sem-MoE's Attention-TP token reshuffle (design.md, online intra-request scheduling): at each MoE
// layer every token of the step is predicted a device (T if T_p > A_p else A), then the step is
// aligned so every rank gets an equal slice, as the shuffled reduce-scatter needs equal shards.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement_plan.hpp"
#include "policies/token_device_prediction.hpp"

namespace semsim {

// Writes each token's rank, every rank holding at most ceil(T/R) tokens: the collectives pad every
// slice to that size, so a small step (a lone decode token) can still go to its predicted rank.
// Stated overflow rule: a rank keeps the tokens predicted for it in decreasing confidence (ties:
// earlier token) up to ceil(T/R); the tokens it cannot keep and those without a prediction (-1)
// then fill the ranks with room, in token order, lowest rank first. Confidences must be >= 0.
// O(T) expected; `scratch` and `keys` are working memory reused across calls.
void align_to_equal_slices(std::span<const int> predicted, std::span<const float> confidence, int ranks,
                           std::span<int> rank, std::vector<int>& scratch, std::vector<std::uint32_t>& keys);

// One reshuffle's outputs and working memory (reused across calls: no allocation once warm).
struct TokenReshuffle {
  std::vector<int> predicted;  // per token: predicted device, -1 without a prediction
  std::vector<float> confidence;
  std::vector<DeviceBasis> basis;
  std::vector<int> rank;  // per token: the rank after alignment
  std::vector<int> scratch;
  std::vector<std::uint32_t> keys;
};

// `previous_devices[token * history + b]` is the token's majority device at layer-1-b (its
// observed routing at the previous layers).
void reshuffle_tokens(const PlacementPlan& plan, int layer, std::span<const std::int32_t> token_ids,
                      std::span<const int> previous_devices, int history, int ranks, TokenReshuffle& out);

}  // namespace semsim
