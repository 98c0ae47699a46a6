#pragma once
// Kernels the project writes itself around the routed experts: top-k expert selection from the
// router logits, and moving token copies into expert-contiguous order (permute) and back, summed
// with their routing weights (unpermute). Checked against CPU references in self_checks.cu.
#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/memory.hpp"

namespace semsim::bench {

constexpr int kMaxExperts = 512;  // top-k keeps one warp's registers per token
constexpr int kMaxTopK = 16;

// ids[t][j] = the j-th largest logit's expert (ties: the lower index); weights[t][j] = softmax of
// the selected logits.
void top_k(const BenchContext& context, const float* logits, int tokens, int experts, int k, int* ids,
           float* weights);

// Buffers of permutations of up to `capacity` tokens with `k` experts each, over `experts` experts.
struct Permutation {
  Permutation(int capacity, int experts, int k, int hidden);
  int capacity, experts, k, hidden;
  DeviceBuffer counts;    // int[experts]
  DeviceBuffer offsets;   // int[experts]: first row of each expert
  DeviceBuffer cursor;    // int[experts]: next free row of each expert
  DeviceBuffer row_of;    // int[tokens * k]: the row copy (t, j) went to
  DeviceBuffer token_of;  // int[tokens * k]: the token each row holds
};

// Copies of `tokens` tokens into rows of `permuted` [tokens * k x hidden] grouped by expert
// (within an expert, in no particular order); `ids` [tokens x k].
void permute(const BenchContext& context, const __nv_bfloat16* hidden_states, const int* ids, int tokens,
             Permutation& p, __nv_bfloat16* permuted);
// out[t] = sum_j weights[t][j] * expert_out[row_of[t * k + j]].
void unpermute(const BenchContext& context, const __nv_bfloat16* expert_out, const float* weights, int tokens,
               const Permutation& p, __nv_bfloat16* out);

}  // namespace semsim::bench
