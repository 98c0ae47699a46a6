#pragma once
// The routed experts of one MoE layer on one device: a SwiGLU FFN per expert over that expert's
// tokens, contiguous by expert (as after a permute). BF16 runs as two cublasGemmGroupedBatchedEx
// calls (gate/up, then down) around one activation; FP8 as a cuBLASLt GEMM per expert (cuBLAS has
// no FP8 grouped GEMM), which launch overhead makes slower than a real grouped FP8 kernel.
#include <cublas_v2.h>

#include <vector>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/memory.hpp"

namespace semsim::bench {

// Every expert's weights ([experts][2 ffn][hidden] and [experts][hidden][ffn]) and activations for
// `capacity` token copies.
struct ExpertsState {
  ExpertsState(const BenchContext& context, int experts, int hidden, int ffn, long long capacity, DType type);
  int experts, hidden, ffn;
  DType type;
  DeviceBuffer up, down, x, gate_up, activated, y;
};

// The arguments of one grouped GEMM call over the active experts (one group per expert).
struct GroupedCall {
  GroupedCall(const std::vector<int>& tokens, int rows, int depth);
  void run(const BenchContext& context, void* const* w, void* const* x, void* const* y) const;

  std::vector<cublasOperation_t> transa, transb;
  std::vector<int> m, n, k, lda, ldb, ldc, group_size;
  std::vector<float> alpha, beta;
};

// One histogram: the experts it runs, rotated through all of them so that a small set of experts
// does not sit in L2 across launches, and the device pointer arrays of the grouped calls.
struct ExpertsCase {
  ExpertsCase(const BenchContext& context, const ExpertsState& state, std::vector<int> tokens_per_expert);

  std::vector<int> tokens;                // per active expert
  std::vector<long long> first_row;       // per active expert
  std::vector<std::vector<int>> experts;  // per rotation: the experts that are active
  GroupedCall up, down;
  DeviceBuffer
      pointers;  // BF16: [rotation][active] up, [rotation][active] down, then x, gate_up, activated, y

  long long rows() const { return first_row.back() + tokens.back(); }
};

void run_routed_experts(const BenchContext& context, ExpertsState& state, const ExpertsCase& one,
                        long iteration);

}  // namespace semsim::bench
