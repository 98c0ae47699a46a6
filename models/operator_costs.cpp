#include "models/operator_costs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

// Counting conventions (every number below can be reproduced by hand from these rules):
//
// * A matmul of an [n x a] activation by an [a x b] weight costs 2*n*a*b FLOPs (one multiply and one
//   add per weight element and token). Norms, RoPE, softmax, biases, residual adds and top-k are
//   not counted.
// * Bytes are HBM traffic: every weight an operator touches is read once per call (elements x
//   weight_bytes(); routed experts' weights x expert_weight_bytes()), activations are read/written as listed
//   per operator (elements x activation_bytes), KV-cache entries are read/written as listed (elements x
//   kv_bytes).
// * SwiGLU FFN (routed expert, shared expert, dense FFN) with intermediate size f: gate, up and down
//   projections, 3*hidden*f weights, 2*t*3*hidden*f FLOPs for t tokens. Activation bytes per
//   token: hidden in + hidden out + the f-element product silu(gate)*up written by the gate/up GEMM
//   epilogue and read back by the down GEMM, i.e. 2*(hidden + f) elements.
// * Attention, for a batch of chunks (n new tokens after p cached tokens each), T = sum of n:
//   - projections: 2*T*attention_params_per_layer FLOPs; weights read once; activations T*hidden in
//     and T*hidden out (q/k/v and the attention output are not counted as HBM traffic).
//   - scores + values: new token i (i = 1..n) of a chunk sits at position p+i and attends to
//     ctx = p+i tokens including itself, capped at W = sliding_window on windowed layers. Per
//     attended token 2*heads*(qk_dim + v_dim) FLOPs; GQA/MHA: qk_dim = v_dim = head_dim.
//     MLA prefill chunks (n > 1) use the non-absorbed form: qk_dim = nope+rope, v_dim = v_head.
//     MLA decode (n == 1) uses the absorbed form over the latent: qk_dim = kv_lora+rope,
//     v_dim = kv_lora. Absorption moves kv_b into the query (W_UK) and output (W_UV) projections:
//     heads*kv_lora*(nope+v_head) MACs per token, exactly the kv_b count already in the
//     projections, so no FLOPs are left out there.
//   - MLA prefill chunk with p > 0 (non-absorbed chunked prefill): the visible cached latents must
//     be up-projected by kv_b before attention, adding 2*visible_prior*kv_lora*heads*(nope+v_head)
//     FLOPs (the up-projected K/V are not counted as HBM bytes).
//   - KV bytes per chunk: the visible cached tokens are read once (visible_prior = p, or min(p, W-1)
//     on a windowed layer, since a query sees W tokens including itself) and the n new tokens are
//     written once, each kv_elements_per_token_per_layer elements.
//   The sum over i of min(p+i, W) is taken in closed form.
// * Gate: 2*T*hidden*routed FLOPs; hidden*routed weights; activations T*hidden in, T*routed logits
//   out.
// * LM head: 2*T*hidden*vocabulary FLOPs; hidden*vocabulary weights; activations T*hidden in,
//   T*vocabulary logits out.
// * Memory: KV per token counts every layer in full, sliding-window layers included (an engine that
//   keeps only the window on those layers would store less). Embedding and LM head are two
//   vocabulary*hidden tables unless tied.

