#include <climits>
#include <cmath>
#include <cstdint>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/tokens.hpp"

namespace semsim::bench {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr int kExpertsPerLane = kMaxExperts / 32;

// One warp per token: k rounds of a warp-wide argmax over the logits held in registers.
__global__ void top_k_kernel(const float* logits, int tokens, int experts, int k, int* ids, float* weights) {
  const int token = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (token >= tokens) return;
  const float* row = logits + static_cast<std::size_t>(token) * experts;
  float values[kExpertsPerLane];
  for (int j = 0; j < kExpertsPerLane; ++j) {
    const int e = j * 32 + lane;
    values[j] = e < experts ? row[e] : -INFINITY;
  }
  float chosen[kMaxTopK];
  for (int round = 0; round < k; ++round) {
    float best = -INFINITY;
    int best_expert = INT_MAX;
    for (int j = 0; j < kExpertsPerLane; ++j) {
      const int e = j * 32 + lane;
      if (e < experts && (values[j] > best || (values[j] == best && e < best_expert))) {
        best = values[j];
        best_expert = e;
      }
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(kFullWarp, best, offset);
      const int other_expert = __shfl_xor_sync(kFullWarp, best_expert, offset);
      if (other > best || (other == best && other_expert < best_expert)) {
        best = other;
        best_expert = other_expert;
      }
    }
    if (best_expert % 32 == lane) values[best_expert / 32] = -INFINITY;
    chosen[round] = best;
    if (lane == 0) ids[static_cast<std::size_t>(token) * k + round] = best_expert;
  }
  if (lane != 0) return;
  float sum = 0;
  for (int round = 0; round < k; ++round) sum += __expf(chosen[round] - chosen[0]);
  for (int round = 0; round < k; ++round)
    weights[static_cast<std::size_t>(token) * k + round] = __expf(chosen[round] - chosen[0]) / sum;
}

__global__ void count_kernel(const int* ids, int copies, int* counts) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < copies; i += gridDim.x * blockDim.x)
    atomicAdd(&counts[ids[i]], 1);
}

// Experts are few (at most kMaxExperts): one thread's exclusive scan costs less than a launch.
__global__ void scan_kernel(const int* counts, int experts, int* offsets, int* cursor) {
  int start = 0;
  for (int e = 0; e < experts; ++e) {
    offsets[e] = start;
    cursor[e] = start;
    start += counts[e];
  }
}

// One block per token copy: claim the next row of its expert, then copy the hidden state.
__global__ void scatter_kernel(const __nv_bfloat16* x, const int* ids, int k, int hidden, int* cursor,
                               int* row_of, int* token_of, __nv_bfloat16* out) {
  const int copy = blockIdx.x;
  const int token = copy / k;
  __shared__ int row;
  if (threadIdx.x == 0) {
    row = atomicAdd(&cursor[ids[copy]], 1);
    row_of[copy] = row;
    token_of[row] = token;
  }
  __syncthreads();
  const __nv_bfloat16* src = x + static_cast<std::size_t>(token) * hidden;
  __nv_bfloat16* dst = out + static_cast<std::size_t>(row) * hidden;
  const int vectors = hidden % 8 == 0 ? hidden / 8 : 0;  // 16-byte moves when rows stay aligned
  for (int i = threadIdx.x; i < vectors; i += blockDim.x)
    reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  for (int i = vectors * 8 + threadIdx.x; i < hidden; i += blockDim.x) dst[i] = src[i];
}

__global__ void unpermute_kernel(const __nv_bfloat16* expert_out, const float* weights, const int* row_of,
                                 int k, int hidden, __nv_bfloat16* out) {
  const std::size_t token = blockIdx.x;
  for (int h = threadIdx.x; h < hidden; h += blockDim.x) {
    float sum = 0;
    for (int j = 0; j < k; ++j)
      sum += weights[token * k + j] *
             __bfloat162float(expert_out[static_cast<std::size_t>(row_of[token * k + j]) * hidden + h]);
    out[token * hidden + h] = __float2bfloat16(sum);
  }
}

}  // namespace

void top_k(const BenchContext& context, const float* logits, int tokens, int experts, int k, int* ids,
           float* weights) {
  if (experts > kMaxExperts || k > kMaxTopK || k > experts) throw Unsupported("top_k: too many experts or k");
  const int warps_per_block = 8;
  top_k_kernel<<<(tokens + warps_per_block - 1) / warps_per_block, warps_per_block * 32, 0, context.stream>>>(
      logits, tokens, experts, k, ids, weights);
  SEMSIM_CUDA(cudaGetLastError());
}

Permutation::Permutation(int capacity_tokens, int expert_count, int top_k, int hidden_size)
    : capacity(capacity_tokens),
      experts(expert_count),
      k(top_k),
      hidden(hidden_size),
      counts(sizeof(int) * expert_count),
      offsets(sizeof(int) * expert_count),
      cursor(sizeof(int) * expert_count),
      row_of(sizeof(int) * capacity_tokens * top_k),
      token_of(sizeof(int) * capacity_tokens * top_k) {}

void permute(const BenchContext& context, const __nv_bfloat16* hidden_states, const int* ids, int tokens,
             Permutation& p, __nv_bfloat16* permuted) {
  const int copies = tokens * p.k;
  SEMSIM_CUDA(cudaMemsetAsync(p.counts.get(), 0, p.counts.bytes(), context.stream));
  count_kernel<<<(copies + 255) / 256, 256, 0, context.stream>>>(ids, copies, p.counts.as<int>());
  scan_kernel<<<1, 1, 0, context.stream>>>(p.counts.as<int>(), p.experts, p.offsets.as<int>(),
                                           p.cursor.as<int>());
  scatter_kernel<<<copies, 128, 0, context.stream>>>(hidden_states, ids, p.k, p.hidden, p.cursor.as<int>(),
                                                     p.row_of.as<int>(), p.token_of.as<int>(), permuted);
  SEMSIM_CUDA(cudaGetLastError());
}

void unpermute(const BenchContext& context, const __nv_bfloat16* expert_out, const float* weights, int tokens,
               const Permutation& p, __nv_bfloat16* out) {
  unpermute_kernel<<<tokens, 256, 0, context.stream>>>(expert_out, weights, p.row_of.as<int>(), p.k, p.hidden,
                                                       out);
  SEMSIM_CUDA(cudaGetLastError());
}

}  // namespace semsim::bench
