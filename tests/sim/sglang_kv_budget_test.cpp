// SGLang's KV-cache budget (sim/sglang_server_args.hpp): mem_fraction_static's default computed by
// hand from ServerArgs._handle_gpu_memory_settings, and the KV tokens a run gets from it on the
// memory the driver reports (81,559 MiB on an H100 80GB).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/run_plan.hpp"
#include "sim/scenario.hpp"
#include "sim/sglang_server_args.hpp"

namespace semsim {
namespace {

constexpr double kH100Mib = 81559;
constexpr double kH200Mib = 143771;

TEST(SglangKvBudget, ReservedMemoryFollowsTheServerArgsRule) {
  // TP1 on an H100: 512 + 8,192 x 1.5 + 256 x 2 + 1/8 x 1,024 = 13,440 MiB.
  SglangMemoryInputs tp1{kH100Mib, 8192, 256, 1, 1, SglangDraft::kNone};
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(tp1), 13440);
  EXPECT_DOUBLE_EQ(sglang_mem_fraction_static(tp1), 0.835);  // 68,119 / 81,559 = 0.8352
  // TP8 (graphs to 512): 512 + 12,288 + 1,024 + 1,024 = 14,848 MiB.
  SglangMemoryInputs tp8{kH100Mib, 8192, 512, 8, 1, SglangDraft::kNone};
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(tp8), 14848);
  EXPECT_DOUBLE_EQ(sglang_mem_fraction_static(tp8), 0.818);  // 66,711 / 81,559 = 0.8179
  // TP8 with DP attention over 8 ranks on an H200: + 512 x 8 x 3 + 512 x 8 x 1.5 (graphs above 300).
  SglangMemoryInputs dp8{kH200Mib, 8192, 512, 8, 8, SglangDraft::kNone};
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(dp8), 14848 + 12288 + 6144);
  EXPECT_DOUBLE_EQ(sglang_mem_fraction_static(dp8), 0.769);  // 110,491 / 143,771 = 0.7685
  // A small chunk on a large device still keeps 10 GiB back; drafts add theirs after that floor.
  SglangMemoryInputs small{kH100Mib, 1024, 8, 1, 1, SglangDraft::kNone};
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(small), 10240);  // 512 + 2,048 x 1.5 + 16 + 128 = 3,728 below it
  small.draft = SglangDraft::kDraftHeads;
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(small), 10240 + 2048);
  small.draft = SglangDraft::kDraftModel;
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(small), 10240 + 6144);
  // Below 60 GiB no floor: an A100 40 GB (40,960 MiB), chunk 4,096, graphs to 32.
  SglangMemoryInputs a100{40960, 4096, 32, 1, 1, SglangDraft::kNone};
  EXPECT_DOUBLE_EQ(sglang_reserved_mib(a100), 512 + 6144 + 64 + 128);
}

TEST(SglangKvBudget, ChunkAndGraphDefaultsByMemoryTier) {
  EXPECT_EQ(sglang_defaults(kH100Mib, 1).chunked_prefill_size, 8192);
  EXPECT_EQ(sglang_defaults(kH100Mib, 1).cuda_graph_max_bs, 256);
  EXPECT_EQ(sglang_defaults(kH100Mib, 4).cuda_graph_max_bs, 512);
  EXPECT_EQ(sglang_defaults(24 * 1024, 2).cuda_graph_max_bs, 24);
  EXPECT_EQ(sglang_defaults(183359, 1).chunked_prefill_size, 16384);  // B200
}

std::string qwen_scenario(const std::string& layout, const std::string& extra_serving = "") {
  return "schema: 1\nname: sglang-budget\nmodel: qwen3-32b\ncluster: h100-1x8\nprecision: {weights: bf16}\n"
         "parallelism: {attention: " +
         layout + "}\nserving: {batching: prefill_first" + extra_serving +
         "}\nengine: {name: sglang}\n"
         "workload: {concurrency: 16, requests: 16, input_len: {dist: fixed, value: 2048}, output_len: "
         "{dist: "
         "fixed, value: 512}}\ncalibration: datasheet\n";
}