namespace semsim {

namespace {

void require_non_negative(long long value, const char* what) {
  if (value < 0) throw std::invalid_argument(std::string("operator_costs: negative ") + what);
}

bool is_windowed_layer(const AttentionShape& a, int layer) {
  return a.sliding_window > 0 && a.sliding_window_every > 0 && layer % a.sliding_window_every == 0;
}

// Sum over i = 1..n of min(p + i, window); window <= 0 means no cap.
long long attended_tokens(long long p, long long n, long long window) {
  const long long first = p + 1;
  const long long last = p + n;
  if (window <= 0 || last <= window) return (first + last) * n / 2;
  if (first >= window) return n * window;
  // first..window grows, then (last - window) tokens see exactly `window`.
  return (first + window) * (window - first + 1) / 2 + (last - window) * window;
}

// Cached tokens visible to the first (and so to some) new token of the chunk.
long long visible_prior(long long p, long long window) {
  return window > 0 ? std::min(p, window - 1) : p;
}

OpCost swiglu_cost(const MoeModel& model, long long tokens, long long ffn, double weight_bytes,
                   const Precision& p) {
  OpCost cost;
  if (tokens <= 0) return cost;
  const long long weights = 3LL * model.hidden * ffn;
  cost.flops = 2.0 * static_cast<double>(tokens) * static_cast<double>(weights);
  cost.bytes = static_cast<double>(weights) * weight_bytes + static_cast<double>(tokens) * 2.0 *
                                                                 static_cast<double>(model.hidden + ffn) *
                                                                 p.activation_bytes;
  return cost;
}

}  // namespace

double weight_format_bytes(WeightFormat format) {
  switch (format) {
    case WeightFormat::kBf16:
      return kBf16Bytes;
    case WeightFormat::kFp8:
      return kFp8Bytes;
    case WeightFormat::kNvfp4:
      return kNvfp4Bytes;
    case WeightFormat::kMxfp4:
      return kMxfp4Bytes;
  }
  throw std::logic_error("weight_format_bytes: unknown format");
}

double dispatch_format_bytes(DispatchFormat format) {
  switch (format) {
    case DispatchFormat::kFp8:
      return kFp8BlockScaledBytes;
    case DispatchFormat::kBf16:
      return kBf16Bytes;
    case DispatchFormat::kNvfp4:
      return kNvfp4Bytes;
  }
  throw std::logic_error("dispatch_format_bytes: unknown format");
}

bool is_fp4(WeightFormat format) {
  return format == WeightFormat::kNvfp4 || format == WeightFormat::kMxfp4;
}

double peak_flops(WeightFormat format, const Device& device) {
  if (is_fp4(format) && device.fp4_flops > 0) return device.fp4_flops;
  if (format == WeightFormat::kFp8 && device.fp8_flops > 0) return device.fp8_flops;
  return device.bf16_flops;  // FP4 weights without FP4 tensor cores are dequantised (weight-only)
}

long long attention_params_per_layer(const MoeModel& model) {
  const AttentionShape& a = model.attention;
  const long long hidden = model.hidden;
  if (a.kind == AttentionKind::kMla) {
    const long long qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const long long q =
        a.q_lora_rank > 0 ? hidden * a.q_lora_rank + static_cast<long long>(a.q_lora_rank) * a.heads * qk_head
                          : hidden * a.heads * qk_head;
    const long long kv_a = hidden * (a.kv_lora_rank + a.qk_rope_head_dim);
    const long long kv_b =
        static_cast<long long>(a.kv_lora_rank) * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    const long long o = static_cast<long long>(a.heads) * a.v_head_dim * hidden;
    return q + kv_a + kv_b + o;
  }
  const long long q = hidden * a.heads * a.head_dim;
  const long long kv = hidden * a.kv_heads * a.head_dim;
  const long long o = static_cast<long long>(a.heads) * a.head_dim * hidden;
  return q + 2 * kv + o;
}

std::vector<GemmShape> attention_projection_gemms(const MoeModel& model) {
  const AttentionShape& a = model.attention;
  const long long hidden = model.hidden, heads = a.heads;
  if (a.kind == AttentionKind::kMla) {
    const long long qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    std::vector<GemmShape> gemms;
    if (a.q_lora_rank > 0)
      gemms = {{a.q_lora_rank, hidden}, {heads * qk_head, a.q_lora_rank}};
    else
      gemms = {{heads * qk_head, hidden}};
    gemms.push_back({a.kv_lora_rank + a.qk_rope_head_dim, hidden});
    gemms.push_back({heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank});
    gemms.push_back({hidden, heads * a.v_head_dim});
    return gemms;
  }
  return {{(heads + 2LL * a.kv_heads) * a.head_dim, hidden}, {hidden, heads * a.head_dim}};
}

std::vector<GemmShape> swiglu_gemms(const MoeModel& model, long long ffn) {
  return {{2 * ffn, model.hidden}, {model.hidden, ffn}};
}

GemmShape gate_gemm(const MoeModel& model) {
  return {model.routed_experts, model.hidden};
}

GemmShape lm_head_gemm(const MoeModel& model) {
  return {model.vocabulary, model.hidden};
}

long long expert_params(const MoeModel& model) {
  return 3LL * model.hidden * model.expert_ffn;
}

long long shared_expert_params(const MoeModel& model) {
  return 3LL * model.hidden * model.shared_expert_ffn;
}

long long dense_ffn_params(const MoeModel& model) {
  return 3LL * model.hidden * model.dense_ffn;
}

long long gate_params(const MoeModel& model) {
  return static_cast<long long>(model.hidden) * model.routed_experts;
}

long long embedding_params(const MoeModel& model) {
  return static_cast<long long>(model.vocabulary) * model.hidden * (model.tied_embeddings ? 1 : 2);
}

long long visible_prior_context(const MoeModel& model, int layer, long long prior_context) {
  if (layer < 0 || layer >= model.layers) throw std::invalid_argument("attention: layer out of range");
  require_non_negative(prior_context, "prior_context");
  return visible_prior(prior_context,
                       is_windowed_layer(model.attention, layer) ? model.attention.sliding_window : 0);
}

OpCost attention_projection_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  if (tokens == 0) return {};
  const auto params = static_cast<double>(attention_params_per_layer(model));
  const auto t = static_cast<double>(tokens);
  return {2.0 * t * params, params * p.weight_bytes() + 2.0 * t * model.hidden * p.activation_bytes};
}

