#include <algorithm>
#include <string>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/experts.hpp"
#include "calibrate/bench/gemm.hpp"

namespace semsim::bench {
ExpertsState::ExpertsState(const BenchContext& context, int expert_count, int hidden_size, int ffn_size,
                           long long capacity, DType weight_type)
    : experts(expert_count),
      hidden(hidden_size),
      ffn(ffn_size),
      type(weight_type),
      up(random_buffer(std::size_t(expert_count) * 2 * ffn_size * hidden_size, weight_type, 4, 0.1f,
                       context.stream)),
      down(random_buffer(std::size_t(expert_count) * hidden_size * ffn_size, weight_type, 5, 0.1f,
                         context.stream)),
      x(random_buffer(std::size_t(capacity) * hidden_size, weight_type, 6, 1.0f, context.stream)),
      gate_up(std::size_t(capacity) * 2 * ffn_size * 2),
      activated(std::size_t(capacity) * ffn_size * dtype_bytes(weight_type)),
      y(std::size_t(capacity) * hidden_size * 2) {}

GroupedCall::GroupedCall(const std::vector<int>& tokens, int rows, int depth)
    : transa(tokens.size(), CUBLAS_OP_T),
      transb(tokens.size(), CUBLAS_OP_N),
      m(tokens.size(), rows),
      n(tokens),
      k(tokens.size(), depth),
      lda(tokens.size(), depth),
      ldb(tokens.size(), depth),
      ldc(tokens.size(), rows),
      group_size(tokens.size(), 1),
      alpha(tokens.size(), 1.0f),
      beta(tokens.size(), 0.0f) {}

void GroupedCall::run(const BenchContext& c, void* const* w, void* const* x, void* const* y) const {
#if CUBLAS_VERSION < 120500  // grouped GEMMs came with cuBLAS 12.5: an older toolkit measures the rest
  throw Unsupported("cuBLAS " + std::to_string(CUBLAS_VERSION) + " has no cublasGemmGroupedBatchedEx");
#else
  SEMSIM_CUBLAS(cublasGemmGroupedBatchedEx(
      c.blas, transa.data(), transb.data(), m.data(), n.data(), k.data(), alpha.data(),
      reinterpret_cast<const void* const*>(w), CUDA_R_16BF, lda.data(),
      reinterpret_cast<const void* const*>(x), CUDA_R_16BF, ldb.data(), beta.data(), y, CUDA_R_16BF,
      ldc.data(), static_cast<int>(n.size()), group_size.data(), CUBLAS_COMPUTE_32F));
#endif
}

ExpertsCase::ExpertsCase(const BenchContext& c, const ExpertsState& s, std::vector<int> tokens_per_expert)
    : tokens(std::move(tokens_per_expert)), up(tokens, 2 * s.ffn, s.hidden), down(tokens, s.hidden, s.ffn) {
  const auto active = tokens.size();
  const std::size_t expert_bytes = 3ull * s.hidden * s.ffn * dtype_bytes(s.type);
  const std::size_t rotations = std::clamp<std::size_t>(
      (3 * c.l2_bytes() + active * expert_bytes - 1) / (active * expert_bytes), 1, s.experts / active);
  long long row = 0;
  for (const int t : tokens) first_row.push_back(row), row += t;
  for (std::size_t r = 0; r < rotations; ++r) {
    experts.emplace_back();
    for (std::size_t i = 0; i < active; ++i)
      experts.back().push_back(static_cast<int>((r * active + i) % s.experts));
  }
  if (s.type == DType::kFp8) return;  // the FP8 path calls cuBLASLt per expert: no pointer arrays
  const std::size_t h = s.hidden, f = s.ffn;
  std::vector<void*> host;
  for (const auto& set : experts)
    for (const int e : set) host.push_back(s.up.at(e * 2 * f * h * 2));
  for (const auto& set : experts)
    for (const int e : set) host.push_back(s.down.at(e * h * f * 2));
  for (const long long first : first_row) host.push_back(s.x.at(first * h * 2));
  for (const long long first : first_row) host.push_back(s.gate_up.at(first * 2 * f * 2));
  for (const long long first : first_row) host.push_back(s.activated.at(first * f * 2));
  for (const long long first : first_row) host.push_back(s.y.at(first * h * 2));
  pointers = DeviceBuffer(host.size() * sizeof(void*));
  to_device(pointers.get(), host.data(), host.size() * sizeof(void*));
}

void run_routed_experts(const BenchContext& c, ExpertsState& s, const ExpertsCase& one, long iteration) {
  const std::size_t rotation = static_cast<std::size_t>(iteration) % one.experts.size();
  if (s.type == DType::kBf16) {
    const std::size_t active = one.tokens.size(), rotations = one.experts.size();
    void* const* p = one.pointers.as<void*>();
    void* const* activations = p + 2 * rotations * active;  // x, gate_up, activated, y
    one.up.run(c, p + rotation * active, activations, activations + active);
    swiglu(c, s.gate_up.get(), s.activated.get(), one.rows(), s.ffn, DType::kBf16);
    one.down.run(c, p + rotations * active + rotation * active, activations + 2 * active,
                 activations + 3 * active);
    return;
  }
  const std::size_t h = s.hidden, f = s.ffn;
  const std::vector<int>& experts = one.experts[rotation];
  for (std::size_t i = 0; i < experts.size(); ++i)
    fp8_gemm(c, 2 * s.ffn, one.tokens[i], s.hidden)
        .run(c, s.up.at(experts[i] * 2 * f * h), s.x.at(one.first_row[i] * h),
             s.gate_up.at(one.first_row[i] * 2 * f * 2));
  swiglu(c, s.gate_up.get(), s.activated.get(), one.rows(), s.ffn, DType::kFp8);
  for (std::size_t i = 0; i < experts.size(); ++i)
    fp8_gemm(c, s.hidden, one.tokens[i], s.ffn)
        .run(c, s.down.at(experts[i] * h * f), s.activated.at(one.first_row[i] * f),
             s.y.at(one.first_row[i] * h * 2));
}

}  // namespace semsim::bench
