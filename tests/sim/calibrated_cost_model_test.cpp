// The calibrated cost model: which table prices which part of an operator, at which coordinates,
// and the roofline for every part a profile has no table of.
#include "sim/calibrated_cost_model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "calibrate/format/kernels.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

using test::h200;

// A table of seconds = scale * x^0.5 [* y^0.5] over a wide grid: PCHIP in log-log space reproduces
// it exactly between grid points, so expected values are closed-form.
KernelTable law_table_of_shape(const std::string& kernel, const std::string& shape, double scale,
                               const std::string& dtype = "bf16") {
  const KernelSpec& spec = *find_kernel_spec(kernel);
  KernelTable t;
  t.kernel = kernel;
  t.shape = shape;
  t.dtype = dtype;
  const std::vector<double> grid{1, 16, 256, 4096, 65536};
  for (const auto axis : spec.axes) t.axes.push_back({std::string(axis), grid});
  for (double x : grid) {
    if (spec.axes.size() == 1) {
      t.seconds.push_back(scale * std::sqrt(x));
      continue;
    }
    for (double y : grid) t.seconds.push_back(scale * std::sqrt(x * y));
  }
  return t;
}

// The same for an operator-scope table of `model`'s shape.
KernelTable law_table(const std::string& kernel, const MoeModel& model, double scale,
                      const std::string& dtype = "bf16") {
  return law_table_of_shape(kernel, kernel_shape(kernel, model), scale, dtype);
}

double law(double scale, double x, double y = 1) {
  return scale * std::sqrt(x * y);
}

struct Fixture {
  MoeModel model;
  CalibrationProfile profile;
  Precision precision;
  explicit Fixture(const std::string& model_name)
      : model(model_preset(model_name)), profile(CalibrationProfile::datasheet(h200())) {}
  CalibratedCostModel calibrated(bool extrapolate = false) const {
    return CalibratedCostModel(model, h200(), profile, precision, extrapolate);
  }
  RooflineCostModel roofline() const { return RooflineCostModel(model, h200(), profile, precision); }
};

TEST(CalibratedCostModel, WithoutTablesIsTheRoofline) {
  const Fixture f("deepseek-v2-lite");
  const auto calibrated = f.calibrated();
  const auto roofline = f.roofline();
  const std::vector<SequenceChunk> batch{{1, 500}, {300, 0}};
  const std::vector<int> experts{3, 0, 7, 1};
  EXPECT_EQ(calibrated.attention(2, batch), roofline.attention(2, batch));
  EXPECT_EQ(calibrated.gate(77), roofline.gate(77));
  EXPECT_EQ(calibrated.routed_experts(experts), roofline.routed_experts(experts));
  EXPECT_EQ(calibrated.shared_experts(77), roofline.shared_experts(77));
  EXPECT_EQ(calibrated.dense_ffn(77), roofline.dense_ffn(77));
  EXPECT_EQ(calibrated.lm_head(77), roofline.lm_head(77));
  EXPECT_EQ(calibrated.collective_overhead(), f.profile.collective_overhead);
}

TEST(CalibratedCostModel, AttentionIsProjectionsPlusOneDecodeKernelPlusAPrefillKernelPerChunk) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = {law_table("attention_projections", f.model, 1e-6),
                       law_table("attention_decode", f.model, 2e-7),
                       law_table("attention_prefill", f.model, 3e-7)};
  const auto model = f.calibrated();
  // Two decodes after 99 and 299 cached tokens (they attend 100 and 300: mean 200), a first prefill
  // chunk of 128 and a second chunk of 64 after 100 tokens (164 keys).
  const std::vector<SequenceChunk> batch{{1, 99}, {1, 299}, {128, 0}, {64, 100}, {0, 5}};
  const double expected = law(1e-6, 194) + law(2e-7, 2, 200) + law(3e-7, 128, 128) + law(3e-7, 64, 164);
  EXPECT_NEAR(model.attention(3, batch), expected, 1e-12 * expected);
  EXPECT_EQ(model.attention(3, std::vector<SequenceChunk>{{0, 10}}), 0.0);
}

TEST(CalibratedCostModel, AttentionPartsWithoutATableComeFromTheRoofline) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = {law_table("attention_decode", f.model, 2e-7)};
  const auto model = f.calibrated();
  const auto roofline = f.roofline();
  const std::vector<SequenceChunk> decode{{1, 99}}, prefill{{128, 0}};
  const std::vector<SequenceChunk> batch{decode[0], prefill[0]};
  const double expected =
      roofline.seconds(attention_projection_cost(f.model, 129, f.precision), KernelKind::kGemm) +
      law(2e-7, 1, 100) +
      roofline.seconds(attention_core_cost(f.model, 3, prefill, f.precision), KernelKind::kAttention);
  EXPECT_NEAR(model.attention(3, batch), expected, 1e-12 * expected);
}

