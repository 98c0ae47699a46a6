// The GEMM-based kernels of a model: attention projections, LM head, dense and shared-expert FFNs,
// the router (GEMM + top-k) and the routed experts (grouped GEMM over expert histograms).
#include <algorithm>
#include <cmath>
#include <string>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/experts.hpp"
#include "calibrate/bench/gemm.hpp"
#include "calibrate/bench/tokens.hpp"
#include "calibrate/runtime/expert_histogram.hpp"

namespace semsim::bench {
namespace {

constexpr long long kMaxDenseTokens = 32768;
constexpr long long kMaxHeadTokens = 8192;     // only tokens that produce a next token reach the LM head
constexpr long long kMaxExpertTokens = 65536;  // token copies one device receives in a step

DType weight_type(const std::string& dtype) {
  return dtype == "fp8" ? DType::kFp8 : DType::kBf16;
}

std::vector<std::string> weight_dtypes(const BenchContext& context) {
  return context.fp8 ? std::vector<std::string>{"bf16", "fp8"} : std::vector<std::string>{"bf16"};
}

std::string gemm_implementation(const std::string& dtype) {
  return dtype == "fp8" ? "cublasLtMatmul fp8 e4m3" : "cublasGemmEx bf16";
}

// Enough copies of a weight matrix to overflow L2, used in turn, so that every launch reads its
// weights from HBM as one layer of a real model does.
class RotatingWeights {
 public:
  RotatingWeights(const BenchContext& context, std::size_t elements, DType type) {
    const std::size_t bytes = elements * dtype_bytes(type);
    const auto count = std::clamp<std::size_t>((3 * context.l2_bytes() + bytes - 1) / bytes, 1, 16);
    for (std::size_t i = 0; i < count; ++i) {
      copies_.push_back(random_buffer(elements, type, 1000 + i, 0.05f, context.stream));
    }
  }
  const void* at(long iteration) const {
    return copies_[static_cast<std::size_t>(iteration) % copies_.size()].get();
  }

