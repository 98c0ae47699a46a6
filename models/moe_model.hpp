#pragma once
// A Mixture-of-Experts transformer as the simulator sees it: the shapes that decide FLOPs, bytes and
// routing, read from a preset (models/presets/models/*.yaml) whose numbers come from config.json.
// A preset without `experts:` is a dense transformer (every layer a dense FFN of `dense_ffn`): no
// routed experts, so no MoE layer, placement, routing or dispatch.
#include <string>

#include "models/yaml_input.hpp"

namespace semsim {

enum class AttentionKind { kMla, kGqa, kMha };

struct AttentionShape {
  AttentionKind kind = AttentionKind::kGqa;
  int heads = 0;                 // query heads
  int kv_heads = 0;              // GQA/MHA key-value heads (MLA: 1 latent "head")
  int head_dim = 0;              // GQA/MHA q/k/v head size
  int q_lora_rank = 0;           // MLA; 0 = full-rank query projection
  int kv_lora_rank = 0;          // MLA latent size
  int qk_nope_head_dim = 0;      // MLA
  int qk_rope_head_dim = 0;      // MLA
  int v_head_dim = 0;            // MLA
  int sliding_window = 0;        // 0 = none; tokens of context a windowed layer sees
  int sliding_window_every = 0;  // every n-th layer (starting at layer 0) is windowed; 0 = none
};

struct MoeModel {
  std::string name;
  std::string display_name;
  std::string source;  // where the numbers were checked (config.json URL)
  int layers = 0;
  int hidden = 0;
  int vocabulary = 0;
  int first_dense_layers = 0;  // leading layers with a dense FFN (DeepSeek first_k_dense_replace)
  int moe_layer_interval = 1;  // layer i >= first_dense_layers is MoE iff (i + 1) % interval == 0
  int dense_ffn = 0;           // intermediate size of dense FFN layers (0 when there are none)
  int routed_experts = 0;      // 0: a dense model
  int shared_experts = 0;
  int top_k = 0;
  // DeepSeek's n_group: routed experts in groups of consecutive ids (EPLB's hierarchical placement
  // packs whole groups onto nodes).
  int expert_groups = 1;
  // DeepSeek's topk_group: a token's experts lie in at most this many groups (the gate keeps the best
  // groups, then takes the top-k in them). expert_groups: no limit.
  int topk_expert_groups = 1;
  int expert_ffn = 0;         // intermediate size of one routed expert
  int shared_expert_ffn = 0;  // intermediate size of one shared expert
  bool tied_embeddings = false;
  AttentionShape attention;

  bool group_limited() const { return topk_expert_groups < expert_groups; }
  bool dense() const { return routed_experts == 0; }
  bool is_moe_layer(int layer) const;
  int moe_layers() const;
  // KV-cache elements stored per token per layer (MLA: kv_lora + rope; GQA/MHA: 2 * kv_heads * head_dim).
  long long kv_elements_per_token_per_layer() const;

  static MoeModel from_yaml(const YamlInput& in);
};

}  // namespace semsim