TEST(CalibratedCostModel, ElementwiseKernelsAreALaunchFloorEachAndTheirBytesAtTheMemoryBandwidth) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = {law_table("attention_projections", f.model, 1e-6)};  // tables price no norm
  const double bandwidth = h200().hbm_bandwidth * f.profile.memory_efficiency;
  // 10 tokens around attention: four kernels, 391,680 bytes (tests/models/operator_costs_test.cpp).
  EXPECT_DOUBLE_EQ(f.calibrated().elementwise(ElementwiseSite::kAroundAttention, 10),
                   4 * f.profile.kernel_overhead + 391'680.0 / bandwidth);
  EXPECT_DOUBLE_EQ(f.calibrated().elementwise(ElementwiseSite::kDenseFfn, 10),
                   f.profile.kernel_overhead + 656'640.0 / bandwidth);
  EXPECT_EQ(f.calibrated().elementwise(ElementwiseSite::kFinalNorm, 0), 0.0);
}

TEST(CalibratedCostModel, SlidingWindowLayersCapTheDecodeContext) {
  Fixture f("gpt-oss-120b");  // every other layer (from 0) sees a window of 128 tokens
  f.profile.kernels = {law_table("attention_projections", f.model, 1e-6),
                       law_table("attention_decode", f.model, 2e-7)};
  const auto model = f.calibrated();
  const std::vector<SequenceChunk> batch{{1, 999}};
  EXPECT_NEAR(model.attention(0, batch), law(1e-6, 1) + law(2e-7, 1, 128), 1e-15);
  EXPECT_NEAR(model.attention(1, batch), law(1e-6, 1) + law(2e-7, 1, 1000), 1e-15);
}

TEST(CalibratedCostModel, RoutedExpertsAddThePermutationsWhenMeasured) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = {law_table("routed_experts", f.model, 1e-6), law_table("token_permute", f.model, 1e-8),
                       law_table("token_unpermute", f.model, 2e-8)};
  const auto model = f.calibrated();
  const std::vector<int> experts{3, 0, 7, 1, 0};  // 3 active experts, 11 token copies
  EXPECT_NEAR(model.routed_experts(experts), law(1e-6, 3, 11) + law(1e-8, 11) + law(2e-8, 11), 1e-15);
  EXPECT_EQ(model.routed_experts(std::vector<int>{0, 0}), 0.0);
  // Permutation tables alone do not replace the roofline of the grouped GEMM.
  f.profile.kernels.erase(f.profile.kernels.begin());
  EXPECT_EQ(f.calibrated().routed_experts(experts), f.roofline().routed_experts(experts));
}

TEST(CalibratedCostModel, FindsTablesByTheModelsShapeAndTheWeightPrecision) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = {law_table("lm_head", f.model, 1e-6, "bf16"),
                       law_table("lm_head", f.model, 5e-7, "fp8"), law_table("gate", f.model, 1e-7, "bf16"),
                       law_table("shared_experts", f.model, 3e-7, "bf16")};
  EXPECT_NEAR(f.calibrated().lm_head(16), law(1e-6, 16), 1e-18);
  EXPECT_NEAR(f.calibrated().shared_experts(16), law(3e-7, 16), 1e-18);
  f.precision.weights = f.precision.experts =
      WeightFormat::kFp8;  // FP8 weights: the fp8 tables, and the roofline where there is none
  EXPECT_NEAR(f.calibrated().lm_head(16), law(5e-7, 16), 1e-18);
  EXPECT_EQ(f.calibrated().shared_experts(16), f.roofline().shared_experts(16));
  EXPECT_NEAR(f.calibrated().gate(16), law(1e-7, 16), 1e-18) << "the router stays in BF16";
  // Another model's shapes find nothing.
  Fixture other("qwen3-30b-a3b");
  other.profile.kernels = f.profile.kernels;
  EXPECT_EQ(other.calibrated().gate(16), other.roofline().gate(16));
}

TEST(CalibratedCostModel, RefusesFarOutsideTheGridUnlessAllowed) {
  Fixture f("deepseek-v2-lite");
  f.profile.name = "h200-test";
  f.profile.kernels = {law_table("lm_head", f.model, 1e-6)};
  try {
    f.calibrated().lm_head(200000);
    FAIL() << "answered far outside the grid";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("calibration profile 'h200-test': lm_head 'hidden=2048 vocabulary=102400' "
                                   "bf16: tokens = 200000 is far outside the measured grid [1, 65536]"),
        std::string::npos)
        << e.what();
  }
  EXPECT_NEAR(f.calibrated(true).lm_head(200000), law(1e-6, 200000), 1e-12);
}

