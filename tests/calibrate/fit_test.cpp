// The fitter on synthetic samples whose truth is known: monotone interpolation, extrapolation
// refusal, kernel tables with holes, and collective alpha-beta fits with bandwidth-factor curves.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/interpolation.hpp"

namespace semsim {
namespace {

std::vector<double> powers_of_two(int from, int to) {
  std::vector<double> out;
  for (int e = from; e <= to; ++e) out.push_back(std::ldexp(1.0, e));
  return out;
}

TEST(MonotoneCurve, PassesThroughEveryPoint) {
  const std::vector<double> x{1, 2, 4, 8, 16, 32}, y{3e-6, 3.1e-6, 3.5e-6, 5e-6, 9e-6, 1.7e-5};
  const MonotoneCurve curve(x, y);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(curve(x[i]), y[i], 1e-12 * y[i]);
}

TEST(MonotoneCurve, IsExactOnPowerLaws) {
  // A power law is a straight line in log-log space, which PCHIP reproduces everywhere.
  auto law = [](double x) { return 2e-6 * std::pow(x, 0.8); };
  std::vector<double> x = powers_of_two(0, 10), y;
  for (double v : x) y.push_back(law(v));
  const MonotoneCurve curve(x, y);
  for (double q : {1.5, 3.0, 100.0, 777.0, 1000.0}) EXPECT_NEAR(curve(q), law(q), 1e-9 * law(q)) << q;
  // Beyond the grid it continues along the end slope.
  EXPECT_NEAR(curve(1500.0), law(1500.0), 1e-9 * law(1500.0));
  EXPECT_NEAR(curve(0.75), law(0.75), 1e-9 * law(0.75));
}

TEST(MonotoneCurve, StaysMonotoneAndWithinNeighboursOnRandomMonotoneData) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> step(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> x = powers_of_two(0, 12), y;
    double value = 1e-6;
    for (std::size_t i = 0; i < x.size(); ++i) {
      // Flat stretches, small steps and jumps: what kernel times over tile boundaries look like.
      const double r = step(rng);
      value *= r < 0.3 ? 1.0 : (r < 0.8 ? 1.0 + 0.1 * step(rng) : 1.0 + 5 * step(rng));
      y.push_back(value);
    }
    const MonotoneCurve curve(x, y);
    double previous = curve(x.front());
    for (std::size_t i = 0; i + 1 < x.size(); ++i) {
      for (int k = 1; k <= 50; ++k) {
        const double q = x[i] * std::pow(x[i + 1] / x[i], k / 50.0);
        const double v = curve(q);
        ASSERT_GE(v, previous * (1 - 1e-12)) << "trial " << trial << " at " << q;
        ASSERT_GE(v, y[i] * (1 - 1e-12));
        ASSERT_LE(v, y[i + 1] * (1 + 1e-12));
        previous = v;
      }
    }
  }
}

TEST(MonotoneCurve, DecreasingDataStaysDecreasingInside) {
  const std::vector<double> x{1, 2, 4, 8}, y{8, 4, 3, 1};
  const MonotoneCurve curve(x, y);
  double previous = curve(1);
  for (double q = 1.05; q <= 8; q *= 1.05) {
    EXPECT_LE(curve(q), previous + 1e-12);
    previous = curve(q);
  }
  EXPECT_DOUBLE_EQ(curve(16), 1.0) << "never downward beyond the grid: flat instead";
}

KernelTable gate_table() {
  KernelTable t;
  t.kernel = "gate";
  t.axes = {{"tokens", {1, 16, 256, 4096}}};
  t.seconds = {4e-6, 5e-6, 1e-5, 8e-5};
  return t;
}

TEST(KernelTableLookup, AnswersNearTheGridAndRefusesFarOutside) {
  const KernelTableLookup lookup(gate_table(), "profile 'p': gate '' bf16", false);
  EXPECT_NEAR(lookup.seconds(16), 5e-6, 1e-18);
  EXPECT_GT(lookup.seconds(8000), 8e-5);  // within 2x beyond: extrapolated along the end slope
  EXPECT_NEAR(lookup.seconds(8192), 8e-5 * std::pow(8e-5 / 1e-5, 1.0 / 4), 1e-12);
  try {
    lookup.seconds(8193);
    FAIL() << "answered far outside the grid";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "profile 'p': gate '' bf16: tokens = 8193 is far outside the measured grid [1, 4096] (more than 2x "
        "beyond it); measure it, or set calibration.extrapolate: true to extrapolate");
  }
  // Below the measured work a kernel is launch- or weight-bound: the least work measured, however far.
  EXPECT_DOUBLE_EQ(lookup.seconds(0.4), 4e-6);
  EXPECT_DOUBLE_EQ(lookup.seconds(1e-3), 4e-6);
  const KernelTableLookup allowed(gate_table(), "p", true);
  EXPECT_NEAR(allowed.seconds(65536), 8e-5 * std::pow(8e-5 / 1e-5, 4.0 / 4), 1e-12);
}

