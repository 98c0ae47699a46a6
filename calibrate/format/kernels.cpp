#include "calibrate/format/kernels.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

#include "models/operator_costs.hpp"
#include "models/presets.hpp"

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
      {"gemm",
       {"tokens"},
       "one dense GEMM: `tokens` x k activations times a k x n weight",
       KernelScope::kKernel,
       {"n", "k"},
       true},
      {"moe_experts",
       {"experts", "tokens"},
       "fused routed-expert SwiGLU FFN of one rank: `tokens` token copies over its `experts` local experts",
       KernelScope::kKernel,
       {"hidden", "ffn", "experts", "top_k", "distribution"},
       false,
       true},
      {"mla_prefill",
       {"batch", "tokens"},
       "MLA attention core of `batch` prompts of `tokens` new tokens each, no cached prefix",
       KernelScope::kKernel,
       {"heads"}},
      {"mla_decode",
       {"batch", "context"},
       "MLA attention core of one new token per sequence over `context` cached tokens",
       KernelScope::kKernel,
       {"heads"}},
      {"gqa_prefill",
       {"batch", "tokens"},
       "GQA/MHA attention core of `batch` prompts of `tokens` new tokens each, no cached prefix",
       KernelScope::kKernel,
       {"heads", "kv_heads", "head_dim", "window"}},
      {"gqa_decode",
       {"batch", "context"},
       "GQA/MHA attention core of one new token per sequence over `context` cached tokens",
       KernelScope::kKernel,
       {"heads", "kv_heads", "head_dim", "window"},
       false,
       false,
       true},
      {"deepep_ll_dispatch",
       {"tokens"},
       "DeepEP low-latency dispatch of `tokens` tokens per rank (EP over one node's GPUs)",
       KernelScope::kKernel,
       {"hidden", "experts", "top_k"}},
      {"deepep_ll_combine",
       {"tokens"},
       "DeepEP low-latency combine of `tokens` tokens per rank",
       KernelScope::kKernel,
       {"hidden", "experts", "top_k"}},
      {"deepep_normal_dispatch",
       {"tokens"},
       "DeepEP normal (high-throughput) dispatch of `tokens` tokens per rank on `sms` SMs",
       KernelScope::kKernel,
       {"hidden", "experts", "top_k", "sms"}},
      {"deepep_normal_combine",
       {"tokens"},
       "DeepEP normal combine of `tokens` tokens per rank on `sms` SMs",
       KernelScope::kKernel,
       {"hidden", "experts", "top_k", "sms"}},
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

std::string kernel_shape(std::string_view kernel, const MoeModel& m) {
  const AttentionShape& a = m.attention;
  if (kernel == "attention_projections")
    return fmt::format("hidden={} params={}", m.hidden, attention_params_per_layer(m));
  if (kernel == "attention_decode" || kernel == "attention_prefill") {
    if (a.kind == AttentionKind::kMla)
      return fmt::format("mla heads={} kv_lora={} rope={} nope={} v_head={}", a.heads, a.kv_lora_rank,
                         a.qk_rope_head_dim, a.qk_nope_head_dim, a.v_head_dim);
    return fmt::format("gqa heads={} kv_heads={} head_dim={}", a.heads, a.kv_heads, a.head_dim);
  }
  // A dense model has no router and no experts: "" (as an absent shared expert).
  if (kernel == "gate" || kernel == "token_permute" || kernel == "token_unpermute")
    return m.dense() ? "" : fmt::format("hidden={} experts={} top_k={}", m.hidden, m.routed_experts, m.top_k);
  if (kernel == "routed_experts")
    return m.dense() ? ""
                     : fmt::format("hidden={} ffn={} experts={}", m.hidden, m.expert_ffn, m.routed_experts);
  // Several shared experts run as one FFN as wide as all of them together (same FLOPs and bytes).
  if (kernel == "shared_experts")
    return m.shared_experts > 0
               ? fmt::format("hidden={} ffn={}", m.hidden, m.shared_experts * m.shared_expert_ffn)
               : "";
  if (kernel == "dense_ffn")
    return m.moe_layers() < m.layers && m.dense_ffn > 0
               ? fmt::format("hidden={} ffn={}", m.hidden, m.dense_ffn)
               : "";
  if (kernel == "lm_head") return fmt::format("hidden={} vocabulary={}", m.hidden, m.vocabulary);
  if (kernel == "copy") return "";
  throw std::invalid_argument("kernel_shape: unknown kernel '" + std::string(kernel) + "'");
}

std::string kernel_plan() {
  std::string plan =
      "# The kernel shapes of every model preset, for the calibration microbenchmarks (calibrate/bench).\n"
      "# Generated from the presets: semsim calibrate --write-plan calibrate/kernel-plan.txt\n";
  std::set<std::string> seen;
  for (const std::string& name : preset_names(PresetKind::kModel)) {
    const MoeModel model = model_preset(name);
    std::string lines;
    for (const KernelSpec& spec : kernel_specs()) {
      // copy is a device property (measured once, not per model); kernel-scope tables come from databases
      if (spec.name == "copy" || spec.scope == KernelScope::kKernel) continue;
      const std::string line = std::string(spec.name) + " " + kernel_shape(spec.name, model);
      if (!kernel_shape(spec.name, model).empty() && seen.insert(line).second) lines += line + "\n";
    }
    if (!lines.empty()) plan += "# " + name + "\n" + lines;
  }
  return plan;
}

const std::vector<std::string>& kernel_dtype_names() {
  static const std::vector<std::string> names{"bf16", "fp8", "fp8_block", "nvfp4", "mxfp4"};
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