// Qwen3-32B's BF16 weights by hand: untied embedding and LM head 151,936 x 5,120 each; per layer q
// 5,120 x 8,192, k and v 5,120 x 1,024, o 8,192 x 5,120, the SwiGLU FFN 3 x 5,120 x 25,600 (norms not
// counted).
constexpr double kQwenWeightBytes =
    2.0 *
    (2.0 * 151936 * 5120 + 64.0 * (5120.0 * 8192 + 2.0 * 5120 * 1024 + 8192.0 * 5120 + 3.0 * 5120 * 25600));

TEST(SglangKvBudget, Qwen3_32bAtTp1OnAnH100GetsTheKvTokensSglangWouldAllocate) {
  const Scenario s =
      load_scenario(qwen_scenario("{tp: 1, dp: 1}"), "sglang-budget.yaml", "", std::vector<std::string>{});
  EXPECT_DOUBLE_EQ(s.serving.memory_fraction, 0.835);
  EXPECT_EQ(s.engine.memory_fraction_from, SettingOrigin::kEngineDefault);
  const RunPlan plan = build_run(s);
  EXPECT_DOUBLE_EQ(plan.memory.weight_bytes_per_device, kQwenWeightBytes);  // 65.52 GB
  // 0.835 x 81,559 MiB = 71.41 GB static, less 65.52 GB of weights, at 64 layers x 2 x 8 heads x 128 x 2 B.
  const double kv_bytes = 0.835 * kH100Mib * 1048576 - kQwenWeightBytes;
  EXPECT_EQ(plan.memory.kv_capacity_tokens, static_cast<long long>(kv_bytes / 262144));
  EXPECT_EQ(plan.memory.kv_capacity_tokens, 22457);
}

TEST(SglangKvBudget, Qwen3_32bAtTp8HoldsAnEighthOfWeightsAndKvPerGpu) {
  const Scenario s =
      load_scenario(qwen_scenario("{tp: 8, dp: 1}"), "sglang-budget.yaml", "", std::vector<std::string>{});
  EXPECT_DOUBLE_EQ(s.serving.memory_fraction, 0.818);
  const RunPlan plan = build_run(s);
  EXPECT_DOUBLE_EQ(plan.memory.weight_bytes_per_device, kQwenWeightBytes / 8);
  // One KV head per GPU: 64 x 2 x 1 x 128 x 2 B = 32,768 B per token.
  const double kv_bytes = 0.818 * kH100Mib * 1048576 - kQwenWeightBytes / 8;
  EXPECT_EQ(plan.memory.kv_capacity_tokens, static_cast<long long>(kv_bytes / 32768));
  EXPECT_EQ(plan.memory.kv_capacity_tokens, 1884938);
}

TEST(SglangKvBudget, AGivenMemoryFractionIsSglangsMemFractionStaticOfTheReportedMemory) {
  const Scenario s = load_scenario(qwen_scenario("{tp: 1, dp: 1}", ", memory_fraction: 0.85"),
                                   "sglang-budget.yaml", "", std::vector<std::string>{});
  EXPECT_EQ(s.engine.memory_fraction_from, SettingOrigin::kScenario);
  EXPECT_EQ(build_run(s).memory.kv_capacity_tokens,
            static_cast<long long>((0.85 * kH100Mib * 1048576 - kQwenWeightBytes) / 262144));
}

TEST(SglangKvBudget, WithoutAnEngineSemsimsFractionOfTheDatasheetMemoryStays) {
  std::string text = qwen_scenario("{tp: 1, dp: 1}");
  text.replace(text.find("engine: {name: sglang}"), 22, "engine: {name: none}");
  const Scenario s = load_scenario(text, "sglang-budget.yaml", "", std::vector<std::string>{});
  EXPECT_DOUBLE_EQ(s.serving.memory_fraction, 0.90);
  EXPECT_EQ(build_run(s).memory.kv_capacity_tokens,
            static_cast<long long>((0.9 * 80e9 - kQwenWeightBytes) / 262144));  // 24,708
}

}  // namespace
}  // namespace semsim