// t = c * a^0.3 * T^0.8 on a triangular grid (a <= T), as the routed-experts tables are measured.
double experts_law(double a, double t) {
  return 1e-6 * std::pow(a, 0.3) * std::pow(t, 0.8);
}

KernelTable triangular_experts_table() {
  KernelTable t;
  t.kernel = "routed_experts";
  t.axes = {{"active_experts", powers_of_two(0, 6)}, {"tokens", powers_of_two(0, 12)}};
  for (double a : t.axes[0].values)
    for (double tokens : t.axes[1].values)
      t.seconds.push_back(tokens >= a ? std::optional<double>(experts_law(a, tokens)) : std::nullopt);
  return t;
}

TEST(KernelTableLookup, InterpolatesTwoAxesAcrossATriangularGrid) {
  const KernelTableLookup lookup(triangular_experts_table(), "t", false);
  for (auto [a, tokens] : {std::pair{3.0, 100.0}, {48.0, 3000.0}, {64.0, 64.0}, {1.0, 1.0}, {20.0, 4096.0}})
    EXPECT_NEAR(lookup.seconds(a, tokens), experts_law(a, tokens), 1e-9 * experts_law(a, tokens))
        << a << " " << tokens;
  // 5 experts at 7 tokens: the row of 8 starts at 8 tokens and answers its least measured time there.
  EXPECT_GT(lookup.seconds(5, 7), experts_law(5, 7));
  EXPECT_LT(lookup.seconds(5, 7), experts_law(8, 8));
  EXPECT_THROW(lookup.seconds(200, 1000), InputError);  // more than 2x the largest active count
  EXPECT_THROW(lookup.seconds(4, 10000), InputError);   // more than 2x the most tokens
}

// Prefill attention's rows start at different prompt lengths: below a row's range the row keeps its
// launch floor (0.8 of its least time, as the fit) and scales the work above it, never the row's
// slope carried down below every launch time measured (3.4 us predicted where 18.7 us was measured).
TEST(KernelTableLookup, BelowARowsRangeKeepsItsLaunchFloor) {
  KernelTable t;
  t.kernel = "gqa_prefill";
  t.axes = {{"batch", {1, 2, 4}}, {"tokens", {1, 2, 256, 4096}}};
  const double launch = 18e-6;
  const auto law = [&](double batch, double tokens) { return launch + 1e-9 * batch * tokens * tokens; };
  for (double batch : t.axes[0].values)
    for (double tokens : t.axes[1].values)
      t.seconds.push_back(batch == 1 || tokens > 1 ? std::optional<double>(law(batch, tokens))
                                                   : std::nullopt);
  const KernelTableLookup lookup(t, "t", false);
  // Rows 2 and 4 start at 2 tokens: at 1 token, between their launch floor and their least time.
  for (const double batch : {2.0, 3.0, 4.0}) {
    const double one = lookup.seconds(batch, 1);
    EXPECT_GE(one, kLaunchFloorShare * law(2, 2)) << batch;
    EXPECT_LE(one, law(4, 2)) << batch;
  }
  EXPECT_LE(lookup.seconds(2, 1), law(2, 2));
  EXPECT_NEAR(lookup.seconds(1, 1), law(1, 1), 1e-12 * law(1, 1));
  // Above the range a row continues along its trend over the last doubling (never downward).
  const double slope = std::log(law(2, 4096) / law(2, 256)) / std::log(16.0);
  EXPECT_NEAR(lookup.seconds(2, 8192), law(2, 4096) * std::pow(2.0, slope), 1e-12);
}

