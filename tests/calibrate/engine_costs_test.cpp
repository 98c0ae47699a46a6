// The engine's host-cost model on its own: a step's host seconds, what overlap scheduling hides, and
// SGLang's CUDA graph batch sizes.
#include <gtest/gtest.h>

#include "calibrate/format/engine_costs.hpp"

namespace semsim {
namespace {

const EngineCosts kCosts{100e-6, 10e-6, 20e-6, 50e-6, 0};

TEST(EngineCosts, HostSecondsAddSchedulerRequestsAndLaunch) {
  EXPECT_DOUBLE_EQ(host_seconds(kCosts, {4, false, 27, false}), 100e-6 + 4 * 10e-6 + 50e-6);
  EXPECT_DOUBLE_EQ(host_seconds(kCosts, {4, true, 27, false}), 100e-6 + 4 * 10e-6 + 27 * 20e-6);
}

TEST(EngineCosts, WithoutOverlapEveryHostSecondIsExposed) {
  for (const bool eager : {false, true}) {
    const StepFeatures step{3, eager, 27, false};
    EXPECT_DOUBLE_EQ(exposed_host_seconds(kCosts, step, 1e-3), host_seconds(kCosts, step));
  }
}

TEST(EngineCosts, OverlapHidesAGraphStepsHostWorkUnderLongerKernels) {
  const StepFeatures graph{3, false, 27, true};
  const double host = host_seconds(kCosts, graph);
  EXPECT_EQ(exposed_host_seconds(kCosts, graph, 1e-3), 0.0);                   // max(gpu, host) = gpu
  EXPECT_DOUBLE_EQ(exposed_host_seconds(kCosts, graph, 50e-6), host - 50e-6);  // = host
}

TEST(EngineCosts, OverlapLeavesAnEagerStepsLaunchesExposed) {
  const StepFeatures eager{3, true, 27, true};
  EXPECT_DOUBLE_EQ(exposed_host_seconds(kCosts, eager, 1e-3), 27 * 20e-6);
  EXPECT_DOUBLE_EQ(exposed_host_seconds(kCosts, eager, 30e-6), 100e-6 + 3 * 10e-6 - 30e-6 + 27 * 20e-6);
}

TEST(EngineCosts, GraphBatchesPadToSglangsCapturedSizes) {
  EXPECT_EQ(cuda_graph_padded_batch(1, 512), 1);
  EXPECT_EQ(cuda_graph_padded_batch(3, 512), 4);
  EXPECT_EQ(cuda_graph_padded_batch(9, 512), 12);
  EXPECT_EQ(cuda_graph_padded_batch(13, 512), 16);
  EXPECT_EQ(cuda_graph_padded_batch(17, 512), 24);
  EXPECT_EQ(cuda_graph_padded_batch(256, 512), 256);
  EXPECT_EQ(cuda_graph_padded_batch(257, 512), 272);
  EXPECT_EQ(cuda_graph_padded_batch(497, 512), 512);
  EXPECT_EQ(cuda_graph_padded_batch(513, 1024), 544);
  // Larger than the largest captured size at most max_batch: eager.
  EXPECT_EQ(cuda_graph_padded_batch(513, 512), 0);
  EXPECT_EQ(cuda_graph_padded_batch(3, 3), 0);  // captured: 1 and 2
  EXPECT_EQ(cuda_graph_padded_batch(2, 3), 2);
  EXPECT_EQ(cuda_graph_padded_batch(20, 24), 24);
}

}  // namespace
}  // namespace semsim
