#include <algorithm>
#include <cmath>

#include "calibrate/bench/attention.hpp"
#include "calibrate/bench/check.hpp"

namespace semsim::bench {
namespace {

constexpr int kSoftmaxThreads = 256;

// Reduces `value` over the block with `op`; every thread gets the result.
template <class Op>
__device__ float block_reduce(float value, Op op, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // `shared` may still be read by a previous reduction
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  value = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) value = op(value, shared[w]);
  return value;
}

// One block per row: query token i = row % n sees keys 0 .. c - n + i.
__global__ void causal_softmax_kernel(const float* scores, __nv_bfloat16* probabilities, int rows_per_item,
                                      int new_tokens, int context, float scale) {
  __shared__ float shared[kSoftmaxThreads / 32];
  const long long row = blockIdx.x;
  const int token = static_cast<int>((row % rows_per_item) % new_tokens);
  const int last = context - new_tokens + token;
  const float* s = scores + row * context;
  __nv_bfloat16* p = probabilities + row * context;
  float largest = -INFINITY;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) largest = fmaxf(largest, s[j]);
  largest = block_reduce(
      largest, [](float a, float b) { return fmaxf(a, b); }, shared);
  float sum = 0;
  for (int j = threadIdx.x; j <= last; j += blockDim.x) sum += __expf((s[j] - largest) * scale);
  sum = block_reduce(
      sum, [](float a, float b) { return a + b; }, shared);
  for (int j = threadIdx.x; j < context; j += blockDim.x)
    p[j] = __float2bfloat16(j <= last ? __expf((s[j] - largest) * scale) / sum : 0.0f);
}

}  // namespace

int AttentionLayout::items_per_pass(long long max_elements) const {
  const long long per_item = static_cast<long long>(rows) * context;
  return static_cast<int>(std::clamp<long long>(max_elements / per_item, 1, items));
}

void attention(const BenchContext& context, const AttentionLayout& a, const __nv_bfloat16* q,
               const __nv_bfloat16* k, const __nv_bfloat16* v, float* scores, __nv_bfloat16* probabilities,
               __nv_bfloat16* out, int items_per_pass) {
  const float one = 1.0f, zero = 0.0f;
  const long long score_stride = static_cast<long long>(a.rows) * a.context;
  const float scale = 1.0f / std::sqrt(static_cast<float>(a.qk_dim));
  for (int first = 0; first < a.items; first += items_per_pass) {
    const int items = std::min(items_per_pass, a.items - first);
    // S^T [c x R] = K [c x qk] . Q^T, column-major: the "TN" GEMM over the item's keys.
    SEMSIM_CUBLAS(cublasGemmStridedBatchedEx(
        context.blas, CUBLAS_OP_T, CUBLAS_OP_N, a.context, a.rows, a.qk_dim, &one,
        k + first * a.k_item_stride, CUDA_R_16BF, a.k_stride, a.k_item_stride,
        q + static_cast<long long>(first) * a.rows * a.qk_dim, CUDA_R_16BF, a.qk_dim,
        static_cast<long long>(a.rows) * a.qk_dim, &zero, scores, CUDA_R_32F, a.context, score_stride, items,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    causal_softmax_kernel<<<static_cast<unsigned>(static_cast<long long>(items) * a.rows), kSoftmaxThreads, 0,
                            context.stream>>>(scores, probabilities, a.rows, a.new_tokens, a.context, scale);
    SEMSIM_CUDA(cudaGetLastError());
    // O^T [v x R] = V^T [v x c] . P^T [c x R].
    SEMSIM_CUBLAS(cublasGemmStridedBatchedEx(
        context.blas, CUBLAS_OP_N, CUBLAS_OP_N, a.v_dim, a.rows, a.context, &one, v + first * a.v_item_stride,
        CUDA_R_16BF, a.v_stride, a.v_item_stride, probabilities, CUDA_R_16BF, a.context, score_stride, &zero,
        out + static_cast<long long>(first) * a.rows * a.v_dim, CUDA_R_16BF, a.v_dim,
        static_cast<long long>(a.rows) * a.v_dim, items, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace semsim::bench