std::string gemm_shape(const GemmShape& g) {
  return fmt::format("n={} k={}", g.n, g.k);
}

// Kernel-scope tables of every GEMM `model` runs (each shape its own scale) and of its fused
// experts: a profile as a database import gives it.
std::vector<KernelTable> kernel_scope_tables(const MoeModel& model) {
  std::vector<GemmShape> gemms = attention_projection_gemms(model);
  gemms.push_back(gate_gemm(model));
  gemms.push_back(lm_head_gemm(model));
  for (const long long ffn : {static_cast<long long>(model.shared_experts) * model.shared_expert_ffn,
                              static_cast<long long>(model.dense_ffn)})
    for (const GemmShape& g : swiglu_gemms(model, ffn)) gemms.push_back(g);
  std::vector<KernelTable> tables;
  for (std::size_t i = 0; i < gemms.size(); ++i)
    tables.push_back(law_table_of_shape("gemm", gemm_shape(gemms[i]), 1e-7 * static_cast<double>(i + 1)));
  tables.push_back(
      law_table_of_shape("moe_experts",
                         fmt::format("hidden={} ffn={} experts={} top_k={} distribution=balanced",
                                     model.hidden, model.expert_ffn, model.routed_experts, model.top_k),
                         2e-7));
  return tables;
}

// Every operator of one MoE layer (and the LM head) at a mixed batch.
std::map<std::string, double> operator_seconds(const CalibratedCostModel& costs) {
  const std::vector<SequenceChunk> batch{{1, 99}, {1, 299}, {128, 0}};
  return {{"attention", costs.attention(1, batch)},
          {"router", costs.gate(130)},
          {"routed experts", costs.routed_experts(std::vector<int>{40, 0, 70, 20, 0, 3})},
          {"shared experts", costs.shared_experts(130)},
          {"dense FFN", costs.dense_ffn(130)},
          {"LM head", costs.lm_head(130)}};
}

// Doubling the times of the one table `is_scaled` picks doubles operator `changed` and leaves the
// others as they were.
void expect_only_doubled(Fixture f, const std::function<bool(const KernelTable&)>& is_scaled,
                         const std::string& changed) {
  const std::map<std::string, double> before = operator_seconds(f.calibrated());
  int scaled = 0;
  for (KernelTable& table : f.profile.kernels) {
    if (!is_scaled(table)) continue;
    ++scaled;
    for (std::optional<double>& seconds : table.seconds) *seconds *= 2;
  }
  ASSERT_EQ(scaled, 1);
  const std::map<std::string, double> after = operator_seconds(f.calibrated());
  for (const auto& [name, seconds] : before) {
    if (name == changed)
      EXPECT_NEAR(after.at(name), 2 * seconds, 1e-12 * seconds) << name;
    else
      EXPECT_EQ(after.at(name), seconds) << name;
  }
}

// The fused MoE kernel's rows of fewer experts are EP ranks given the group's whole batch: they
// price an allgather dispatch. A rank given only its own copies runs like the kernel of all the
// model's experts at its load per expert, for its share of them.
TEST(CalibratedCostModel, AnEpRanksExpertsRunAsTheWholeKernelAtTheirLoadPerExpert) {
  Fixture f("deepseek-v2-lite");  // 64 routed experts
  KernelTable t;
  t.kernel = "moe_experts";
  t.shape = fmt::format("hidden={} ffn={} experts=64 top_k={} distribution=balanced", f.model.hidden,
                        f.model.expert_ffn, f.model.top_k);
  t.dtype = "bf16";
  const std::vector<double> copies{16, 256, 4096, 65536};
  t.axes = {{"experts", {8, 64}}, {"tokens", copies}};
  for (const double y : copies) t.seconds.push_back(1e-6 * std::sqrt(y));  // 8 experts of an EP rank
  for (const double y : copies) t.seconds.push_back(1e-8 * y);             // all 64 experts, no EP
  f.profile.kernels.push_back(t);
  const std::vector<int> histogram{100, 100, 100, 100, 100, 100, 100, 100};
  EXPECT_NEAR(f.calibrated().routed_experts(histogram), 8.0 / 64 * 1e-8 * (800.0 * 64 / 8), 1e-15);
  const CalibratedCostModel whole_batch(f.model, h200(), f.profile, f.precision, false, true);
  EXPECT_NEAR(whole_batch.routed_experts(histogram), 1e-6 * std::sqrt(800.0), 1e-15);
}

