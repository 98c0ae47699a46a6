// Re-timing a fixed sequence of simulated steps for candidate engine costs, and fitting the costs to
// measured means (calibrate/fit/engine_fit.hpp): exact sums on a hand-made table, known costs
// recovered from tables generated with them.
#include "calibrate/fit/engine_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace semsim {
namespace {

RetimedStep step(double kernel_seconds, int batch, bool eager, int layers, bool overlapped = false) {
  return {kernel_seconds, {batch, eager, layers, overlapped}};
}

// Two requests over four steps: a prefill step (eager, both), then three graph-replayed decode steps.
RetimingTable hand_made_table() {
  RetimingTable table;
  table.pools = {{step(0.050, 2, true, 10), step(0.010, 2, false, 10), step(0.010, 2, false, 10),
                  step(0.008, 1, false, 10, true)}};
  // Request 0: joins step 0, first token at step 0, tokens at steps 1..3 (4 tokens); 1 ms of its TTFT
  // outside the steps. Request 1: first token at step 0, last at step 2 (3 tokens).
  table.requests = {{0, 0, 1e-3, 1, 3, 0.0, 4}, {0, 0, 0.0, 1, 2, 2e-3, 3}};
  return table;
}

// Engine costs of a plausible engine, and tables whose measured means are their re-timing under them.
constexpr EngineCosts kTruth{.step_seconds = 2e-4,
                             .request_step_seconds = 2e-5,
                             .eager_layer_seconds = 4e-5,
                             .graph_step_seconds = 1.5e-4,
                             .request_seconds = 3e-3};

void measure_with(std::vector<RetimingTable>& tables, const EngineCosts& costs) {
  for (RetimingTable& table : tables) {
    const RetimedMeans measured = retime(table, costs);
    table.measured_ttft_s = measured.ttft_s;
    table.measured_tpot_s = measured.tpot_s;
  }
}

TEST(engineFit, RetimingAddsTheStepsEachRequestWaitedThrough) {
  const EngineCosts costs{.step_seconds = 1e-3,
                          .request_step_seconds = 1e-4,
                          .eager_layer_seconds = 1e-4,
                          .graph_step_seconds = 5e-4,
                          .request_seconds = 4e-3};
  const RetimingTable table = hand_made_table();
  // Step 0: 0.050 + 1e-3 + 2e-4 + 10 x 1e-4 = 0.0522; steps 1, 2: 0.010 + 1e-3 + 2e-4 + 5e-4 = 0.0117;
  // step 3 (overlapped, graph): max(0, 1e-3 + 1e-4 + 5e-4 - 0.008) = 0 exposed -> 0.008.
  const std::vector<double> durations = retimed_durations(table.pools[0], costs);
  ASSERT_EQ(durations.size(), 4u);
  EXPECT_DOUBLE_EQ(durations[0], 0.0522);
  EXPECT_DOUBLE_EQ(durations[1], 0.0117);
  EXPECT_DOUBLE_EQ(durations[2], 0.0117);
  EXPECT_DOUBLE_EQ(durations[3], 0.008);
  const RetimedMeans means = retime(table, costs);
  // TTFT: (0.0522 + 1e-3 + 4e-3 + 0.0522 + 0 + 4e-3) / 2.
  EXPECT_NEAR(means.ttft_s, (0.0522 + 1e-3 + 4e-3 + 0.0522 + 4e-3) / 2, 1e-15);
  // TPOT: (0.0117 + 0.0117 + 0.008) / 3 and (0.0117 + 0.0117 + 2e-3) / 2.
  EXPECT_NEAR(means.tpot_s, ((0.0117 * 2 + 0.008) / 3 + (0.0117 * 2 + 2e-3) / 2) / 2, 1e-15);
}

TEST(engineFit, ARequestOfOneTokenHasNoTpot) {
  RetimingTable table = hand_made_table();
  table.requests = {{0, 0, 0.0, 1, 0, 0.0, 1}};
  const RetimedMeans means = retime(table, EngineCosts{});
  EXPECT_GT(means.ttft_s, 0);
  EXPECT_EQ(means.tpot_s, 0);
}

TEST(engineFit, TheLossIsTheSumOfAbsoluteLogRatios) {
  RetimingTable table = hand_made_table();
  const RetimedMeans means = retime(table, EngineCosts{});
  table.measured_ttft_s = 2 * means.ttft_s;  // simulated half the measured: |log 0.5|
  table.measured_tpot_s = means.tpot_s / 4;  // four times it: |log 4|
  EXPECT_NEAR(retiming_loss({&table}, EngineCosts{}), std::log(2.0) + std::log(4.0), 1e-12);
}

// Three rows agree on the costs; a fourth, measured 10x slower than anything the costs can give, does
// not move them (a squared loss would trade the three rows' fit for it).
TEST(engineFit, ARowNoCostExplainsDoesNotDragTheFit) {
  std::vector<RetimingTable> tables(4, hand_made_table());
  measure_with(tables, kTruth);
  tables[3].measured_ttft_s *= 10;
  const EngineFit fit = fit_engine_costs({&tables[0], &tables[1], &tables[2], &tables[3]}, EngineCosts{});
  const RetimedMeans fitted = retime(tables[0], fit.costs);
  EXPECT_NEAR(fitted.ttft_s / tables[0].measured_ttft_s, 1.0, 0.01);
  EXPECT_NEAR(fitted.tpot_s / tables[0].measured_tpot_s, 1.0, 0.01);
}

TEST(engineFit, CostsRoundTripThroughTheirVector) {
  const EngineCosts costs{1e-3, 2e-3, 3e-3, 4e-3, 5e-3};
  EXPECT_EQ(from_vector(to_vector(costs)), costs);
}

// Rows unlike each other (batch sizes, prefill lengths, layer counts, graph or eager decode), their
// measured means those of the re-timing under known costs: the fit finds the costs again.
TEST(engineFit, RecoversKnownCostsFromRowsGeneratedWithThem) {
  std::vector<RetimingTable> tables;
  for (const int layers : {40, 64}) {
    for (const int batch : {1, 8, 32}) {
      for (const bool eager_decode : {false, true}) {
        RetimingTable& table = tables.emplace_back();
        auto& steps = table.pools.emplace_back();
        steps.push_back(step(0.02 * batch, batch, true, layers));
        for (int i = 0; i < 20; ++i) steps.push_back(step(0.005 + 1e-4 * batch, batch, eager_decode, layers));
        for (int r = 0; r < batch; ++r) table.requests.push_back({0, 0, 0.0, 1, 20, 0.0, 21});
      }
    }
  }
  measure_with(tables, kTruth);
  std::vector<const RetimingTable*> pointers;
  for (const RetimingTable& t : tables) pointers.push_back(&t);
  const EngineFit fit = fit_engine_costs(pointers, EngineCosts{});
  EXPECT_LT(fit.loss, 1e-5);  // 24 rows x 2 means, each within a few parts per million
  const EngineCostVector found = to_vector(fit.costs), expected = to_vector(kTruth);
  for (int i = 0; i < kEngineCostCount; ++i) EXPECT_NEAR(found[i] / expected[i], 1.0, 0.05) << "cost " << i;
}

TEST(engineFit, CostsStayWithinTheirBounds) {
  // Measured far slower than any host work can explain: the costs stop at the upper bound.
  RetimingTable table;
  table.pools = {{step(1e-3, 1, true, 1), step(1e-3, 1, false, 1)}};
  table.requests = {{0, 0, 0.0, 1, 1, 0.0, 2}};
  table.measured_ttft_s = 100;
  table.measured_tpot_s = 100;
  const EngineFit fit = fit_engine_costs({&table}, EngineCosts{});
  const EngineCostVector found = to_vector(fit.costs);
  for (int i = 0; i < kEngineCostCount; ++i) {
    EXPECT_GE(found[i], kEngineCostMin * 0.999) << i;
    EXPECT_LE(found[i], kEngineCostMax[i] * 1.001) << i;
  }
  EXPECT_NEAR(fit.costs.request_seconds, kEngineCostMax[4], 1e-9);
}

}  // namespace
}  // namespace semsim
