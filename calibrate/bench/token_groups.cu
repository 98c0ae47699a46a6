// Moving tokens: permute/unpermute around the routed experts, and plain device copies.
#include <string>

#include "calibrate/bench/check.hpp"
#include "calibrate/bench/tokens.hpp"

namespace semsim::bench {
namespace {

constexpr long long kMaxPermuteTokens = 32768;  // tokens per rank per step, each with top-k copies
constexpr long long kMaxCopyBytes = 1ll << 30;

struct TokenState {
  TokenState(const BenchContext& context, int experts, int k, int hidden)
      : permutation(kMaxPermuteTokens, experts, k, hidden),
        x(kMaxPermuteTokens * hidden * 2),
        ids(kMaxPermuteTokens * k * sizeof(int)),
        weights(kMaxPermuteTokens * k * sizeof(float)),
        permuted(kMaxPermuteTokens * k * hidden * 2),
        out(kMaxPermuteTokens * hidden * 2) {
    fill_random(x.get(), kMaxPermuteTokens * hidden, DType::kBf16, 7, 1.0f, context.stream);
    fill_random(ids.get(), kMaxPermuteTokens * k, DType::kI32, 8, static_cast<float>(experts),
                context.stream);
    fill_random(weights.get(), kMaxPermuteTokens * k, DType::kF32, 9, 1.0f, context.stream);
  }
  Permutation permutation;
  DeviceBuffer x, ids, weights, permuted, out;
};

}  // namespace

std::vector<BenchGroup> token_groups(BenchContext& context, const PlanLine& line) {
  if (line.kernel != "token_permute" && line.kernel != "token_unpermute") return {};
  const bool forward = line.kernel == "token_permute";
  const int hidden = static_cast<int>(line.value("hidden"));
  const int experts = static_cast<int>(line.value("experts"));
  const int k = static_cast<int>(line.value("top_k"));
  auto state = shared_state<TokenState>(
      [&context, experts, k, hidden] { return std::make_unique<TokenState>(context, experts, k, hidden); });
  BenchGroup group;
  group.name = line.kernel + " " + line.shape + " bf16";
  group.self_checks = {"permute"};
  group.release = [state] { state->release(); };
  for (const long long tokens : powers_of_two(1, kMaxPermuteTokens, context.quick)) {
    // The table's axis is rows (token copies), what the engine knows per device.
    CaseInfo info{line.kernel,
                  line.shape,
                  "bf16",
                  forward ? "count + scan + scatter" : "weighted gather",
                  "grid",
                  static_cast<double>(tokens * k),
                  0};
    group.cases.push_back(
        {info, [&context, state, tokens, forward] {
           TokenState& s = state->get();
           const int t = static_cast<int>(tokens);
           const auto* x = s.x.as<__nv_bfloat16>();
           const int* ids = s.ids.as<int>();
           // Unpermuting needs the rows a permutation made.
           if (!forward) permute(context, x, ids, t, s.permutation, s.permuted.as<__nv_bfloat16>());
           if (forward)
             return Launcher{[&context, &s, x, ids, t](cudaStream_t, long) {
                               permute(context, x, ids, t, s.permutation, s.permuted.as<__nv_bfloat16>());
                             },
                             nullptr};
           return Launcher{[&context, &s, t](cudaStream_t, long) {
                             unpermute(context, s.permuted.as<__nv_bfloat16>(), s.weights.as<float>(), t,
                                       s.permutation, s.out.as<__nv_bfloat16>());
                           },
                           nullptr};
         }});
  }
  return {std::move(group)};
}

BenchGroup copy_group(BenchContext& context) {
  struct Buffers {
    DeviceBuffer source{kMaxCopyBytes}, destination{kMaxCopyBytes};
  };
  auto state = shared_state<Buffers>([] { return std::make_unique<Buffers>(); });
  BenchGroup group;
  group.name = "copy";
  group.release = [state] { state->release(); };
  for (const long long bytes : powers_of_two(4096, kMaxCopyBytes, context.quick)) {
    CaseInfo info{"copy", "", "bf16", "cudaMemcpyAsync device to device", "grid", static_cast<double>(bytes),
                  0};
    group.cases.push_back({info, [&context, state, bytes] {
                             Buffers& b = state->get();
                             return Launcher{
                                 [&context, &b, bytes](cudaStream_t, long) {
                                   SEMSIM_CUDA(cudaMemcpyAsync(b.destination.get(), b.source.get(), bytes,
                                                               cudaMemcpyDeviceToDevice, context.stream));
                                 },
                                 nullptr};
                           }});
  }
  return group;
}

}  // namespace semsim::bench
