// The kernel library: the exact shape's table where the profile has one, else the cross-shape model
// over the nearest measured shapes, which recovers a shape held out of a synthetic table family
// whose efficiency is log-linear in the shape.
#include "calibrate/fit/kernel_library.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/fit/moe_shape_model.hpp"
#include "models/presets.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

using test::h200;

std::string gemm_shape(double n, double k) {
  return fmt::format("n={} k={}", n, k);
}

// Achieved fraction of the roofline: log-linear in log n and log k at every token count, and
// rising with the tokens as small GEMMs leave the GPU idle.
double efficiency(double n, double k, double tokens) {
  return 0.8 * std::pow(n / 16384, 0.15) * std::pow(k / 16384, 0.1) * tokens / (tokens + 16);
}

double truth(double n, double k, double tokens) {
  return kernel_roofline_seconds("gemm", gemm_shape(n, k), "bf16", tokens, 0, h200()) /
         efficiency(n, k, tokens);
}

const std::vector<double> kShapeGrid{1024, 2048, 4096, 8192, 16384};
const std::vector<double> kTokens{1, 4, 16, 64, 256, 1024, 4096, 16384};

// BF16 GEMM tables of every (n, k) of kShapeGrid but `held_out`, their times the truth's.
CalibrationProfile gemm_family(const std::pair<double, double>& held_out) {
  CalibrationProfile p = CalibrationProfile::datasheet(h200());
  p.name = "synthetic";
  for (const double n : kShapeGrid)
    for (const double k : kShapeGrid) {
      if (std::pair(n, k) == held_out) continue;
      KernelTable t;
      t.kernel = "gemm";
      t.shape = gemm_shape(n, k);
      t.axes = {{"tokens", kTokens}};
      for (const double tokens : kTokens) t.seconds.push_back(truth(n, k, tokens));
      p.kernels.push_back(std::move(t));
    }
  return p;
}

TEST(KernelLibrary, TheCrossShapeModelRecoversAHeldOutShape) {
  const double n = 4096, k = 4096;
  const CalibrationProfile profile = gemm_family({n, k});
  const KernelLibrary library(profile, h200(), false);
  const auto curve = library.curve("gemm", gemm_shape(n, k), "bf16");
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(curve->coverage(), Coverage::kAcrossShapes);
  // Its four nearest shapes are one step away in n or in k, on either side.
  EXPECT_EQ(curve->source(), "across: n=2048 k=4096; n=4096 k=2048; n=4096 k=8192; n=8192 k=4096");
  // The model's log efficiency is the inverse-squared-distance mean of the neighbours'. For a
  // log-linear efficiency and neighbours placed symmetrically about the shape, that mean is the
  // shape's own, so the model's error is the mean of the neighbours' own interpolation errors: none
  // at their grid points (up to rounding), and at most the worst of theirs between them.
  struct Neighbour {
    double n, k;
    KernelTableLookup lookup;
  };
  std::vector<Neighbour> neighbours;
  for (const auto& [dn, dk] : {std::pair{0.5, 1.0}, {2.0, 1.0}, {1.0, 0.5}, {1.0, 2.0}})
    neighbours.push_back(
        {n * dn, k * dk,
         KernelTableLookup(*profile.find_kernel("gemm", gemm_shape(n * dn, k * dk), "bf16"), "t", false)});
  for (double tokens = 1; tokens <= 16384; tokens *= std::sqrt(2.0)) {
    double worst_neighbour = 0;
    for (const Neighbour& b : neighbours)
      worst_neighbour =
          std::max(worst_neighbour, std::abs(std::log(b.lookup.seconds(tokens) / truth(b.n, b.k, tokens))));
    EXPECT_LE(std::abs(std::log(curve->seconds(tokens) / truth(n, k, tokens))), worst_neighbour + 1e-12)
        << tokens;
  }
  for (const double tokens : kTokens)
    EXPECT_NEAR(curve->seconds(tokens), truth(n, k, tokens), 1e-12 * truth(n, k, tokens));
}

