// The fused MoE kernel's cross-shape model: a synthetic family of shapes whose time follows a known
// law (a launch floor plus the roofline work at an efficiency that depends only on the EP degree and
// the copies per local expert) gives back a shape left out of it, at every EP degree, from
// neighbours of other expert counts; other backends' shapes are never its neighbours; a whole model
// left out (moe_model_holdout.hpp) is predicted from the other models alone.
#include "calibrate/fit/moe_shape_model.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/fit/moe_model_holdout.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

using test::h200;

std::string moe_shape(double hidden, double ffn, double experts) {
  return fmt::format("hidden={} ffn={} experts={} top_k=4 distribution=balanced", hidden, ffn, experts);
}

// Achieved fraction of the roofline: rising with the copies per local expert (weight-bound GEMMs
// of few rows), falling a little with the EP degree (copies piled on a rank's first expert).
double efficiency(double ep, double load) {
  return 0.8 * (load + 8) / (load + 64) * (1 - 0.02 * std::log2(ep));
}

const std::vector<double> kEp{1, 2, 4, 8, 16, 32};
const std::vector<double> kHidden{1024, 2048, 4096}, kFfn{512, 1024, 2048}, kExperts{32, 128};

double work(const std::string& shape, double x, double y) {
  return kernel_roofline_seconds("moe_experts", shape, "bf16", x, y, h200());
}

// The work's time as the law takes it: growing as work^kMoeWorkExponent (in microseconds), as larger
// expert GEMMs reach a higher rate.
double law_work(const std::string& shape, double x, double y) {
  return 1e-6 * std::pow(work(shape, x, y) / 1e-6, kMoeWorkExponent);
}

std::vector<double> copies_grid() {
  std::vector<double> copies;
  for (double y = 1; y <= 1 << 20; y *= 2) copies.push_back(y);
  return copies;
}

// The law's launch floor is where the model takes it (kMoeFloorShare of the least time measured),
// so that the law is exactly what the model scales: floor = share (floor + least work / efficiency).
double law_floor() {
  static const double floor = [] {
    double least = INFINITY;
    for (const double h : kHidden)
      for (const double f : kFfn)
        for (const double e : kExperts)
          for (const double ep : kEp)
            for (const double y : copies_grid())
              least = std::min(least, law_work(moe_shape(h, f, e), e / ep, y) / efficiency(ep, y * ep / e));
    return kMoeFloorShare * least / (1 - kMoeFloorShare);
  }();
  return floor;
}

double truth(const std::string& shape, double experts, double x, double y) {
  const double ep = experts / x;
  return law_floor() + law_work(shape, x, y) / efficiency(ep, y / x);
}

KernelTable family_table(double h, double f, double e, const std::string& backend, double slowdown = 1) {
  KernelTable t;
  t.kernel = "moe_experts";
  t.shape = moe_shape(h, f, e);
  t.implementation = backend;
  std::vector<double> rows;
  for (const double ep : kEp) rows.push_back(e / ep);
  std::sort(rows.begin(), rows.end());
  t.axes = {{"experts", rows}, {"tokens", copies_grid()}};
  for (const double x : rows)
    for (const double y : copies_grid()) t.seconds.push_back(slowdown * truth(t.shape, e, x, y));
  return t;
}

// Triton's tables of every (hidden, ffn) at 32 and 128 experts, and a CUTLASS table twice as slow
// nearer the shape left out (64 experts), which must not be asked.
CalibrationProfile family() {
  CalibrationProfile p = CalibrationProfile::datasheet(h200());
  p.name = "synthetic";
  for (const double h : kHidden)
    for (const double f : kFfn)
      for (const double e : kExperts) p.kernels.push_back(family_table(h, f, e, "triton"));
  p.kernels.push_back(family_table(2048, 1024, 64, "cutlass", 2.0));
  p.kernels.back().shape = moe_shape(2048, 1024, 60);
  return p;
}

TEST(MoeShapeModel, RecoversAShapeLeftOutAtEveryEpDegreeFromOtherExpertCounts) {
  const CalibrationProfile profile = family();
  const KernelLibrary library(profile, h200(), false);
  const std::string held_out = moe_shape(2048, 1024, 64);
  const auto curve = library.curve("moe_experts", held_out, "bf16");
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(curve->coverage(), Coverage::kAcrossShapes);
  // Triton, the backend of most shapes: its 32- and 128-expert tables of the same hidden and ffn
  // are nearest (experts weigh kMoeCountWeight), then (ties by name) one step in hidden; never
  // CUTLASS's.
  EXPECT_EQ(curve->source(), "across: " + moe_shape(2048, 1024, 128) + "; " + moe_shape(2048, 1024, 32) +
                                 "; " + moe_shape(1024, 1024, 128) + "; " + moe_shape(1024, 1024, 32));
  // Every neighbour asked at the same EP degree and copies per expert lands on its grid, where the
  // law's time above the floor is the work over the same efficiency: the scaling gives it back.
  for (const double ep : kEp)
    for (double load = 1; load <= 4096; load *= 4) {
      const double x = 64 / ep, y = load * x;
      EXPECT_NEAR(curve->seconds(x, y) / truth(held_out, 64, x, y), 1.0, 1e-9)
          << "ep " << ep << " load " << load;
    }
}

