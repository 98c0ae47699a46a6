#include "models/moe_model.hpp"

#include <fmt/format.h>

#include "models/input_limits.hpp"

namespace semsim {

bool MoeModel::is_moe_layer(int layer) const {
  return !dense() && layer >= first_dense_layers && (layer + 1) % moe_layer_interval == 0;
}

int MoeModel::moe_layers() const {
  int count = 0;
  for (int layer = 0; layer < layers; ++layer) count += is_moe_layer(layer) ? 1 : 0;
  return count;
}

long long MoeModel::kv_elements_per_token_per_layer() const {
  if (attention.kind == AttentionKind::kMla) return attention.kv_lora_rank + attention.qk_rope_head_dim;
  return 2LL * attention.kv_heads * attention.head_dim;
}

namespace {

AttentionShape attention_from_yaml(const YamlInput& in) {
  in.expect_map({"kind", "heads", "kv_heads", "head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                 "qk_rope_head_dim", "v_head_dim", "sliding_window", "sliding_window_every"});
  AttentionShape a;
  const std::string kind = in.required("kind").as_choice({"mla", "gqa", "mha"});
  a.kind = kind == "mla" ? AttentionKind::kMla : kind == "gqa" ? AttentionKind::kGqa : AttentionKind::kMha;
  a.heads = static_cast<int>(in.required("heads").as_int_in(1, 1 << 12));
  a.sliding_window = static_cast<int>(in.get_int_in("sliding_window", 0, 0, 1 << 24));
  a.sliding_window_every = static_cast<int>(in.get_int_in("sliding_window_every", 0, 0, 1024));
  if (a.kind == AttentionKind::kMla) {
    for (const char* key : {"kv_heads", "head_dim"})
      if (in.has(key))
        in.required(key).fail("not used by MLA attention (use kv_lora_rank and the qk_/v_ dims)");
    a.kv_heads = 1;
    a.q_lora_rank = static_cast<int>(in.get_int_in("q_lora_rank", 0, 0, 1 << 16));
    a.kv_lora_rank = static_cast<int>(in.required("kv_lora_rank").as_int_in(1, 1 << 16));
    a.qk_nope_head_dim = static_cast<int>(in.required("qk_nope_head_dim").as_int_in(1, 1 << 12));
    a.qk_rope_head_dim = static_cast<int>(in.required("qk_rope_head_dim").as_int_in(1, 1 << 12));
    a.v_head_dim = static_cast<int>(in.required("v_head_dim").as_int_in(1, 1 << 12));
  } else {
    for (const char* key :
         {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (in.has(key)) in.required(key).fail("only MLA attention takes this key");
    a.head_dim = static_cast<int>(in.required("head_dim").as_int_in(1, 1 << 12));
    a.kv_heads = a.kind == AttentionKind::kMha
                     ? a.heads
                     : static_cast<int>(in.required("kv_heads").as_int_in(1, a.heads));
    if (a.kind == AttentionKind::kMha && in.has("kv_heads") && in.required("kv_heads").as_int() != a.heads)
      in.required("kv_heads").fail("MHA has as many kv_heads as heads; use kind: gqa");
    if (a.heads % a.kv_heads != 0) in.required("kv_heads").fail("must divide heads");
  }
  return a;
}

void read_experts(const YamlInput& experts, MoeModel& m) {
  experts.expect_map({"routed", "shared", "top_k", "ffn", "shared_ffn", "groups", "topk_groups"});
  m.routed_experts = static_cast<int>(experts.required("routed").as_int_in(1, limits::kExperts));
  m.shared_experts = static_cast<int>(experts.get_int_in("shared", 0, 0, 64));
  m.top_k = static_cast<int>(experts.required("top_k").as_int_in(1, m.routed_experts));
  if (const auto groups = experts.optional("groups")) {
    m.expert_groups = static_cast<int>(groups->as_int_in(1, m.routed_experts));
    if (m.routed_experts % m.expert_groups != 0)
      groups->fail("the expert groups must divide the " + std::to_string(m.routed_experts) +
                   " routed experts");
  }
  m.topk_expert_groups = m.expert_groups;
  if (const auto topk_groups = experts.optional("topk_groups")) {
    m.topk_expert_groups = static_cast<int>(topk_groups->as_int_in(1, limits::kExperts));
    if (m.topk_expert_groups > m.expert_groups)
      topk_groups->fail(fmt::format("must be at most the model's {} expert group{} (experts.groups), got {}",
                                    m.expert_groups, m.expert_groups == 1 ? "" : "s", m.topk_expert_groups));
    const int group_size = m.routed_experts / m.expert_groups;
    if (m.top_k > m.topk_expert_groups * group_size)
      topk_groups->fail(
          fmt::format("the top-{} experts do not fit in {} group{} of {} expert{} (at least {} "
                      "groups needed)",
                      m.top_k, m.topk_expert_groups, m.topk_expert_groups == 1 ? "" : "s", group_size,
                      group_size == 1 ? "" : "s", (m.top_k + group_size - 1) / group_size));
  }
  m.expert_ffn = static_cast<int>(experts.required("ffn").as_int_in(1, 1 << 20));
  m.shared_expert_ffn = static_cast<int>(experts.get_int_in("shared_ffn", m.expert_ffn, 1, 1 << 20));
}

}  // namespace

MoeModel MoeModel::from_yaml(const YamlInput& in) {
  in.expect_map({"kind", "name", "display_name", "source", "layers", "hidden", "vocabulary",
                 "first_dense_layers", "moe_layer_interval", "dense_ffn", "experts", "attention",
                 "tied_embeddings", "notes"});
  if (in.required("kind").as_string() != "model") in.required("kind").fail("expected 'model'");
  MoeModel m;
  m.name = in.required("name").as_string();
  m.display_name = in.get_string("display_name", m.name);
  m.source = in.required("source").as_string();
  m.layers = static_cast<int>(in.required("layers").as_int_in(1, limits::kLayers));
  m.hidden = static_cast<int>(in.required("hidden").as_int_in(1, 1 << 20));
  m.vocabulary = static_cast<int>(in.required("vocabulary").as_int_in(1, limits::kVocabulary));
  m.tied_embeddings = in.get_bool("tied_embeddings", false);
  const auto experts = in.optional("experts");
  if (!experts) {  // dense: every layer has a dense FFN
    for (const char* key : {"first_dense_layers", "moe_layer_interval"})
      if (in.has(key))
        in.required(key).fail("only a model with experts (an 'experts' section) takes this key");
    m.dense_ffn = static_cast<int>(in.required("dense_ffn").as_int_in(1, 1 << 20));
  } else {
    m.first_dense_layers = static_cast<int>(in.get_int_in("first_dense_layers", 0, 0, m.layers - 1));
    m.moe_layer_interval = static_cast<int>(in.get_int_in("moe_layer_interval", 1, 1, m.layers));
    const bool has_dense_layers = m.first_dense_layers > 0 || m.moe_layer_interval > 1;
    m.dense_ffn = static_cast<int>(in.get_int_in("dense_ffn", 0, 0, 1 << 20));
    if (has_dense_layers && m.dense_ffn == 0)
      in.fail("the model has dense layers, so 'dense_ffn' is required");
    read_experts(*experts, m);
    if (m.moe_layers() == 0) in.fail("the model has no MoE layer");
  }
  m.attention = attention_from_yaml(in.required("attention"));
  return m;
}

}  // namespace semsim