// Prefill attention at batch 128 whose row starts at 128 tokens, between rows of 64 and 256 that
// measured 16 tokens and more: at 64 tokens those rows answer, not the row of 128 continued below its
// range from its launch floor (which misses the law by far more).
TEST(KernelTableLookup, RowsThatMeasuredThePointAnswerBeforeARowBelowItsRange) {
  KernelTable t;
  t.kernel = "gqa_prefill";
  t.axes = {{"batch", {64, 128, 256}}, {"tokens", {16, 32, 64, 128, 512}}};
  const auto law = [](double batch, double tokens) {
    return 5e-6 + 1e-9 * batch * tokens + 1e-11 * batch * tokens * tokens;
  };
  for (double batch : t.axes[0].values)
    for (double tokens : t.axes[1].values)
      t.seconds.push_back(batch != 128 || tokens >= 128 ? std::optional<double>(law(batch, tokens))
                                                        : std::nullopt);
  const KernelTableLookup lookup(t, "t", false);
  const MonotoneCurve row_of_128({128, 512}, {law(128, 128), law(128, 512)});
  const double truth = law(128, 64), from_rows = lookup.seconds(128, 64);
  const double continued = row_of_128.below_range(64);
  EXPECT_LT(std::abs(from_rows / truth - 1), 0.05);
  EXPECT_LT(std::abs(from_rows / truth - 1), std::abs(continued / truth - 1) / 3);
  // Where no measured row lies on the other side of x, the row's continuation still answers.
  EXPECT_NEAR(lookup.seconds(128, 128), law(128, 128), 1e-12);
}

// Beyond a row's range, where no measured row lies on its other side (the largest batch), the row
// grows from its end as the row beside it that measured both grows: at batch sizes whose work is
// far above the launch time, prefill attention's law along the prompt carries across batch sizes,
// where the row's own trend (above) or launch floor (below) misses it.
TEST(KernelTableLookup, BeyondItsRangeARowGrowsAsTheRowBesideIt) {
  KernelTable t;
  t.kernel = "gqa_prefill";
  t.axes = {{"batch", {16, 32, 64}}, {"tokens", {64, 128, 256, 512, 1024, 2048}}};
  const auto law = [](double batch, double tokens) {
    return 5e-6 + batch * (2e-9 * tokens + 1e-11 * tokens * tokens);
  };
  const auto measured = [](double batch, double tokens) {
    return batch < 64 || (tokens >= 256 && tokens <= 1024);
  };
  std::vector<double> own_x, own_seconds;
  for (double batch : t.axes[0].values)
    for (double tokens : t.axes[1].values) {
      t.seconds.push_back(measured(batch, tokens) ? std::optional<double>(law(batch, tokens)) : std::nullopt);
      if (batch == 64 && measured(batch, tokens))
        own_x.push_back(tokens), own_seconds.push_back(law(batch, tokens));
    }
  const KernelTableLookup lookup(t, "t", false);
  const MonotoneCurve own(own_x, own_seconds);
  for (const auto& [tokens, continued] : {std::pair{2048.0, own(2048)}, {128.0, own.below_range(128)}}) {
    const double truth = law(64, tokens), error = std::abs(lookup.seconds(64, tokens) / truth - 1);
    EXPECT_LT(error, 0.1) << tokens;
    EXPECT_LT(error, std::abs(continued / truth - 1) / 3) << tokens;
  }
}

TEST(KernelTableLookup, IsMonotoneAlongBothAxesOnMonotoneData) {
  const KernelTableLookup lookup(triangular_experts_table(), "t", false);
  for (double a = 1; a <= 64; a *= 1.3) {
    double previous = 0;
    for (double tokens = a; tokens <= 4096; tokens *= 1.17) {
      const double v = lookup.seconds(a, tokens);
      EXPECT_GE(v, previous);
      previous = v;
    }
  }
  for (double tokens = 64; tokens <= 4096; tokens *= 1.5) {
    double previous = 0;
    for (double a = 1; a <= 64; a *= 1.2) {
      const double v = lookup.seconds(a, tokens);
      EXPECT_GE(v, previous);
      previous = v;
    }
  }
}