OpCost attention_core_cost(const MoeModel& model, int layer, std::span<const SequenceChunk> batch,
                           const Precision& p) {
  if (layer < 0 || layer >= model.layers) throw std::invalid_argument("attention_cost: layer out of range");
  const AttentionShape& a = model.attention;
  const long long window = is_windowed_layer(a, layer) ? a.sliding_window : 0;
  const bool mla = a.kind == AttentionKind::kMla;
  const long long kv_per_token = model.kv_elements_per_token_per_layer();

  double score_value_flops = 0;  // scores + values (+ MLA prior up-projection)
  long long kv_elements = 0;     // read + written
  for (const SequenceChunk& chunk : batch) {
    require_non_negative(chunk.new_tokens, "new_tokens");
    require_non_negative(chunk.prior_context, "prior_context");
    if (chunk.new_tokens == 0) continue;
    const long long n = chunk.new_tokens;
    const long long prior = visible_prior(chunk.prior_context, window);
    long long qk_dim = a.head_dim;
    long long v_dim = a.head_dim;
    if (mla && n == 1) {
      qk_dim = a.kv_lora_rank + a.qk_rope_head_dim;
      v_dim = a.kv_lora_rank;
    } else if (mla) {
      qk_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
      v_dim = a.v_head_dim;
      score_value_flops +=
          2.0 * static_cast<double>(prior) * a.kv_lora_rank * a.heads * (a.qk_nope_head_dim + a.v_head_dim);
    }
    score_value_flops += 2.0 * a.heads * static_cast<double>(qk_dim + v_dim) *
                         static_cast<double>(attended_tokens(chunk.prior_context, n, window));
    kv_elements += (prior + n) * kv_per_token;
  }
  return {score_value_flops, static_cast<double>(kv_elements) * p.kv_bytes};
}

OpCost attention_cost(const MoeModel& model, int layer, std::span<const SequenceChunk> batch,
                      const Precision& p) {
  long long tokens = 0;
  for (const SequenceChunk& chunk : batch) tokens += std::max(0, chunk.new_tokens);
  OpCost cost = attention_core_cost(model, layer, batch, p);
  if (tokens == 0) return {};
  cost += attention_projection_cost(model, tokens, p);
  return cost;
}

OpCost gate_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  OpCost cost;
  if (tokens == 0 || model.dense()) return cost;  // a dense model has no router
  const auto weights = static_cast<double>(gate_params(model));
  const auto t = static_cast<double>(tokens);
  cost.flops = 2.0 * t * weights;
  cost.bytes = weights * p.weight_bytes() +
               t * static_cast<double>(model.hidden + model.routed_experts) * p.activation_bytes;
  return cost;
}

OpCost routed_experts_cost(const MoeModel& model, std::span<const int> tokens_per_expert,
                           const Precision& p) {
  // Linear in the histogram: one expert's cost per active expert plus a per-token part. Summed
  // once here rather than expert by expert, since the engine calls this per device per layer.
  long long tokens = 0, active = 0;
  for (const int t : tokens_per_expert) {
    require_non_negative(t, "tokens_per_expert");
    tokens += t;
    active += t > 0 ? 1 : 0;
  }
  if (active == 0) return {};
  const OpCost one = swiglu_cost(model, 1, model.expert_ffn, p.expert_weight_bytes(), p);
  const double weight_bytes = 3.0 * model.hidden * model.expert_ffn * p.expert_weight_bytes();
  return {
      one.flops * static_cast<double>(tokens),
      weight_bytes * static_cast<double>(active) + (one.bytes - weight_bytes) * static_cast<double>(tokens)};
}

OpCost shared_experts_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  OpCost cost;
  for (int e = 0; e < model.shared_experts; ++e)
    cost += swiglu_cost(model, tokens, model.shared_expert_ffn, p.weight_bytes(), p);
  return cost;
}

OpCost dense_ffn_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  return swiglu_cost(model, tokens, model.dense_ffn, p.weight_bytes(), p);
}

OpCost lm_head_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  OpCost cost;
  if (tokens == 0) return cost;
  const double weights = static_cast<double>(model.hidden) * model.vocabulary;
  const auto t = static_cast<double>(tokens);
  cost.flops = 2.0 * t * weights;
  cost.bytes = weights * p.weight_bytes() +
               t * static_cast<double>(model.hidden + model.vocabulary) * p.activation_bytes;
  return cost;
}

