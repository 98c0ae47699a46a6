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