TEST(FitResiduals, MedianAndP95InterpolateBetweenOrderStatistics) {
  const FitResiduals r = residuals_of({0.10, 0.02, 0.04, 0.01, 0.03});
  EXPECT_EQ(r.samples, 5);
  EXPECT_DOUBLE_EQ(r.median, 0.03);
  EXPECT_NEAR(r.p95, 0.04 + 0.8 * 0.06, 1e-15);
  EXPECT_EQ(residuals_of({}).samples, 0);
}

TEST(FitKernelTable, BuildsTheGridKeepsContiguousRunsAndReportsHeldOutErrors) {
  std::vector<KernelSample> grid;
  for (double a : powers_of_two(0, 3))
    for (double tokens : powers_of_two(0, 8))
      if (tokens >= a && !(a == 2 && tokens == 64)) grid.push_back({a, tokens, experts_law(a, tokens)});
  grid.push_back({8, 16, -1});  // a failed measurement is not a sample
  const std::vector<KernelSample> skewed{{3, 100, experts_law(3, 100) * 1.10},
                                         {6, 200, experts_law(6, 200) * 0.95}};
  const auto table =
      fit_kernel_table(*find_kernel_spec("routed_experts"), "hidden=8 ffn=16", "bf16", "test", grid, skewed);
  ASSERT_TRUE(table);
  EXPECT_EQ(table->axes[0].values, powers_of_two(0, 3));
  EXPECT_EQ(table->axes[1].values, powers_of_two(0, 8));
  // Row a=2 misses tokens=64: it keeps its longest run, 2..32, and drops 128..256.
  const std::size_t columns = 9;
  EXPECT_TRUE(table->seconds[1 * columns + 5]);   // a=2, tokens=32
  EXPECT_FALSE(table->seconds[1 * columns + 6]);  // a=2, tokens=64 (not measured)
  EXPECT_FALSE(table->seconds[1 * columns + 7]);  // a=2, tokens=128 (dropped: after the hole)
  EXPECT_FALSE(table->seconds[3 * columns + 0]);  // a=8, tokens=1 (impossible)
  EXPECT_DOUBLE_EQ(*table->seconds[3 * columns + 4], experts_law(8, 16));
  // Leave-one-out on a power law is exact (interior points of rows of 9, 5, 7 and 6 points); the
  // skewed samples are 10% above and 5% below what the table predicts.
  EXPECT_EQ(table->residuals.samples, 7 + 3 + 5 + 4 + 2);
  EXPECT_NEAR(table->residuals.median, 0.0, 1e-9);
  EXPECT_NEAR(table->residuals.p95, 0.05 / 0.95, 1e-9);
  const KernelTableLookup lookup(*table, "t", false);
  EXPECT_NEAR(lookup.seconds(2, 100), experts_law(2, 100), 1e-9 * experts_law(2, 100));
}

TEST(FitKernelTable, NeedsTwoMeasuredPoints) {
  const KernelSpec& gate = *find_kernel_spec("gate");
  EXPECT_FALSE(fit_kernel_table(gate, "", "bf16", "", {{4, 0, 1e-5}}));
  EXPECT_TRUE(fit_kernel_table(gate, "", "bf16", "", {{4, 0, 1e-5}, {8, 0, 2e-5}}));
}

// A kernel's time over its work as databases measure it: launch-bound, then steps at tile
// boundaries (every power of two of the work, a random height) on a linear rise; non-decreasing.
std::function<double(double)> staircase(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> height(0.0, 0.3);
  std::vector<double> steps;
  for (int e = 0; e <= 14; ++e) steps.push_back(height(rng));
  return [steps](double work) {
    double seconds = 5e-6 + 2e-9 * work;
    for (std::size_t e = 0; e < steps.size() && std::ldexp(1.0, static_cast<int>(e)) <= work; ++e)
      seconds *= 1 + steps[e];
    return seconds;
  };
}

// Samples of `law` at `count` work values scattered log-uniformly over [1, 16384].
std::vector<KernelSample> scattered(const std::function<double(double)>& law, double row, int count,
                                    std::mt19937_64& rng, bool two_axes) {
  std::uniform_real_distribution<double> log2_work(0.0, 14.0);
  std::vector<KernelSample> samples;
  for (int i = 0; i < count; ++i) {
    const double work = std::round(std::exp2(log2_work(rng)));
    samples.push_back(two_axes ? KernelSample{row, work, law(work) * row} : KernelSample{work, 0, law(work)});
  }
  return samples;
}

