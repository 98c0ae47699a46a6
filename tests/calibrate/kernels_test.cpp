// The names, shapes and plan the profile, the cost model and the microbenchmarks share.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "calibrate/format/kernels.hpp"
#include "calibrate/runtime/expert_histogram.hpp"
#include "models/presets.hpp"

namespace semsim {
namespace {

TEST(KernelShape, SpellsOutWhatTheBenchmarkNeeds) {
  const MoeModel v2 = model_preset("deepseek-v2-lite");
  EXPECT_EQ(kernel_shape("routed_experts", v2), "hidden=2048 ffn=1408 experts=64");
  EXPECT_EQ(kernel_shape("shared_experts", v2), "hidden=2048 ffn=2816");  // two experts of 1408 as one FFN
  EXPECT_EQ(kernel_shape("dense_ffn", v2), "hidden=2048 ffn=10944");
  EXPECT_EQ(kernel_shape("attention_decode", v2), "mla heads=16 kv_lora=512 rope=64 nope=128 v_head=128");
  EXPECT_EQ(kernel_shape("attention_prefill", v2), kernel_shape("attention_decode", v2));
  EXPECT_EQ(kernel_shape("gate", v2), "hidden=2048 experts=64 top_k=6");
  EXPECT_EQ(kernel_shape("lm_head", v2), "hidden=2048 vocabulary=102400");
  const MoeModel qwen = model_preset("qwen3-30b-a3b");
  EXPECT_EQ(kernel_shape("attention_decode", qwen), "gqa heads=32 kv_heads=4 head_dim=128");
  EXPECT_EQ(kernel_shape("shared_experts", qwen), "") << "no shared experts";
  EXPECT_EQ(kernel_shape("dense_ffn", qwen), "") << "no dense layers";
  EXPECT_THROW(kernel_shape("no_such_kernel", qwen), std::invalid_argument);
}

TEST(KernelPlan, TheCommittedPlanIsWhatThePresetsGive) {
  std::ifstream in(std::string(SEMSIM_SOURCE_DIR) + "/calibrate/kernel-plan.txt");
  std::ostringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), kernel_plan())
      << "calibrate/kernel-plan.txt is stale: semsim calibrate --write-plan calibrate/kernel-plan.txt";
}

TEST(KernelPlan, CoversEveryKernelOfEveryPresetOnce) {
  const std::string plan = kernel_plan();
  for (const std::string& name : preset_names(PresetKind::kModel)) {
    const MoeModel model = model_preset(name);
    for (const KernelSpec& spec : kernel_specs()) {
      // Kernel-scope tables are keyed by the kernel's own shape and come from databases, not the plan.
      if (spec.scope == KernelScope::kKernel) continue;
      const std::string shape = spec.name == "copy" ? "" : kernel_shape(spec.name, model);
      if (shape.empty()) continue;
      std::string line = "\n";  // a whole line of the plan
      line.append(spec.name).append(" ").append(shape).append("\n");
      const auto first = plan.find(line);
      EXPECT_NE(first, std::string::npos) << name << ": " << line;
      EXPECT_EQ(plan.find(line, first + 1), std::string::npos) << "twice: " << line;
    }
  }
}

TEST(ExpertHistogram, BalancedSplitsEvenlyAndSkewedFavoursTheFirstExperts) {
  EXPECT_EQ(expert_histogram(3, 10, false), (std::vector<int>{4, 3, 3}));
  EXPECT_EQ(expert_histogram(1, 7, true), (std::vector<int>{7}));
  for (const auto& [active, tokens] :
       {std::pair{2, 2}, {8, 100}, {64, 64}, {256, 300}, {256, 65536}, {7, 9}}) {
    const std::vector<int> skewed = expert_histogram(active, tokens, true);
    ASSERT_EQ(skewed.size(), static_cast<std::size_t>(active));
    EXPECT_EQ(std::accumulate(skewed.begin(), skewed.end(), 0LL), tokens) << active << " " << tokens;
    EXPECT_GE(*std::min_element(skewed.begin(), skewed.end()), 1);
    EXPECT_EQ(*std::max_element(skewed.begin(), skewed.end()), skewed.front());
  }
  const std::vector<int> zipf = expert_histogram(8, 8000, true);
  EXPECT_GT(zipf[0], 2 * zipf[1]);  // 1 : 2^-1.2 = 2.3 : 1
  EXPECT_GE(zipf[1], zipf[7]);
}

}  // namespace
}  // namespace semsim