// Of the same law, a shape of twice the largest hidden size: its neighbours scaled by the work ratio
// to kMoeWorkExponent give the law back; its nearest neighbour scaled by the work ratio itself (the
// exponent 1) would be up to 2^0.15 = 11 % too slow.
TEST(MoeShapeModel, ScalesNeighboursByTheirWorkToTheExponentLargerGemmsRun) {
  const CalibrationProfile profile = family();
  const KernelLibrary library(profile, h200(), false);
  const std::string wider = moe_shape(8192, 1024, 128), neighbour = moe_shape(4096, 1024, 128);
  const auto curve = library.curve("moe_experts", wider, "bf16");
  ASSERT_NE(curve, nullptr);
  double worst = 0, worst_linear = 0;
  for (const double ep : kEp)
    for (double load = 1; load <= 4096; load *= 4) {
      const double x = 128 / ep, y = load * x, exact = truth(wider, 128, x, y);
      const double linear = law_floor() + (truth(neighbour, 128, x, y) - law_floor()) * work(wider, x, y) /
                                              work(neighbour, x, y);
      worst = std::max(worst, std::abs(curve->seconds(x, y) / exact - 1));
      worst_linear = std::max(worst_linear, std::abs(linear / exact - 1));
    }
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(worst_linear, 0.08);
}

TEST(MoeShapeModel, AMeasuredShapesOwnBackendPricesItLeftOut) {
  const CalibrationProfile profile = family();
  const KernelLibrary library(profile, h200(), false);
  // CUTLASS's one shape, left out: no other CUTLASS shape, so no model (never Triton's shapes).
  EXPECT_EQ(library.curve("moe_experts", moe_shape(2048, 1024, 60), "bf16", /*without_own_shape=*/true),
            nullptr);
  // A Triton shape left out is priced from Triton's others alone.
  const auto triton = library.curve("moe_experts", moe_shape(2048, 1024, 128), "bf16", true);
  ASSERT_NE(triton, nullptr);
  EXPECT_EQ(triton->source().find("experts=60"), std::string::npos) << triton->source();
}

TEST(MoeShapeModel, ParsesShapesAndPicksTheBackendOfMostShapes) {
  const auto s = MoeShape::parse("hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->hidden, 2048);
  EXPECT_EQ(s->ffn, 1408);
  EXPECT_EQ(s->experts, 64);
  EXPECT_EQ(s->top_k, 6);
  EXPECT_EQ(s->distribution, "balanced");
  EXPECT_FALSE(MoeShape::parse("hidden=2048 ffn=1408 distribution=balanced"));
  EXPECT_FALSE(MoeShape::parse("hidden=2048 ffn=0 experts=64 top_k=6 distribution=balanced"));
  const CalibrationProfile profile = family();
  std::vector<const KernelTable*> tables;
  for (const KernelTable& t : profile.kernels) tables.push_back(&t);
  EXPECT_EQ(moe_default_backend(tables, "balanced"), "triton");
  EXPECT_EQ(moe_default_backend(tables, "power_law_1.2"), "");
  // The launch floor: kMoeFloorShare of the least time of the backend's tables.
  double least = INFINITY;
  for (const KernelTable& t : profile.kernels)
    if (t.implementation == "cutlass")
      for (const auto& seconds : t.seconds) least = std::min(least, *seconds);
  EXPECT_DOUBLE_EQ(moe_launch_floor(tables, "cutlass"), kMoeFloorShare * least);
  EXPECT_EQ(*moe_shape_distance(*s, *s), 0.0);
  EXPECT_FALSE(
      moe_shape_distance(*s, *MoeShape::parse("hidden=2048 ffn=1408 experts=64 top_k=6 distribution=x")));
}

// Leave-whole-model-out: every FFN split of a model is held out together. The held-out model's
// tables run twice as slow as the law: predicted from other models alone (which follow the law) the
// error is exactly 1/2 — a sibling split among the neighbours would pull it below. CUTLASS's one
// model has nothing of its backend to be predicted from: no rows.
TEST(MoeShapeModel, LeaveModelOutPredictsAModelFromOtherModelsAlone) {
  CalibrationProfile profile = family();
  for (KernelTable& table : profile.kernels)
    if (table.implementation == "triton" && table.shape.starts_with("hidden=2048 ") &&
        table.shape.find(" experts=32 ") != std::string::npos)
      for (auto& seconds : table.seconds) *seconds *= 2;
  const std::vector<MoeModelHoldout> result = moe_leave_model_out(profile, h200());
  // Triton: 3 hidden sizes x 2 expert counts, then the pooled row.
  ASSERT_EQ(result.size(), 7u);
  for (const MoeModelHoldout& h : result) {
    EXPECT_EQ(h.backend, "triton");
    EXPECT_EQ(h.dtype, "bf16");
  }
  const MoeModelHoldout& slowed = result[2];
  EXPECT_EQ(slowed.model, "hidden=2048 experts=32 top_k=4");
  EXPECT_EQ(slowed.shapes, 3);  // its three FFN splits
  EXPECT_EQ(slowed.points, 3 * 6 * 21);
  ASSERT_GT(slowed.errors.samples, slowed.points / 2);  // the rest beyond every neighbour's range
  EXPECT_NEAR(slowed.errors.median, 0.5, 1e-9);
  EXPECT_NEAR(slowed.errors.p95, 0.5, 1e-9);
  // A model between others of the law is given back by them (the law's floor is the least time,
  // of the smallest hidden size, held by every fit but that model's).
  const MoeModelHoldout& between = result[3];
  EXPECT_EQ(between.model, "hidden=2048 experts=128 top_k=4");
  ASSERT_GT(between.errors.samples, 0);
  EXPECT_LT(between.errors.p95, 1e-9);
  EXPECT_EQ(result.back().model, "all");
  EXPECT_EQ(result.back().shapes, 18);
}

}  // namespace
}  // namespace semsim