TEST(FitScatteredTable, IsMonotoneInTheWorkWhereTheDataIs) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    const auto law = staircase(rng);
    const auto gemm = fit_scattered_table(*find_kernel_spec("gemm"), "n=4096 k=4096", "bf16", "test",
                                          scattered(law, 0, 120, rng, false));
    ASSERT_TRUE(gemm);
    const KernelTableLookup lookup(*gemm, "gemm", false);
    double previous = 0;  // flat stretches of a table are flat up to rounding
    for (double tokens = 1; tokens <= 16384; tokens *= 1.01) {
      const double seconds = lookup.seconds(tokens);
      ASSERT_GE(seconds, previous * (1 - 1e-12)) << tokens;
      previous = seconds;
    }
    // Two axes: every row (local experts) non-decreasing in its token copies.
    std::vector<KernelSample> samples;
    for (const double experts : {1.0, 4.0, 16.0}) {
      const auto row = scattered(law, experts, 60, rng, true);
      samples.insert(samples.end(), row.begin(), row.end());
    }
    const auto experts =
        fit_scattered_table(*find_kernel_spec("moe_experts"), "hidden=2048 ffn=1408 distribution=balanced",
                            "bf16", "test", samples);
    ASSERT_TRUE(experts);
    const KernelTableLookup two_axes(*experts, "moe_experts", false);
    const std::vector<double>& columns = experts->axes[1].values;
    for (std::size_t row = 0; row < experts->axes[0].values.size(); ++row) {
      // Over the row's own measured range.
      std::vector<double> measured;
      for (std::size_t c = 0; c < columns.size(); ++c)
        if (experts->seconds[row * columns.size() + c]) measured.push_back(columns[c]);
      previous = 0;
      for (double tokens = measured.front(); tokens <= measured.back(); tokens *= 1.01) {
        const double seconds = two_axes.seconds(experts->axes[0].values[row], tokens);
        ASSERT_GE(seconds, previous * (1 - 1e-12)) << experts->axes[0].values[row] << " " << tokens;
        previous = seconds;
      }
    }
  }
}

// The database's GEMM sweep: every m to 17, then each multiple of 16 .. 256 and its successor, then
// powers of two and their successors to 8192.
std::vector<double> database_rows() {
  std::vector<double> m;
  for (int i = 1; i <= 17; ++i) m.push_back(i);
  for (int i = 32; i <= 256; i += 16) m.push_back(i), m.push_back(i + 1);
  for (int i = 512; i <= 8192; i *= 2) m.push_back(i), m.push_back(i + 1);
  return m;
}

// A spike (DeepGEMM FP8 n 3072 k 7168: 146-150 us at m 769-1024, 54 us at 768 and 67 us at 1281)
// is flagged, listed and kept out: the sizes around it keep the smooth law; a tile step is no spike.
TEST(FitScatteredTable, KeepsASpikeOutAndListsIt) {
  auto smooth = [](double m) { return 3e-6 + 40e-9 * m; };
  std::vector<KernelSample> samples;
  for (const double m : database_rows()) samples.push_back({m, 0, (m == 1024 ? 2.4 : 1.0) * smooth(m)});
  // The database's sweep around it: 768, 769, 1281, 1536 too.
  for (const double m : {768.0, 1281.0, 1536.0}) samples.push_back({m, 0, smooth(m)});
  samples.push_back({769, 0, 2.5 * smooth(769)});
  std::vector<OutlierRow> outliers;
  const auto table = fit_scattered_table(*find_kernel_spec("gemm"), "n=3072 k=7168", "fp8", "test", samples,
                                         5, nullptr, &outliers);
  ASSERT_TRUE(table);
  ASSERT_EQ(outliers.size(), 2u);
  EXPECT_EQ(outliers[0].kernel, "gemm");
  EXPECT_EQ(outliers[0].shape, "n=3072 k=7168");
  EXPECT_EQ(outliers[0].at, std::vector<double>{769});
  EXPECT_DOUBLE_EQ(outliers[0].seconds, 2.5 * smooth(769));
  EXPECT_EQ(outliers[1].at, std::vector<double>{1024});
  EXPECT_NEAR(outliers[1].neighbours[0], smooth(768), 1e-12 * smooth(768));
  EXPECT_NEAR(outliers[1].neighbours[1], smooth(1025), 1e-12 * smooth(1025));
  const KernelTableLookup lookup(*table, "gemm", false);
  for (const double m : {700.0, 769.0, 900.0, 1024.0, 1100.0})
    EXPECT_NEAR(lookup.seconds(m), smooth(m), 0.01 * smooth(m)) << m;
  EXPECT_LT(table->residuals.p95, 0.02) << "the spike is neither fitted nor scored";
  // The same table's tile steps (a 64-row tile: 65 rows as long as 128) are not spikes.
  std::vector<OutlierRow> none;
  std::vector<KernelSample> tiled;
  for (const double m : database_rows()) tiled.push_back({m, 0, 3e-6 + 40e-9 * std::ceil(m / 64) * 64});
  fit_scattered_table(*find_kernel_spec("gemm"), "n=3072 k=7168", "fp8", "test", tiled, 5, nullptr, &none);
  EXPECT_TRUE(none.empty());
}

