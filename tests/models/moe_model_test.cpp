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

}  // namespace
}  // namespace semsim
