// Attention decode (batch x context) and prefill (new tokens x context) for MLA and GQA shapes.
#include <algorithm>
#include <string>

#include "calibrate/bench/attention.hpp"
#include "calibrate/bench/check.hpp"
#include "calibrate/bench/gemm.hpp"

namespace semsim::bench {
namespace {

constexpr long long kMaxScoreElements = 1ll << 28;  // S (FP32) and P (BF16) of one pass: 1.5 GiB
constexpr long long kMaxDecodeBatch = 256;
constexpr long long kMaxContext = 65536;
constexpr long long kMaxDecodeKeys = 1ll << 23;  // batch x context: KV caches of a few tens of GB
constexpr long long kMaxPrefillTokens = 16384;
constexpr long long kMaxPrefillPairs = 1ll << 28;  // tokens x context: bounds one case's FLOPs

AttentionShape read_shape(const PlanLine& line) {
  AttentionShape s;
  s.mla = line.has_word("mla");
  s.heads = static_cast<int>(line.value("heads"));
  if (s.mla) {
    s.kv_lora = static_cast<int>(line.value("kv_lora"));
    s.rope = static_cast<int>(line.value("rope"));
    s.nope = static_cast<int>(line.value("nope"));
    s.v_head = static_cast<int>(line.value("v_head"));
  } else {
    s.kv_heads = static_cast<int>(line.value("kv_heads"));
    s.head_dim = static_cast<int>(line.value("head_dim"));
  }
  return s;
}

}  // namespace

// Decode: MLA in its absorbed form (every head attends the one latent cache, K = latent + rope,
// V = the latent part of the same rows); GQA: the query heads of a KV head share its cache.
AttentionLayout decode_layout(const AttentionShape& s, int batch, int context) {
  AttentionLayout a;
  a.new_tokens = 1;
  a.context = context;
  if (s.mla) {
    a.items = batch;
    a.rows = s.heads;
    a.qk_dim = a.k_stride = a.v_stride = s.kv_lora + s.rope;
    a.v_dim = s.kv_lora;
  } else {
    a.items = batch * s.kv_heads;
    a.rows = s.heads / s.kv_heads;
    a.qk_dim = a.v_dim = a.k_stride = a.v_stride = s.head_dim;
  }
  a.k_item_stride = static_cast<long long>(context) * a.k_stride;
  a.v_item_stride = static_cast<long long>(context) * a.v_stride;
  return a;
}

// Prefill of one chunk: MLA in its plain form (per-head keys of nope + rope, values of v_head,
// up-projected from the cached latents); GQA as in decode with `tokens` rows per query head.
AttentionLayout prefill_layout(const AttentionShape& s, int tokens, int context) {
  AttentionLayout a;
  a.new_tokens = tokens;
  a.context = context;
  if (s.mla) {
    a.items = s.heads;
    a.rows = tokens;
    a.qk_dim = a.k_stride = s.nope + s.rope;
    a.v_dim = a.v_stride = s.v_head;
  } else {
    a.items = s.kv_heads;
    a.rows = s.heads / s.kv_heads * tokens;
    a.qk_dim = a.v_dim = a.k_stride = a.v_stride = s.head_dim;
  }
  a.k_item_stride = static_cast<long long>(context) * a.k_stride;
  a.v_item_stride = static_cast<long long>(context) * a.v_stride;
  return a;
}

std::shared_ptr<AttentionCase> make_attention_case(const BenchContext& c, const AttentionShape& s,
                                                   const AttentionLayout& a, bool prefill) {
  auto one = std::make_shared<AttentionCase>();
  one->layout = a;
  one->items_per_pass = a.items_per_pass(kMaxScoreElements);
  const long long rows = static_cast<long long>(a.items) * a.rows;
  auto random = [&](long long elements, std::uint64_t seed) {
    return random_buffer(elements, DType::kBf16, seed, 1.0f, c.stream);
  };
  one->q = random(rows * a.qk_dim, 11);
  one->k = random(a.items * a.k_item_stride, 12);
  if (!(s.mla && !prefill)) one->v = random(a.items * a.v_item_stride, 13);  // MLA decode: V is inside K
  const long long pass = static_cast<long long>(one->items_per_pass) * a.rows * a.context;
  one->scores = DeviceBuffer(pass * 4);
  one->probabilities = DeviceBuffer(pass * 2);
  one->out = DeviceBuffer(rows * a.v_dim * 2);
  if (s.mla && prefill) {
    one->cached = a.context - a.new_tokens;
    const long long width = static_cast<long long>(s.heads) * (s.nope + s.v_head);
    one->latents = random(std::max(1, one->cached) * static_cast<long long>(s.kv_lora), 14);
    one->kv_b = random(width * s.kv_lora, 15);
    one->projected = DeviceBuffer(std::max(1, one->cached) * width * 2);
  }
  return one;
}

void run_attention_case(const BenchContext& c, const AttentionShape& s, const AttentionCase& one) {
  if (one.cached > 0)
    gemm_bf16(c, one.kv_b.get(), one.latents.get(), one.projected.get(), s.heads * (s.nope + s.v_head),
              one.cached, s.kv_lora, DType::kBf16);
  const auto* k = one.k.as<__nv_bfloat16>();
  attention(c, one.layout, one.q.as<__nv_bfloat16>(), k, one.v.get() ? one.v.as<__nv_bfloat16>() : k,
            one.scores.as<float>(), one.probabilities.as<__nv_bfloat16>(), one.out.as<__nv_bfloat16>(),
            one.items_per_pass);
}

std::vector<BenchGroup> attention_groups(BenchContext& context, const PlanLine& line) {
  const bool decode = line.kernel == "attention_decode";
  if (!decode && line.kernel != "attention_prefill") return {};
  const AttentionShape shape = read_shape(line);
  BenchGroup group;
  group.name = line.kernel + " " + line.shape + " bf16";
  group.self_checks = {"attention", "gemm_bf16"};
  group.release = [] {};  // every case owns its buffers: their sizes differ too much to share
  const std::string implementation = "cublasGemmStridedBatchedEx + causal softmax (unfused)";
  const auto outer = decode ? powers_of_two(1, kMaxDecodeBatch, context.quick)
                            : powers_of_two(2, kMaxPrefillTokens, context.quick);
  for (const long long x : outer) {
    for (const long long keys : powers_of_two(1, kMaxContext, context.quick)) {
      if (decode ? x * keys > kMaxDecodeKeys : keys < x || x * keys > kMaxPrefillPairs) continue;
      const AttentionLayout layout = decode
                                         ? decode_layout(shape, static_cast<int>(x), static_cast<int>(keys))
                                         : prefill_layout(shape, static_cast<int>(x), static_cast<int>(keys));
      CaseInfo info{line.kernel,
                    line.shape,
                    "bf16",
                    implementation,
                    "grid",
                    static_cast<double>(x),
                    static_cast<double>(keys)};
      group.cases.push_back({info, [&context, shape, layout, decode] {
                               std::shared_ptr<AttentionCase> one =
                                   make_attention_case(context, shape, layout, !decode);
                               const AttentionCase* raw = one.get();
                               return Launcher{[&context, shape, raw](cudaStream_t, long) {
                                                 run_attention_case(context, shape, *raw);
                                               },
                                               one};
                             }});
    }
  }
  return {std::move(group)};
}

}  // namespace semsim::bench