// A row measured at 1 and 512 tokens only (prefill attention at some batch sizes) between rows that
// measured every power of two: across its gap the row rises as its neighbours rise (their share of
// the rise in log time), not along its own two-point curve.
TEST(FitScatteredTable, ARowCrossesAWideGapAsTheRowsBesideItMeasuredIt) {
  const auto law = [](double batch, double tokens) {
    return 15e-6 + 1e-9 * batch * tokens + 2e-12 * batch * tokens * tokens;
  };
  std::vector<KernelSample> samples;
  for (const double batch : {64.0, 128.0, 256.0})
    for (double tokens = 1; tokens <= 512; tokens *= 2)
      if (batch != 128 || tokens == 1 || tokens == 512)
        samples.push_back({batch, tokens, law(batch, tokens)});
  const auto table =
      fit_scattered_table(*find_kernel_spec("gqa_prefill"), "heads=32 kv_heads=8 head_dim=128 window=0",
                          "bf16", "test", samples, 0);
  ASSERT_TRUE(table);
  const KernelTableLookup lookup(*table, "t", false);
  // The row's own curve: log(seconds - floor) straight between its two sizes, the floor 0.8 of the least.
  const double floor = kLaunchFloorShare * law(128, 1);
  const auto own = [&](double tokens) {
    const double t = std::log(tokens) / std::log(512.0);
    return floor + std::exp((1 - t) * std::log(law(128, 1) - floor) + t * std::log(law(128, 512) - floor));
  };
  double worst = 0, worst_own = 0;
  for (double tokens = 2; tokens <= 256; tokens *= 2) {
    const double truth = law(128, tokens);
    worst = std::max(worst, std::abs(lookup.seconds(128, tokens) / truth - 1));
    worst_own = std::max(worst_own, std::abs(own(tokens) / truth - 1));
  }
  EXPECT_LT(worst, 0.1);
  EXPECT_GT(worst_own, 3 * worst);
  // A row whose own sizes lie closer than kWideGap keeps its own curve.
  std::vector<KernelSample> dense = samples;
  for (const double tokens : {8.0, 64.0}) dense.push_back({128, tokens, law(128, tokens)});
  const auto own_table =
      fit_scattered_table(*find_kernel_spec("gqa_prefill"), "heads=32 kv_heads=8 head_dim=128 window=0",
                          "bf16", "test", dense, 0);
  ASSERT_TRUE(own_table);
  EXPECT_NEAR(KernelTableLookup(*own_table, "t", false).seconds(128, 64), law(128, 64), 1e-3 * law(128, 64));
}

