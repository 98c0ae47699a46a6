#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/gemm.hpp"
#include "calibrate/bench/tokens.hpp"

namespace semsim::bench {
namespace {

template <class T>
__device__ T from_float(float v);
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <class Out>
__global__ void swiglu_kernel(const __nv_bfloat16* gate_up, Out* out, long long rows, int ffn) {
  const long long total = rows * ffn;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long row = i / ffn;
    const long long column = i % ffn;
    const float gate = __bfloat162float(gate_up[row * 2 * ffn + column]);
    const float up = __bfloat162float(gate_up[row * 2 * ffn + ffn + column]);
    out[i] = from_float<Out>(gate / (1.0f + __expf(-gate)) * up);
  }
}

void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                   cublasOperation_t value) {
  SEMSIM_CUBLAS(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)));
}

}  // namespace

void gemm_bf16(const BenchContext& context, const void* w, const void* x, void* y, int n, int t, int k,
               DType out) {
  const float alpha = 1.0f, beta = 0.0f;
  SEMSIM_CUBLAS(cublasGemmEx(context.blas, CUBLAS_OP_T, CUBLAS_OP_N, n, t, k, &alpha, w, CUDA_R_16BF, k, x,
                             CUDA_R_16BF, k, &beta, y, out == DType::kF32 ? CUDA_R_32F : CUDA_R_16BF, n,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

Fp8Gemm::Fp8Gemm(const BenchContext& context, int n, int t, int k) {
  SEMSIM_CUBLAS(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  SEMSIM_CUBLAS(cublasLtMatrixLayoutCreate(&w_layout_, CUDA_R_8F_E4M3, k, n, k));
  SEMSIM_CUBLAS(cublasLtMatrixLayoutCreate(&x_layout_, CUDA_R_8F_E4M3, k, t, k));
  SEMSIM_CUBLAS(cublasLtMatrixLayoutCreate(&y_layout_, CUDA_R_16BF, n, t, n));
  cublasLtMatmulPreference_t preference = nullptr;
  SEMSIM_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const std::uint64_t workspace = context.lt_workspace_bytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = [&] {
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
    // The routed experts' operands start at per-expert row offsets, 16-byte aligned at least (every
    // dimension is a multiple of 16), not at the 256 bytes the heuristic assumes by default.
    const std::uint32_t alignment = 16;
    for (const auto attribute :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof(alignment));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    return cublasLtMatmulAlgoGetHeuristic(context.lt, desc_, w_layout_, x_layout_, y_layout_, y_layout_,
                                          preference, 1, &result, &found);
  }();
  cublasLtMatmulPreferenceDestroy(preference);
  SEMSIM_CUBLAS(status);
  if (found == 0) throw Unsupported("no cuBLASLt FP8 algorithm for this shape");
  algo_ = result.algo;
}

Fp8Gemm::~Fp8Gemm() {
  cublasLtMatrixLayoutDestroy(y_layout_);
  cublasLtMatrixLayoutDestroy(x_layout_);
  cublasLtMatrixLayoutDestroy(w_layout_);
  cublasLtMatmulDescDestroy(desc_);
}

void Fp8Gemm::run(const BenchContext& context, const void* w, const void* x, void* y) const {
  const float alpha = 1.0f, beta = 0.0f;
  SEMSIM_CUBLAS(cublasLtMatmul(context.lt, desc_, &alpha, w, w_layout_, x, x_layout_, &beta, y, y_layout_, y,
                               y_layout_, &algo_, context.lt_workspace, context.lt_workspace_bytes,
                               context.stream));
}

const Fp8Gemm& fp8_gemm(const BenchContext& context, int n, int t, int k) {
  static std::map<std::tuple<int, int, int, int>, std::unique_ptr<Fp8Gemm>> plans;  // per GPU: its handle
  auto& plan = plans[{context.device, n, t, k}];
  if (!plan) plan = std::make_unique<Fp8Gemm>(context, n, t, k);
  return *plan;
}

void weight_gemm(const BenchContext& context, const std::string& dtype, const void* w, const void* x, void* y,
                 int n, int t, int k) {
  if (dtype == "fp8")
    fp8_gemm(context, n, t, k).run(context, w, x, y);
  else
    gemm_bf16(context, w, x, y, n, t, k, DType::kBf16);
}

void swiglu(const BenchContext& context, const void* gate_up, void* out, long long rows, int ffn,
            DType out_type) {
  const long long total = rows * ffn;
  const unsigned blocks = static_cast<unsigned>(std::min<long long>((total + 255) / 256, 4 * 65535));
  const auto* in = static_cast<const __nv_bfloat16*>(gate_up);
  if (out_type == DType::kFp8)
    swiglu_kernel<<<blocks, 256, 0, context.stream>>>(in, static_cast<__nv_fp8_e4m3*>(out), rows, ffn);
  else
    swiglu_kernel<<<blocks, 256, 0, context.stream>>>(in, static_cast<__nv_bfloat16*>(out), rows, ffn);
  SEMSIM_CUDA(cudaGetLastError());
}

}  // namespace semsim::bench
