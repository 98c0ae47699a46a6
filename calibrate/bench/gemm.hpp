#pragma once
// GEMMs as the model runs them: Y[t x n] = X[t x k] W^T with W stored [n x k] (the nn.Linear
// layout), i.e. cuBLAS's column-major "TN" form, the one FP8 tensor cores require. BF16 through
// cublasGemmEx, FP8 (E4M3 in, BF16 out) through cublasLtMatmul; and the SwiGLU activation between
// an FFN's gate/up and down projections.
#include <cublasLt.h>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/memory.hpp"

namespace semsim::bench {

// BF16 inputs; `out` is kBf16 or kF32.
void gemm_bf16(const BenchContext& context, const void* w, const void* x, void* y, int n, int t, int k,
               DType out);

// One FP8 GEMM shape with the algorithm cuBLASLt picked for it; Unsupported when there is none.
class Fp8Gemm {
 public:
  Fp8Gemm(const BenchContext& context, int n, int t, int k);
  ~Fp8Gemm();
  Fp8Gemm(const Fp8Gemm&) = delete;
  Fp8Gemm& operator=(const Fp8Gemm&) = delete;
  void run(const BenchContext& context, const void* w, const void* x, void* y) const;

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t w_layout_ = nullptr, x_layout_ = nullptr, y_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};
// Plans are cached by shape: expert GEMMs repeat the same few shapes over and over.
const Fp8Gemm& fp8_gemm(const BenchContext& context, int n, int t, int k);

// out[r][c] = silu(in[r][c]) * in[r][ffn + c] for `rows` rows of 2 * ffn BF16 values; `out` is
// kBf16 or kFp8 (the input of an FP8 down projection).
void swiglu(const BenchContext& context, const void* gate_up, void* out, long long rows, int ffn,
            DType out_type);

// The weight GEMMs in either precision: `dtype` "bf16" or "fp8" (output always BF16).
void weight_gemm(const BenchContext& context, const std::string& dtype, const void* w, const void* x, void* y,
                 int n, int t, int k);

}  // namespace semsim::bench