// Decode attention reads batch x context cached tokens and switches mode at a fixed product (B200 GQA
// decode: 12.5 us to 32k tokens read, 28.8 us at 64k, at every batch size). A row that skipped the
// contexts around its switch crosses the gap as the rows beside it cross it at the same work, not
// along its own curve; a sliding-window shape, whose work is no product, keeps its own curve.
TEST(FitScatteredTable, ADecodeRowCrossesItsGapAsTheRowsBesideItAtTheSameWork) {
  const auto law = [](double batch, double context) {
    const double read = batch * context;
    return 8e-6 + (read > 40000 ? 20e-6 : 0.0) + 1e-9 * read;
  };
  std::vector<KernelSample> samples;
  for (const double batch : {4.0, 8.0, 16.0})
    for (double context = 256; context <= 32768; context *= 2)
      if (batch != 8 || context <= 4096 || context >= 16384)
        samples.push_back({batch, context, law(batch, context)});
  const auto fit = [&](const std::string& window) {
    return fit_scattered_table(*find_kernel_spec("gqa_decode"),
                               "heads=20 kv_heads=4 head_dim=128 window=" + window, "bf16", "test", samples,
                               0);
  };
  const auto table = fit("0"), windowed = fit("65536");
  ASSERT_TRUE(table && windowed);
  const double truth = law(8, 8192);
  const double at_work = KernelTableLookup(*table, "t", false).seconds(8, 8192);
  const double own = KernelTableLookup(*windowed, "t", false).seconds(8, 8192);
  EXPECT_LT(std::abs(at_work / truth - 1), 0.02) << at_work << " " << truth;
  EXPECT_GT(std::abs(own / truth - 1), 5 * std::abs(at_work / truth - 1)) << own;
}

TEST(FitScatteredTable, FindsTheTileOfAGemmThatPaysForWholeTiles) {
  // 3 us to launch, then 40 ns per row of whole 64-row tiles: 65 rows cost as many as 128.
  auto tiled = [](double m) { return 3e-6 + 40e-9 * std::ceil(m / 64) * 64; };
  auto smooth = [](double m) { return 3e-6 + 40e-9 * m; };
  for (const bool has_tiles : {true, false}) {
    SCOPED_TRACE(has_tiles);
    std::vector<KernelSample> samples;
    for (const double m : database_rows()) samples.push_back({m, 0, has_tiles ? tiled(m) : smooth(m)});
    const auto table =
        fit_scattered_table(*find_kernel_spec("gemm"), "n=4096 k=4096", "bf16", "test", samples, 5);
    ASSERT_TRUE(table);
    EXPECT_EQ(table->tile, has_tiles ? 64 : 1);
    const KernelTableLookup lookup(*table, "gemm", false);
    // Sizes no row measured: the tiled law's steps, the smooth law's line.
    for (const double m : {20.0, 100.0, 300.0, 700.0, 3000.0}) {
      const double truth = has_tiles ? tiled(m) : smooth(m);
      EXPECT_NEAR(lookup.seconds(m), truth, 0.01 * truth) << m;
    }
    EXPECT_LT(table->residuals.p95, 0.02);
  }
  // A sparse sweep of the same tiled law is no evidence of tiles.
  std::vector<KernelSample> sparse;
  for (const double m : {1.0, 8.0, 64.0, 512.0, 4096.0}) sparse.push_back({m, 0, tiled(m)});
  EXPECT_EQ(fit_scattered_table(*find_kernel_spec("gemm"), "n=4096 k=4096", "bf16", "test", sparse)->tile, 1);
}

// An all-to-all of `ranks` ranks over per-rank buffers of 1 KiB .. 1 GiB whose time is
// alpha + bus_bytes / (bandwidth * efficiency(message)).
std::vector<CollectiveSample> synthetic_all_to_all(int ranks, double alpha, double bandwidth,
                                                   const std::function<double(double)>& efficiency) {
  std::vector<CollectiveSample> samples;
  for (double bytes : powers_of_two(10, 30)) {
    const double bus = bytes * (ranks - 1) / ranks;
    const double message = bytes / ranks;
    samples.push_back({bus, message, alpha + bus / (bandwidth * efficiency(message))});
  }
  return samples;
}

TEST(FitCollective, RecoversAlphaAndBetaExactlyFromAlphaBetaData) {
  const auto samples = synthetic_all_to_all(8, 18e-6, 360e9, [](double) { return 1.0; });
  const auto fit = fit_collective("all_to_all", "scaleup", 8, samples, 450e9);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha, 18e-6, 1e-9 * 18e-6);
  EXPECT_NEAR(fit->bus_bandwidth, 360e9, 1e-6 * 360e9);
  EXPECT_NEAR(fit->efficiency, 0.8, 1e-6);
  for (double f : fit->factor) EXPECT_NEAR(f, 1.0, 1e-5);
  EXPECT_EQ(fit->residuals.samples, 19);
  EXPECT_LT(fit->residuals.p95, 1e-6);
}