TEST(KernelLibrary, TheExactShapeIsMeasuredUnlessLeftOut) {
  const CalibrationProfile profile = gemm_family({0, 0});
  const KernelLibrary library(profile, h200(), false);
  const auto exact = library.curve("gemm", gemm_shape(4096, 4096), "bf16");
  ASSERT_NE(exact, nullptr);
  EXPECT_EQ(exact->coverage(), Coverage::kMeasured);
  EXPECT_EQ(exact->source(), "n=4096 k=4096");
  EXPECT_DOUBLE_EQ(exact->seconds(64), truth(4096, 4096, 64));
  // Left out, as leave-one-shape-out validation asks: its neighbours answer.
  const auto without = library.curve("gemm", gemm_shape(4096, 4096), "bf16", /*without_own_shape=*/true);
  ASSERT_NE(without, nullptr);
  EXPECT_EQ(without->coverage(), Coverage::kAcrossShapes);
  EXPECT_NEAR(without->seconds(64), truth(4096, 4096, 64), 1e-12 * truth(4096, 4096, 64));
}

TEST(KernelLibrary, AnswersOnlyForTheKernelDtypeAndKindOfShapeMeasured) {
  CalibrationProfile profile = gemm_family({0, 0});
  KernelTable experts;
  experts.kernel = "moe_experts";
  experts.shape = "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=power_law_1.2";
  experts.axes = {{"experts", {8, 64}}, {"tokens", {1, 1024}}};
  experts.seconds = {1e-5, 2e-5, 3e-5, 4e-5};
  profile.kernels.push_back(experts);
  const KernelLibrary library(profile, h200(), false);
  EXPECT_TRUE(library.has("gemm", "bf16"));
  EXPECT_FALSE(library.has("gemm", "fp8"));
  EXPECT_EQ(library.curve("gemm", gemm_shape(4096, 4096), "fp8"), nullptr);
  EXPECT_EQ(library.curve("mla_decode", "heads=16", "bf16"), nullptr);
  // A word in the shape must match: balanced routing is not interpolated from power-law routing.
  EXPECT_EQ(
      library.curve("moe_experts", "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced", "bf16"),
      nullptr);
  const auto other_ffn = library.curve(
      "moe_experts", "hidden=2048 ffn=2048 experts=64 top_k=6 distribution=power_law_1.2", "bf16");
  ASSERT_NE(other_ffn, nullptr);
  EXPECT_EQ(other_ffn->coverage(), Coverage::kAcrossShapes);
}

// The fused MoE kernel's rows of few experts (EP ranks) were measured at small loads only: beyond
// them it runs no faster than it did at the most work measured there, and no faster than the
// no-EP row's rate at its largest load.
TEST(KernelLibrary, MoeExpertsBeyondTheMeasuredLoadRunAtTheBestRate) {
  CalibrationProfile profile = CalibrationProfile::datasheet(h200());
  KernelTable experts;
  experts.kernel = "moe_experts";
  experts.shape = "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced";
  experts.axes = {{"experts", {8, 64}}, {"tokens", {64, 1024, 16384}}};
  // Eight experts measured to 1024 copies; all 64 to 16384 copies at 1e9 copies per second.
  experts.seconds = {2e-4, 5e-4, std::nullopt, 1e-5, 1.2e-5, 16384e-9};
  profile.kernels.push_back(experts);
  const KernelLibrary library(profile, h200(), false);
  const auto curve = library.curve("moe_experts", experts.shape, "bf16");
  ASSERT_NE(curve, nullptr);
  EXPECT_DOUBLE_EQ(curve->seconds(8, 1024), 5e-4);  // measured
  // Beyond 1024 copies: the time at 1024 until the best rate takes longer, then that rate.
  EXPECT_DOUBLE_EQ(curve->seconds(8, 2048), 5e-4);
  EXPECT_DOUBLE_EQ(curve->seconds(8, 1e6), 1e-3);
  EXPECT_DOUBLE_EQ(curve->seconds(64, 65536), 65536e-9);
  // Between rows, beyond the load both measured: the same rule from the interpolated time there.
  const double between = curve->seconds(16, 1024);
  EXPECT_GT(between, 1.2e-5);
  EXPECT_LT(between, 5e-4);
  EXPECT_DOUBLE_EQ(curve->seconds(16, 4096), std::max(between, 4096e-9));
  // Monotone in the work across the boundary.
  double previous = 0;
  for (double copies = 64; copies < 1e6; copies *= 1.5) {
    const double seconds = curve->seconds(8, copies);
    EXPECT_GE(seconds, previous) << copies;
    previous = seconds;
  }
}