OpCost token_permutation_cost(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  return {0.0, 2.0 * static_cast<double>(tokens) * model.hidden * p.activation_bytes};
}

ElementwiseWork attention_elementwise(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  if (tokens == 0) return {};
  const AttentionShape& a = model.attention;
  const auto t = static_cast<double>(tokens);
  const double norm = 4.0 * model.hidden;  // residual-add + RMSNorm: hidden and residual, in and out
  ElementwiseWork work{3, t * 2.0 * norm};
  if (a.kind == AttentionKind::kMla) {
    work.bytes += t * 2.0 * (a.heads + 1) * a.qk_rope_head_dim;  // RoPE on q_pe and the shared k_pe
    work.bytes += t * 2.0 * (a.q_lora_rank + a.kv_lora_rank);    // the latents' RMSNorms, in and out
    work.kernels += a.q_lora_rank > 0 ? 2 : 1;
  } else {
    work.bytes += t * 2.0 * (a.heads + a.kv_heads) * a.head_dim;  // RoPE on q and k
  }
  work.bytes *= p.activation_bytes;
  return work;
}

ElementwiseWork swiglu_activation(long long tokens, long long ffn, const Precision& p) {
  require_non_negative(tokens, "tokens");
  if (tokens == 0 || ffn == 0) return {};
  // Reads gate and up, writes their product.
  return {1, 3.0 * static_cast<double>(tokens) * static_cast<double>(ffn) * p.activation_bytes};
}

ElementwiseWork shared_experts_activation(const MoeModel& model, long long tokens, const Precision& p) {
  return swiglu_activation(tokens, static_cast<long long>(model.shared_experts) * model.shared_expert_ffn, p);
}

ElementwiseWork final_norm(const MoeModel& model, long long tokens, const Precision& p) {
  require_non_negative(tokens, "tokens");
  if (tokens == 0) return {};
  return {1, 4.0 * static_cast<double>(tokens) * model.hidden * p.activation_bytes};
}

ElementwiseWork elementwise_work(const MoeModel& model, ElementwiseSite site, long long tokens,
                                 const Precision& p) {
  switch (site) {
    case ElementwiseSite::kAroundAttention:
      return attention_elementwise(model, tokens, p);
    case ElementwiseSite::kDenseFfn:
      return swiglu_activation(tokens, model.dense_ffn, p);
    case ElementwiseSite::kSharedExperts:
      return shared_experts_activation(model, tokens, p);
    case ElementwiseSite::kFinalNorm:
      return final_norm(model, tokens, p);
  }
  throw std::logic_error("elementwise_work: unknown site");
}

MoeModel attention_tp_shard(const MoeModel& model, int tp) {
  if (tp < 1) throw std::invalid_argument("attention_tp_shard: tp must be >= 1");
  auto split = [tp](int size) { return (size + tp - 1) / tp; };
  MoeModel shard = model;
  shard.attention.heads = split(model.attention.heads);
  if (model.attention.kind != AttentionKind::kMla) shard.attention.kv_heads = split(model.attention.kv_heads);
  shard.dense_ffn = split(model.dense_ffn);
  shard.vocabulary = split(model.vocabulary);
  return shard;
}

MoeModel experts_tp_shard(const MoeModel& model, int tp) {
  if (tp < 1) throw std::invalid_argument("experts_tp_shard: tp must be >= 1");
  MoeModel shard = model;
  shard.expert_ffn = (model.expert_ffn + tp - 1) / tp;
  shard.shared_expert_ffn = (model.shared_expert_ffn + tp - 1) / tp;
  return shard;
}

int kv_shards(const MoeModel& model, int tp) {
  if (model.attention.kind == AttentionKind::kMla) return 1;
  return std::max(1, std::min(tp, model.attention.kv_heads));
}

double kv_bytes_per_token(const MoeModel& model, const Precision& p) {
  return static_cast<double>(model.layers) * static_cast<double>(model.kv_elements_per_token_per_layer()) *
         p.kv_bytes;
}

double weight_bytes_per_device(const MoeModel& model, long long routed_experts_on_device,
                               const Precision& p) {
  require_non_negative(routed_experts_on_device, "routed_experts_on_device");
  const long long moe = model.moe_layers();
  const long long dense = model.layers - moe;
  const long long params = embedding_params(model) + model.layers * attention_params_per_layer(model) +
                           dense * dense_ffn_params(model) +
                           moe * (gate_params(model) + model.shared_experts * shared_expert_params(model));
  return static_cast<double>(params) * p.weight_bytes() +
         static_cast<double>(routed_experts_on_device * expert_params(model)) * p.expert_weight_bytes();
}

}  // namespace semsim
