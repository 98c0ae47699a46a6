#include "models/moe_model.hpp"

#include <gtest/gtest.h>

#include "models/presets.hpp"

namespace semsim {
namespace {

TEST(MoeModel, ExpertGroupsComeFromConfigJsonsNGroup) {
  EXPECT_EQ(model_preset("deepseek-v3").expert_groups, 8);
  EXPECT_EQ(model_preset("deepseek-v2-lite").expert_groups, 1);
  EXPECT_EQ(model_preset("moonlight-16b-a3b").expert_groups, 1);
  EXPECT_EQ(model_preset("qwen3-30b-a3b").expert_groups, 1);  // no n_group: one group
}

TEST(MoeModel, TopkGroupsComeFromConfigJsonsTopkGroup) {
  const MoeModel v3 = model_preset("deepseek-v3");
  EXPECT_EQ(v3.topk_expert_groups, 4);
  EXPECT_TRUE(v3.group_limited());
  for (const char* name : {"deepseek-v2-lite", "moonlight-16b-a3b", "qwen3-30b-a3b", "mixtral-8x7b"}) {
    EXPECT_EQ(model_preset(name).topk_expert_groups, 1) << name;
    EXPECT_FALSE(model_preset(name).group_limited()) << name;
  }
}

// A model file with `experts` as given.
std::string model_with_experts(const std::string& experts) {
  return "kind: model\nname: m\nsource: test\nlayers: 2\nhidden: 64\nvocabulary: 100\n"
         "experts: " +
         experts + "\nattention: {kind: mha, heads: 2, head_dim: 32}\n";
}

std::string model_error(const std::string& text) {
  try {
    MoeModel::from_yaml(YamlInput::parse(text, "m.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MoeModel, TopkGroupsDefaultToEveryGroup) {
  const MoeModel m = MoeModel::from_yaml(
      YamlInput::parse(model_with_experts("{routed: 16, top_k: 2, ffn: 32, groups: 4}"), "m.yaml"));
  EXPECT_EQ(m.topk_expert_groups, 4);
  EXPECT_FALSE(m.group_limited());
}

TEST(MoeModel, TopkGroupsMustBeAGroupCountTheTopKFitsIn) {
  EXPECT_NE(model_error(model_with_experts("{routed: 16, top_k: 2, ffn: 32, groups: 4, topk_groups: 5}"))
                .find("m.yaml:7:66: experts.topk_groups: must be at most the model's 4 expert groups "
                      "(experts.groups), got 5"),
            std::string::npos);
  EXPECT_NE(model_error(model_with_experts("{routed: 16, top_k: 2, ffn: 32, topk_groups: 2}"))
                .find("must be at most the model's 1 expert group (experts.groups), got 2"),
            std::string::npos);
  EXPECT_NE(model_error(model_with_experts("{routed: 16, top_k: 2, ffn: 32, groups: 4, topk_groups: 0}"))
                .find("experts.topk_groups: must be in [1, "),
            std::string::npos);
  EXPECT_NE(
      model_error(model_with_experts("{routed: 16, top_k: 9, ffn: 32, groups: 4, topk_groups: 2}"))
          .find("experts.topk_groups: the top-9 experts do not fit in 2 groups of 4 experts (at least 3 "
                "groups needed)"),
      std::string::npos);
  const MoeModel fits = MoeModel::from_yaml(YamlInput::parse(
      model_with_experts("{routed: 16, top_k: 8, ffn: 32, groups: 4, topk_groups: 2}"), "m.yaml"));
  EXPECT_EQ(fits.topk_expert_groups, 2);
  EXPECT_TRUE(fits.group_limited());
}

TEST(MoeModel, ExpertGroupsMustDivideTheExperts) {
  const std::string text =
      "kind: model\nname: m\nsource: test\nlayers: 2\nhidden: 64\nvocabulary: 100\n"
      "experts: {routed: 12, top_k: 2, ffn: 32, groups: 5}\nattention: {kind: mha, heads: 2, head_dim: 32}\n";
  try {
    MoeModel::from_yaml(YamlInput::parse(text, "m.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.yaml:7:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the expert groups must divide the 12 routed experts"),
              std::string::npos)
        << e.what();
  }
}

// The dense presets as their config.json files give them (models/presets/models/*.yaml notes).
TEST(MoeModel, DensePresetsHaveTheirConfigJsonsShapes) {
  struct Shape {
    const char* name;
    int layers, hidden, ffn, heads, kv_heads, head_dim, vocabulary;
  };
  for (const Shape& want : {Shape{"qwen3-32b", 64, 5120, 25600, 64, 8, 128, 151936},
                            Shape{"llama-3.1-70b", 80, 8192, 28672, 64, 8, 128, 128256}}) {
    const MoeModel m = model_preset(want.name);
    EXPECT_TRUE(m.dense()) << want.name;
    EXPECT_EQ(m.layers, want.layers) << want.name;
    EXPECT_EQ(m.hidden, want.hidden) << want.name;
    EXPECT_EQ(m.dense_ffn, want.ffn) << want.name;
    EXPECT_EQ(m.attention.kind, AttentionKind::kGqa) << want.name;
    EXPECT_EQ(m.attention.heads, want.heads) << want.name;
    EXPECT_EQ(m.attention.kv_heads, want.kv_heads) << want.name;
    EXPECT_EQ(m.attention.head_dim, want.head_dim) << want.name;
    EXPECT_EQ(m.vocabulary, want.vocabulary) << want.name;
    EXPECT_FALSE(m.tied_embeddings) << want.name;
    EXPECT_EQ(m.attention.sliding_window, 0) << want.name;
    EXPECT_EQ(m.routed_experts, 0) << want.name;
    EXPECT_EQ(m.top_k, 0) << want.name;
    EXPECT_EQ(m.moe_layers(), 0) << want.name;
    for (int layer = 0; layer < m.layers; ++layer) EXPECT_FALSE(m.is_moe_layer(layer)) << layer;
  }
  for (const char* moe : {"deepseek-v2-lite", "mixtral-8x7b"}) EXPECT_FALSE(model_preset(moe).dense()) << moe;
}

// Without `experts` a model is dense: it needs dense_ffn and takes no MoE layer layout.
std::string dense_model(const std::string& extra) {
  return "kind: model\nname: d\nsource: test\nlayers: 2\nhidden: 64\nvocabulary: 100\n" + extra +
         "attention: {kind: mha, heads: 2, head_dim: 32}\n";
}

TEST(MoeModel, AModelWithoutExpertsIsDense) {
  const MoeModel m = MoeModel::from_yaml(YamlInput::parse(dense_model("dense_ffn: 256\n"), "d.yaml"));
  EXPECT_TRUE(m.dense());
  EXPECT_EQ(m.dense_ffn, 256);
  EXPECT_EQ(m.moe_layers(), 0);
  EXPECT_NE(model_error(dense_model("")).find("m.yaml:1:1: missing required key 'dense_ffn'"),
            std::string::npos)
      << model_error(dense_model(""));
  EXPECT_NE(model_error(dense_model("dense_ffn: 256\nfirst_dense_layers: 1\n"))
                .find("first_dense_layers: only a model with experts (an 'experts' section) takes this key"),
            std::string::npos);
  EXPECT_NE(model_error(dense_model("dense_ffn: 256\nmoe_layer_interval: 2\n"))
                .find("moe_layer_interval: only a model with experts"),
            std::string::npos);
}

}  // namespace
}  // namespace semsim
