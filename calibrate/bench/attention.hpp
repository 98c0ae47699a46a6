#pragma once
// Attention as the suite measures it: cuBLAS strided-batched GEMMs on tensor cores around the
// project's causal softmax. Per item (a sequence's KV head), with R query rows (the query heads that
// share the KV head, times the n new tokens) over c keys of which the last n are the new tokens:
// S = Q K^T in FP32, P = softmax(S / sqrt(qk_dim)) under the causal mask, O = P V. Not fused like
// FlashAttention/FlashMLA (it writes S and P to memory), so it is slower than those: the profile
// records this implementation next to its numbers.
#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/memory.hpp"

#include <memory>

namespace semsim::bench {

struct AttentionLayout {
  int items = 1;       // sequences x KV heads
  int rows = 1;        // query rows per item: query heads per KV head x new tokens (head-major)
  int new_tokens = 1;  // n
  int context = 1;     // c: keys per item, the new tokens last
  int qk_dim = 0, v_dim = 0;
  int k_stride = 0, v_stride = 0;  // elements from one key (value) to the next (MLA: V is in K's rows)
  long long k_item_stride = 0, v_item_stride = 0;

  // How many items one pass takes so that S and P stay within `max_elements` elements.
  int items_per_pass(long long max_elements) const;
};

// Q [items][rows][qk_dim], O [items][rows][v_dim]; `scores` and `probabilities` hold one pass.
void attention(const BenchContext& context, const AttentionLayout& layout, const __nv_bfloat16* q,
               const __nv_bfloat16* k, const __nv_bfloat16* v, float* scores, __nv_bfloat16* probabilities,
               __nv_bfloat16* out, int items_per_pass);

// The attention shapes of the plan's attention lines (and of a step export's model).
struct AttentionShape {
  bool mla = false;
  int heads = 0, kv_heads = 0, head_dim = 0;        // GQA
  int kv_lora = 0, rope = 0, nope = 0, v_head = 0;  // MLA
};

// One sequence batch's decode (MLA absorbed: every head attends the one latent cache), or one prefill
// chunk (MLA plain: per-head keys and values up-projected from the cached latents).
AttentionLayout decode_layout(const AttentionShape& s, int batch, int context);
AttentionLayout prefill_layout(const AttentionShape& s, int tokens, int context);

// A case's random inputs and its working buffers; MLA prefill also has the cached latents and the
// kv_b weights that up-project them.
struct AttentionCase {
  AttentionLayout layout;
  int items_per_pass = 1;
  DeviceBuffer q, k, v, scores, probabilities, out;
  DeviceBuffer latents, kv_b, projected;
  int cached = 0;
};

std::shared_ptr<AttentionCase> make_attention_case(const BenchContext& c, const AttentionShape& s,
                                                   const AttentionLayout& a, bool prefill);
void run_attention_case(const BenchContext& c, const AttentionShape& s, const AttentionCase& one);

}  // namespace semsim::bench