// The best rate is the table's, not that of the row of all experts at its largest load: with many
// experts that row may still be weight-bound there (FlashInfer CUTLASS, 512 experts, where an EP row
// continued at that rate came back 10-22x too slow at 12k-16k tokens).
TEST(KernelLibrary, MoeExpertsBeyondAnEpRowRunAtTheTablesBestRateNotTheWidestRows) {
  CalibrationProfile profile = CalibrationProfile::datasheet(h200());
  KernelTable experts;
  experts.kernel = "moe_experts";
  experts.shape = "hidden=8192 ffn=2560 experts=512 top_k=22 distribution=balanced";
  experts.axes = {{"experts", {8, 512}}, {"tokens", {1024, 65536, 262144}}};
  // Eight experts to 65,536 copies at 2e7 copies per second; all 512 weight-bound to 262,144 at 4e6.
  experts.seconds = {3e-4, 65536 / 2e7, std::nullopt, 5e-3, 2e-2, 262144 / 4e6};
  profile.kernels.push_back(experts);
  const KernelLibrary library(profile, h200(), false);
  const auto curve = library.curve("moe_experts", experts.shape, "bf16");
  ASSERT_NE(curve, nullptr);
  // 1.5x beyond the eight experts' most work: that work at their own (the table's best) rate, not
  // at the 512 experts' 4e6 per second (which would be 5x slower).
  EXPECT_DOUBLE_EQ(curve->seconds(8, 98304), 98304 / 2e7);
}

// Without EP a rank's few experts run as its share of the kernel of all the shape's experts at the
// same load per expert; a shape not measured asks its neighbours at their own rows of all their
// experts (not at their EP rows, which were given the whole batch), where the roofline halves.
TEST(KernelLibrary, MoeExpertsWithoutEpAskTheNeighboursRowsOfAllTheirExperts) {
  CalibrationProfile profile = CalibrationProfile::datasheet(h200());
  KernelTable neighbour;
  neighbour.kernel = "moe_experts";
  neighbour.shape = "hidden=2048 ffn=1408 experts=128 top_k=6 distribution=balanced";
  const std::vector<double> copies{64, 1024, 16384, 262144};
  neighbour.axes = {{"experts", {16, 128}}, {"tokens", copies}};
  for (const double y : copies) neighbour.seconds.push_back(1e-3 + 0 * y);  // an EP rank: slow
  for (const double y : copies) neighbour.seconds.push_back(1e-8 * y);      // all 128 experts
  profile.kernels.push_back(neighbour);
  const KernelLibrary library(profile, h200(), false);
  const auto curve =
      library.moe_experts_without_ep("hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced", "bf16");
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(curve->coverage(), Coverage::kAcrossShapes);
  // 8 experts with 100 copies each: 1/8 of the 64-expert kernel at 6,400 slots, which is the
  // neighbour's 128-expert kernel at 12,800 (the same load per expert) above the launch floor (0.95
  // of the least time measured, 64 copies at 1e-8 s each), scaled by half the work to the exponent
  // larger GEMMs run at (kMoeWorkExponent).
  const double floor = kMoeFloorShare * 64e-8;
  EXPECT_NEAR(curve->seconds(8, 800),
              8.0 / 64 * (floor + (1e-8 * 12800 - floor) * std::pow(0.5, kMoeWorkExponent)), 1e-15);
}

TEST(KernelLibrary, CoverageNames) {
  EXPECT_EQ(coverage_name(Coverage::kMeasured), "measured");
  EXPECT_EQ(coverage_name(Coverage::kAcrossShapes), "interpolated");
  EXPECT_EQ(coverage_name(Coverage::kRoofline), "roofline");
}

}  // namespace
}  // namespace semsim
