#pragma once
// FLOPs and HBM bytes of each operator of one layer, and the memory a model needs. These counts are
// what the roofline cost model (and later calibration tables) turn into time; they are pure
// functions of the model shape, the batch and the precision.
#include <span>
#include <vector>

#include "models/choice_names.hpp"
#include "models/device.hpp"
#include "models/moe_model.hpp"

namespace semsim {

// Bytes per element of the number formats tensors are stored or sent in.
inline constexpr double kBf16Bytes = 2.0;
inline constexpr double kFp8Bytes = 1.0;
// FP8 with one 4-byte (FP32) scale per block of 128 elements, as DeepSeek's FP8 dispatch sends it.
inline constexpr double kFp8BlockScaledBytes = kFp8Bytes + 4.0 / 128;
// Block-scaled FP4 with its scales: NVFP4 one FP8 (E4M3) scale per 16 elements, MXFP4 (OCP MX) one
// 8-bit exponent per 32.
inline constexpr double kNvfp4Bytes = 0.5 + 1.0 / 16;
inline constexpr double kMxfp4Bytes = 0.5 + 1.0 / 32;

// The formats weights are stored and multiplied in (`precision.weights`, `precision.experts`); the
// names are those of the measured tables' dtypes.
enum class WeightFormat { kBf16, kFp8, kNvfp4, kMxfp4 };
inline constexpr ChoiceNames<WeightFormat, 4> kWeightFormatNames{{{WeightFormat::kBf16, "bf16"},
                                                                  {WeightFormat::kFp8, "fp8"},
                                                                  {WeightFormat::kNvfp4, "nvfp4"},
                                                                  {WeightFormat::kMxfp4, "mxfp4"}}};
double weight_format_bytes(WeightFormat format);
bool is_fp4(WeightFormat format);

// The format the MoE dispatch sends tokens in (`precision.dispatch`, `semsim collective
// --dispatch-dtype`): DeepEP quantizes them to block-scaled FP8, or to NVFP4 for NVFP4 experts (as
// SGLang's GB200 deployments fuse it), or sends BF16.
enum class DispatchFormat { kFp8, kBf16, kNvfp4 };
inline constexpr ChoiceNames<DispatchFormat, 3> kDispatchFormatNames{
    {{DispatchFormat::kFp8, "fp8"}, {DispatchFormat::kBf16, "bf16"}, {DispatchFormat::kNvfp4, "nvfp4"}}};
double dispatch_format_bytes(DispatchFormat format);
// The dense peak a GEMM in `format` runs at: its tensor cores' rate, else BF16's (FP4 without FP4
// tensor cores runs weight-only: dequantised to BF16).
double peak_flops(WeightFormat format, const Device& device);

struct Precision {
  WeightFormat weights = WeightFormat::kBf16;  // every weight but the routed experts'
  WeightFormat experts = WeightFormat::kBf16;  // the routed experts' (deployments run FP4 experts beside FP8)
  double kv_bytes = 2.0;                       // bytes per KV-cache element
  double activation_bytes = 2.0;               // bytes per activation element