 private:
  std::vector<DeviceBuffer> copies_;
};

// A group of cases over the token grid of one shape; `state` makes the shared buffers and `run`
// launches one token count.
template <class State>
BenchGroup token_grid_group(BenchContext& context, const PlanLine& line, const std::string& dtype,
                            const std::string& implementation, std::vector<std::string> checks,
                            long long max_tokens, std::function<std::unique_ptr<State>()> make,
                            std::function<void(const BenchContext&, State&, long long tokens, long)> run) {
  auto state = shared_state<State>(std::move(make));
  BenchGroup group;
  group.name = line.kernel + " " + line.shape + " " + dtype;
  group.self_checks = std::move(checks);
  group.release = [state] { state->release(); };
  for (const long long tokens : powers_of_two(1, max_tokens, context.quick)) {
    CaseInfo info{line.kernel, line.shape, dtype, implementation, "grid", static_cast<double>(tokens), 0};
    group.cases.push_back(
        {info, [&context, state, run, tokens] {
           State& s = state->get();
           return Launcher{
               [&context, &s, run, tokens](cudaStream_t, long it) { run(context, s, tokens, it); }, nullptr};
         }});
  }
  return group;
}

// One GEMM per token count: attention projections, LM head.
struct GemmState {
  RotatingWeights weights;
  DeviceBuffer x, y;
};

BenchGroup single_gemm_group(BenchContext& context, const PlanLine& line, const std::string& dtype, int n,
                             int k, long long max_tokens) {
  const DType type = weight_type(dtype);
  return token_grid_group<GemmState>(
      context, line, dtype, gemm_implementation(dtype), {dtype == "fp8" ? "gemm_fp8" : "gemm_bf16"},
      max_tokens,
      [&context, n, k, max_tokens, type] {
        return std::make_unique<GemmState>(GemmState{
            RotatingWeights(context, std::size_t(n) * k, type),
            random_buffer(max_tokens * k, type, 1, 1.0f, context.stream), DeviceBuffer(max_tokens * n * 2)});
      },
      [dtype, n, k](const BenchContext& c, GemmState& s, long long tokens, long it) {
        weight_gemm(c, dtype, s.weights.at(it), s.x.get(), s.y.get(), n, static_cast<int>(tokens), k);
      });
}

// A SwiGLU FFN per token count: gate/up GEMM, activation, down GEMM.
struct FfnState {
  RotatingWeights up, down;
  DeviceBuffer x, gate_up, activated, y;
};

BenchGroup ffn_group(BenchContext& context, const PlanLine& line, const std::string& dtype) {
  const int hidden = static_cast<int>(line.value("hidden"));
  const int ffn = static_cast<int>(line.value("ffn"));
  const DType type = weight_type(dtype);
  return token_grid_group<FfnState>(
      context, line, dtype, gemm_implementation(dtype) + " x2 + swiglu",
      {dtype == "fp8" ? "gemm_fp8" : "gemm_bf16", "swiglu"}, kMaxDenseTokens,
      [&context, hidden, ffn, type] {
        const std::size_t t = kMaxDenseTokens;
        return std::make_unique<FfnState>(
            FfnState{RotatingWeights(context, std::size_t(2) * ffn * hidden, type),
                     RotatingWeights(context, std::size_t(hidden) * ffn, type),
                     random_buffer(t * hidden, type, 2, 1.0f, context.stream), DeviceBuffer(t * 2 * ffn * 2),
                     DeviceBuffer(t * ffn * dtype_bytes(type)), DeviceBuffer(t * hidden * 2)});
      },
      [dtype, hidden, ffn, type](const BenchContext& c, FfnState& s, long long tokens, long it) {
        const int t = static_cast<int>(tokens);
        weight_gemm(c, dtype, s.up.at(it), s.x.get(), s.gate_up.get(), 2 * ffn, t, hidden);
        swiglu(c, s.gate_up.get(), s.activated.get(), tokens, ffn, type);
        weight_gemm(c, dtype, s.down.at(it), s.activated.get(), s.y.get(), hidden, t, ffn);
      });
}

// The router: logits in FP32 from a BF16 GEMM, then top-k.
struct GateState {
  RotatingWeights weights;
  DeviceBuffer x, logits, ids, weights_out;
};

BenchGroup gate_group(BenchContext& context, const PlanLine& line) {
  const int hidden = static_cast<int>(line.value("hidden"));
  const int experts = static_cast<int>(line.value("experts"));
  const int k = static_cast<int>(line.value("top_k"));
  return token_grid_group<GateState>(
      context, line, "bf16", "cublasGemmEx bf16->f32 + top_k", {"gemm_bf16", "top_k"}, kMaxDenseTokens,
      [&context, hidden, experts, k] {
        const std::size_t t = kMaxDenseTokens;
        return std::make_unique<GateState>(
            GateState{RotatingWeights(context, std::size_t(experts) * hidden, DType::kBf16),
                      random_buffer(t * hidden, DType::kBf16, 3, 1.0f, context.stream),
                      DeviceBuffer(t * experts * 4), DeviceBuffer(t * k * 4), DeviceBuffer(t * k * 4)});
      },
      [hidden, experts, k](const BenchContext& c, GateState& s, long long tokens, long it) {
        const int t = static_cast<int>(tokens);
        gemm_bf16(c, s.weights.at(it), s.x.get(), s.logits.get(), experts, t, hidden, DType::kF32);
        top_k(c, s.logits.as<float>(), t, experts, k, s.ids.as<int>(), s.weights_out.as<float>());
      });
}

BenchGroup routed_experts_group(BenchContext& context, const PlanLine& line, const std::string& dtype) {
  const int hidden = static_cast<int>(line.value("hidden"));
  const int ffn = static_cast<int>(line.value("ffn"));
  const int experts = static_cast<int>(line.value("experts"));
  const DType type = weight_type(dtype);
  auto state = shared_state<ExpertsState>([&context, hidden, ffn, experts, type] {
    return std::make_unique<ExpertsState>(context, experts, hidden, ffn, kMaxExpertTokens, type);
  });
  BenchGroup group;
  group.name = line.kernel + " " + line.shape + " " + dtype;
  group.self_checks = {"routed_experts_" + dtype};
  group.release = [state] { state->release(); };
  const std::string implementation = dtype == "fp8" ? "cublasLtMatmul fp8 per expert + swiglu"
                                                    : "cublasGemmGroupedBatchedEx bf16 x2 + swiglu";
  for (const long long active : powers_of_two(1, experts, context.quick)) {
    for (const long long tokens : powers_of_two(1, kMaxExpertTokens, context.quick)) {
      if (tokens < active) continue;
      for (const bool skewed : {false, true}) {
        if (skewed && active == 1) continue;
        CaseInfo info{line.kernel,
                      line.shape,
                      dtype,
                      implementation,
                      skewed ? "skewed" : "grid",
                      static_cast<double>(active),
                      static_cast<double>(tokens)};
        group.cases.push_back({info, [&context, state, active, tokens, skewed] {
                                 ExpertsState& s = state->get();
                                 std::shared_ptr<ExpertsCase> one = std::make_shared<ExpertsCase>(
                                     context, s, expert_histogram(static_cast<int>(active), tokens, skewed));
                                 const ExpertsCase* raw = one.get();
                                 return Launcher{[&context, &s, raw](cudaStream_t, long it) {
                                                   run_routed_experts(context, s, *raw, it);
                                                 },
                                                 one};
                               }});
      }
    }
  }
  return group;
}

int projection_width(const PlanLine& line) {
  // The layer's attention weights as one [hidden x width] matrix (width a multiple of 16, as FP8 needs).
  const long long width = (line.value("params") + line.value("hidden") - 1) / line.value("hidden");
  return static_cast<int>((width + 15) / 16 * 16);
}

}  // namespace

std::vector<BenchGroup> gemm_groups(BenchContext& context, const PlanLine& line) {
  std::vector<BenchGroup> groups;
  if (line.kernel == "gate") groups.push_back(gate_group(context, line));
  for (const std::string& dtype : weight_dtypes(context)) {
    if (line.kernel == "attention_projections")
      groups.push_back(single_gemm_group(context, line, dtype, projection_width(line),
                                         static_cast<int>(line.value("hidden")), kMaxDenseTokens));
    if (line.kernel == "lm_head")
      groups.push_back(single_gemm_group(context, line, dtype, static_cast<int>(line.value("vocabulary")),
                                         static_cast<int>(line.value("hidden")), kMaxHeadTokens));
    if (line.kernel == "shared_experts" || line.kernel == "dense_ffn")
      groups.push_back(ffn_group(context, line, dtype));
    if (line.kernel == "routed_experts") groups.push_back(routed_experts_group(context, line, dtype));
  }
  return groups;
}

}  // namespace semsim::bench