// H200's 4-GPU all-to-all took 11.1 us at 512 B and 6.6 us at 1 KiB: a slow smallest message sets
// neither alpha (every small message would be priced at its 11 us) nor the factors beside it.
TEST(FitCollective, ASlowSmallestMessageDoesNotSetAlpha) {
  auto samples = synthetic_all_to_all(8, 6.6e-6, 360e9, [](double) { return 1.0; });
  const double slow = 1.7 * samples.front().seconds;
  samples.front().seconds = slow;
  const auto fit = fit_collective("all_to_all", "scaleup", 8, samples, 450e9);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha, 6.6e-6, 0.01 * 6.6e-6);
  for (std::size_t i = 1; i < 4; ++i)
    EXPECT_NEAR(collective_seconds(*fit, samples[i].bus_bytes, samples[i].message_bytes), samples[i].seconds,
                0.01 * samples[i].seconds);
  EXPECT_LT(fit->residuals.p95, 1e-3);
}

TEST(FitCollective, RecoversAKnownEfficiencyCurve) {
  // Efficiency rises with message size from 30% to the asymptote, half way at 64 KiB per peer (as
  // protocols switch). A curve like m / (m + c) would not do: its time is exactly linear in bytes,
  // i.e. the same as an alpha larger by a constant and no curve at all.
  auto efficiency = [](double message) { return 0.3 + 0.7 / (1 + std::pow(65536.0 / message, 1.5)); };
  const double alpha = 20e-6, bandwidth = 370e9;
  const auto samples = synthetic_all_to_all(8, alpha, bandwidth, efficiency);
  const auto fit = fit_collective("all_to_all", "scaleup", 8, samples, 450e9);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha, alpha, 0.005 * alpha);
  EXPECT_NEAR(fit->bus_bandwidth, bandwidth, 0.02 * bandwidth);
  for (std::size_t i = 0; i < fit->factor.size(); ++i) {
    const double truth = efficiency(fit->factor_bytes[i]) * bandwidth / fit->bus_bandwidth;
    if (fit->factor_bytes[i] >= 16384) {  // below, nanoseconds of alpha error matter
      EXPECT_NEAR(fit->factor[i], truth, 0.02 * truth) << fit->factor_bytes[i];
    }
  }
  // Sizes between the measured ones.
  for (double bytes : powers_of_two(11, 29)) {
    const double between = bytes * std::sqrt(2.0);
    const double bus = between * 7 / 8;
    const double truth = alpha + bus / (bandwidth * efficiency(between / 8));
    EXPECT_NEAR(collective_seconds(*fit, bus, between / 8), truth, 0.02 * truth) << between;
  }
  EXPECT_LT(fit->residuals.median, 0.01);
  EXPECT_LT(fit->residuals.p95, 0.03);
}

TEST(FitCollective, CapsFactorsAtTheDatasheetLinkAndNeedsThreeSizes) {
  auto samples = synthetic_all_to_all(8, 10e-6, 300e9, [](double) { return 1.0; });
  samples[5].seconds = 1e-9;  // faster than the alpha it must pay: capped, not negative
  const auto fit = fit_collective("all_to_all", "scaleup", 8, samples, 450e9);
  ASSERT_TRUE(fit);
  EXPECT_DOUBLE_EQ(fit->factor[5], 1.5);
  samples.resize(2);
  EXPECT_FALSE(fit_collective("all_to_all", "scaleup", 8, samples, 450e9));
}

TEST(BandwidthFactor, IsFlatBeyondTheMeasuredSizesAndOneWithoutACurve) {
  CollectiveFit fit;
  EXPECT_DOUBLE_EQ(BandwidthFactor(fit)(123.0), 1.0);
  fit.factor_bytes = {1024, 1 << 20};
  fit.factor = {0.25, 1.0};
  const BandwidthFactor factor(fit);
  EXPECT_DOUBLE_EQ(factor(16), 0.25);
  EXPECT_DOUBLE_EQ(factor(1e12), 1.0);
  EXPECT_NEAR(factor(32768), 0.25 * std::pow(4.0, 0.5), 1e-12);  // halfway in log-log
}

}  // namespace
}  // namespace semsim