// FP8 weights with NVFP4 routed experts (issue 40): the experts from the NVFP4 MoE table, the
// shared experts' GEMMs from FP8's; without tables the experts' roofline runs at the FP4 peak.
TEST(CalibratedCostModel, Fp4ExpertsArePricedByTheirOwnTables) {
  const Device& b200 = test::b200();
  const MoeModel model = model_preset("deepseek-v2-lite");
  CalibrationProfile profile = CalibrationProfile::datasheet(b200);
  for (const auto& [dtype, scale] : {std::pair<std::string, double>{"fp8", 2e-8}, {"nvfp4", 1e-8}}) {
    KernelTable t;
    t.kernel = "moe_experts";
    t.shape = fmt::format("hidden={} ffn={} experts=64 top_k={} distribution=balanced", model.hidden,
                          model.expert_ffn, model.top_k);
    t.dtype = dtype;
    const std::vector<double> copies{16, 256, 4096, 65536};
    t.axes = {{"experts", {64}}, {"tokens", copies}};
    for (const double y : copies) t.seconds.push_back(scale * y);
    profile.kernels.push_back(t);
  }
  Precision precision;
  precision.weights = WeightFormat::kFp8;
  precision.experts = WeightFormat::kNvfp4;
  const std::vector<int> histogram{100, 100, 100, 100, 100, 100, 100, 100};
  EXPECT_NEAR(CalibratedCostModel(model, b200, profile, precision, false).routed_experts(histogram),
              8.0 / 64 * 1e-8 * (800.0 * 64 / 8), 1e-15);
  precision.experts = WeightFormat::kFp8;
  EXPECT_NEAR(CalibratedCostModel(model, b200, profile, precision, false).routed_experts(histogram),
              8.0 / 64 * 2e-8 * (800.0 * 64 / 8), 1e-15);
  // The roofline of a compute-bound batch: FLOPs over the FP4 peak (9 PFLOP/s dense on the B200).
  const CalibrationProfile datasheet = CalibrationProfile::datasheet(b200);
  precision.experts = WeightFormat::kNvfp4;
  const std::vector<int> busy(64, 100000);
  const OpCost cost = routed_experts_cost(model, busy, precision);
  EXPECT_NEAR(RooflineCostModel(model, b200, datasheet, precision).routed_experts(busy),
              datasheet.kernel_overhead + cost.flops / (9e15 * datasheet.gemm_efficiency), 1e-12);
  EXPECT_GT(cost.flops / (9e15 * datasheet.gemm_efficiency),
            cost.bytes / (b200.hbm_bandwidth * datasheet.memory_efficiency))
      << "compute-bound";
}

TEST(CalibratedCostModel, ScalingOneKernelTableScalesOnlyTheOperatorsMadeOfIt) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = kernel_scope_tables(f.model);
  const std::string head = gemm_shape(lm_head_gemm(f.model));
  expect_only_doubled(
      f, [&](const KernelTable& t) { return t.kernel == "gemm" && t.shape == head; }, "LM head");
  expect_only_doubled(
      f, [](const KernelTable& t) { return t.kernel == "moe_experts"; }, "routed experts");
}

TEST(CalibratedCostModel, OperatorsComposedFromKernelTablesAreTheirGemms) {
  Fixture f("deepseek-v2-lite");
  f.profile.kernels = kernel_scope_tables(f.model);
  const auto model = f.calibrated();
  // The LM head is one GEMM, the shared experts two (the fused gate/up and the down projection).
  const std::vector<GemmShape> gemms = attention_projection_gemms(f.model);
  const double head_scale = 1e-7 * static_cast<double>(gemms.size() + 2);
  EXPECT_NEAR(model.lm_head(130), law(head_scale, 130), 1e-12 * law(head_scale, 130));
  const double shared = law(1e-7 * static_cast<double>(gemms.size() + 3), 130) +
                        law(1e-7 * static_cast<double>(gemms.size() + 4), 130);
  EXPECT_NEAR(model.shared_experts(130), shared, 1e-12 * shared);
  // The fused experts at (active experts, token copies).
  EXPECT_NEAR(model.routed_experts(std::vector<int>{40, 0, 70, 20, 0, 3}), law(2e-7, 4, 133),
              1e-12 * law(2e-7, 4, 133));
  for (const OperatorCoverage& op : model.coverage()) {
    const bool from_roofline =
        op.name == "attention decode" || op.name == "attention prefill" || op.name == "elementwise kernels";
    EXPECT_EQ(op.coverage, from_roofline ? Coverage::kRoofline : Coverage::kMeasured)
        << op.name << ": " << op.source;
  }
}

}  // namespace
}  // namespace semsim