  double weight_bytes() const { return weight_format_bytes(weights); }
  double expert_weight_bytes() const { return weight_format_bytes(experts); }
};

struct OpCost {
  double flops = 0;
  double bytes = 0;  // HBM bytes read + written
  OpCost& operator+=(const OpCost& other) {
    flops += other.flops;
    bytes += other.bytes;
    return *this;
  }
};

// Part of one sequence processed in this step: `new_tokens` queries appended after
// `prior_context` tokens already in the KV cache (decode: new_tokens == 1).
struct SequenceChunk {
  int new_tokens = 0;
  long long prior_context = 0;
};

// Parameter counts (elements), per layer or whole model.
long long attention_params_per_layer(const MoeModel& model);
long long expert_params(const MoeModel& model);         // one routed expert (gate, up, down)
long long shared_expert_params(const MoeModel& model);  // one shared expert
long long dense_ffn_params(const MoeModel& model);      // one dense FFN layer
long long gate_params(const MoeModel& model);           // router of one MoE layer
long long embedding_params(const MoeModel& model);      // input embedding + LM head (once if tied)

// Operators of one layer for a batch on one device.
// Attention: projections + scores/values over the KV cache + KV reads/writes; causal within a chunk;
// sliding-window layers see at most `sliding_window` tokens; MLA decode uses the absorbed form.
OpCost attention_cost(const MoeModel& model, int layer, std::span<const SequenceChunk> batch,
                      const Precision& p);
// Its two parts (attention_cost is their sum): the projections of `tokens` new tokens (weights and
// hidden states), and the core (scores and values over the KV cache, KV reads and writes).
OpCost attention_projection_cost(const MoeModel& model, long long tokens, const Precision& p);
OpCost attention_core_cost(const MoeModel& model, int layer, std::span<const SequenceChunk> batch,
                           const Precision& p);
// Cached tokens the first new token of a chunk sees on `layer`: all of `prior_context`, or the
// part inside the sliding window on a windowed layer.
long long visible_prior_context(const MoeModel& model, int layer, long long prior_context);
OpCost gate_cost(const MoeModel& model, long long tokens, const Precision& p);
// Grouped GEMM over routed experts: `tokens_per_expert[i]` tokens for local expert i; an expert with
// no token costs nothing (its weights are not read).
OpCost routed_experts_cost(const MoeModel& model, std::span<const int> tokens_per_expert, const Precision& p);
OpCost shared_experts_cost(const MoeModel& model, long long tokens, const Precision& p);
OpCost dense_ffn_cost(const MoeModel& model, long long tokens, const Precision& p);
// LM head for the tokens that produce a next token.
OpCost lm_head_cost(const MoeModel& model, long long tokens, const Precision& p);
// The elementwise kernels around a layer's GEMMs and attention that no kernel table holds: memory-
// bound kernels, each priced as a launch floor plus its bytes at the memory bandwidth. As SGLang
// runs them: before attention and before the FFN a fused residual-add + RMSNorm (reads the hidden
// state and the residual, writes both); RoPE on the rank's q and k heads in place (MLA: their rope
// parts); MLA's RMSNorms of its q latent (when the query is low-rank) and kv latent; SiLU(gate) x up
// between a dense or shared FFN's two GEMMs (the fused MoE kernel's own is in its measured time); the
// final RMSNorm before the LM head, over the rows it reads. Not counted: Qwen3's per-head q/k norms
// (fused with RoPE in recent SGLang), the router's top-k, residual adds fused into GEMM epilogues.
struct ElementwiseWork {
  int kernels = 0;
  double bytes = 0;  // read + written
};
ElementwiseWork attention_elementwise(const MoeModel& model, long long tokens, const Precision& p);
ElementwiseWork swiglu_activation(long long tokens, long long ffn, const Precision& p);
// The shared experts run as one FFN of their summed intermediate size (DeepSeek's shared MLP).
ElementwiseWork shared_experts_activation(const MoeModel& model, long long tokens, const Precision& p);
ElementwiseWork final_norm(const MoeModel& model, long long tokens, const Precision& p);
// Where in a step they run: per layer around attention (the two norms and RoPE), per dense layer's
// FFN, per MoE layer's shared experts, once before the LM head.
enum class ElementwiseSite { kAroundAttention, kDenseFfn, kSharedExperts, kFinalNorm };
ElementwiseWork elementwise_work(const MoeModel& model, ElementwiseSite site, long long tokens,
                                 const Precision& p);

// A gather of `tokens` hidden states into a new order (Sem-MoE's Attention-TP token shuffle): each
// read once and written once, no FLOPs.
OpCost token_permutation_cost(const MoeModel& model, long long tokens, const Precision& p);

// The share of the model one rank of an Attention-TP group of `tp` ranks holds and computes, as a
// model of its own (every cost and memory function above then prices that rank): query heads split
// (the most loaded rank's ceil(heads / tp)); GQA/MHA key-value heads split likewise, a KV head being
// replicated on tp / kv_heads ranks when tp > kv_heads, so its KV cache shrinks by min(tp, kv_heads);
// the dense FFN's intermediate size and the vocabulary (embedding and LM head, logits sharded)
// split. MLA's compressed KV latent and its down-projections are shared by all heads, so each rank
// keeps them whole: the MLA KV cache is replicated, not sharded. The gate, shared experts and
// routed experts are unchanged: they run on a rank's slice of the tokens with full weights (routed
// experts placed by EP).
MoeModel attention_tp_shard(const MoeModel& model, int tp);
// The share of every expert one device holds when each routed and shared expert's FFN is split `tp`
// ways (MoE tensor parallelism, as SGLang's moe_tp_size: gate/up by columns, down by rows, the partial
// outputs summed by an all-reduce): their intermediate sizes divide by tp. Attention is unchanged.
MoeModel experts_tp_shard(const MoeModel& model, int tp);

// The dense GEMMs an operator is made of, each `tokens` x k activations times a k x n weight
// (weights as the parameter counts above count them): what per-kernel measurements of GEMMs price.
struct GemmShape {
  long long n = 0;
  long long k = 0;
  bool operator==(const GemmShape&) const = default;
};
// MLA: q (or q_a, q_b), kv_a, kv_b, o; GQA/MHA: fused qkv, o.
std::vector<GemmShape> attention_projection_gemms(const MoeModel& model);
// A SwiGLU FFN of intermediate size `ffn`: fused gate/up, down.
std::vector<GemmShape> swiglu_gemms(const MoeModel& model, long long ffn);
GemmShape gate_gemm(const MoeModel& model);
GemmShape lm_head_gemm(const MoeModel& model);

// Memory.
// The parts one token's KV cache splits into over an Attention-TP group of `tp` ranks: GQA/MHA's KV
// heads split min(tp, kv_heads) ways; MLA's latent is replicated (one part).
int kv_shards(const MoeModel& model, int tp);
// KV-cache bytes one token occupies over all layers.
double kv_bytes_per_token(const MoeModel& model, const Precision& p);
// Weight bytes on one device under Attention-DP expert parallelism: everything but routed experts
// is replicated; `routed_experts_on_device` is the number of routed-expert slots summed over all
// MoE layers (replicas cost weights too).
double weight_bytes_per_device(const MoeModel& model, long long routed_experts_on_device, const Precision& p);

}  // namespace semsim
