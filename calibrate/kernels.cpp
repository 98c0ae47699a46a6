#include "calibrate/kernels.hpp"

namespace semsim {

const std::vector<KernelSpec>& kernel_specs() {
  static const std::vector<KernelSpec> specs{
      {"attention_projections",
       {"tokens"},
       "q/kv/o projections as one GEMM of the layer's attention weights"},
      {"attention_decode", {"batch", "context"}, "one new token per sequence over `context` cached tokens"},
      {"attention_prefill",
       {"tokens", "context"},
       "a causal chunk of `tokens` new tokens, `context` keys in all"},
      {"gate", {"tokens"}, "router GEMM + top-k selection"},
      {"routed_experts",
       {"active_experts", "tokens"},
       "SwiGLU grouped GEMM over a balanced expert histogram"},
      {"shared_experts", {"tokens"}, "SwiGLU FFN of the shared experts"},
      {"dense_ffn", {"tokens"}, "SwiGLU FFN of a dense layer"},
      {"lm_head", {"tokens"}, "vocabulary projection"},
      {"token_permute", {"rows"}, "gather token copies into expert-contiguous order"},
      {"token_unpermute", {"rows"}, "scatter expert outputs back and sum each token's copies"},
      {"copy", {"bytes"}, "device-to-device copy"},
  };
  return specs;
}

const KernelSpec* find_kernel_spec(std::string_view name) {
  for (const KernelSpec& spec : kernel_specs())
    if (spec.name == name) return &spec;
  return nullptr;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const KernelSpec& spec : kernel_specs()) names.emplace_back(spec.name);
  return names;
}

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names{"all_to_all",     "all_to_allv", "all_reduce",
                                              "reduce_scatter", "all_gather",  "send_recv"};
  return names;
}

const std::vector<std::string>& link_level_names() {
  static const std::vector<std::string> names{"scaleup", "scaleout"};
  return names;
}

}  // namespace semsim
