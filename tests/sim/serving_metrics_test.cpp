// Serving metrics on a hand-made run: inter-token latencies from the steps' end times (a request
// left out of a step included), the same statistics over counted values as over the values one by
// one, and vLLM's goodput.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/serving_metrics.hpp"

namespace semsim {
namespace {

// Five steps ending at 10, 30, 60, 100 and 150 ms. Request 0 gets a token at every step (its first at
// step 0); request 1 its first at step 1, none at step 2, then at steps 3 and 4; request 2 is cut off.
RunResult three_requests() {
  RunResult run;
  for (const double end : {0.010, 0.030, 0.060, 0.100, 0.150}) {
    StepRecord step;
    step.end = end;
    run.steps.push_back(step);
  }
  RequestRecord a;
  a.id = 0;
  a.rank = 0;
  a.input_tokens = 100;
  a.output_tokens = 5;
  a.first_token = 0.010;
  a.first_token_step = 0;
  a.finish = 0.150;
  a.finish_step = 4;
  RequestRecord b = a;
  b.id = 1;
  b.output_tokens = 3;
  b.first_token = 0.030;
  b.first_token_step = 1;
  b.token_gaps.push_back({1, 3});
  RequestRecord c = a;
  c.id = 2;
  c.finish = -1;
  c.finish_step = -1;
  run.requests = {a, b, c};
  run.end_time = 0.150;
  return run;
}

TEST(ServingMetrics, InterTokenLatenciesComeFromTheStepsEachRequestGotATokenIn) {
  const Summary s = summarize(three_requests());
  // Request 0: 20, 30, 40, 50 ms; request 1: 70 ms (30 -> 100), then 50 ms; request 2 unfinished.
  const std::vector<double> gaps{0.020, 0.030, 0.040, 0.050, 0.070, 0.050};
  const Distribution expected = distribution_of(gaps);
  EXPECT_EQ(s.itl.count, 6);
  EXPECT_NEAR(s.itl.mean, 0.26 / 6, 1e-15);
  EXPECT_NEAR(s.itl.p50, 0.045, 1e-15);
  EXPECT_NEAR(s.itl.max, 0.070, 1e-15);
  for (const auto& [ours, theirs] : {std::pair{s.itl.mean, expected.mean},
                                     {s.itl.std, expected.std},
                                     {s.itl.p50, expected.p50},
                                     {s.itl.p90, expected.p90},
                                     {s.itl.p95, expected.p95},
                                     {s.itl.p99, expected.p99}})
    EXPECT_NEAR(ours, theirs, 1e-15);
  // A request's gaps add up to its E2E - TTFT.
  EXPECT_NEAR(s.itl.mean * 6, (0.150 - 0.010) + (0.150 - 0.030), 1e-15);
  EXPECT_EQ(s.completed_input_tokens, 200);
  EXPECT_EQ(s.completed_output_tokens, 8);
}

TEST(ServingMetrics, StatisticsAreNumpysAndEmptyOverNothing) {
  const Distribution d = distribution_of({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_DOUBLE_EQ(d.std, std::sqrt(1.25));  // population standard deviation
  EXPECT_DOUBLE_EQ(d.p50, 2.5);
  EXPECT_DOUBLE_EQ(d.p95, 3.85);
  EXPECT_DOUBLE_EQ(d.max, 4);
  const Distribution counted = distribution_of_counted({{4, 1}, {1, 1}, {3, 1}, {2, 1}, {9, 0}});
  EXPECT_EQ(counted.count, 4);
  EXPECT_DOUBLE_EQ(counted.p95, d.p95);
  EXPECT_DOUBLE_EQ(counted.std, d.std);
  EXPECT_EQ(distribution_of_counted({}).count, 0);
  EXPECT_EQ(distribution_of({}).count, 0);
}

TEST(ServingMetrics, GoodputCountsCompletedRequestsMeetingEverySlo) {
  const RunResult run = three_requests();
  GoodputSlos ttft;
  ttft.ttft_ms = 20;  // request 0 (10 ms) meets it, request 1 (30 ms) does not
  EXPECT_EQ(summarize(run, ttft).good_requests, 1);
  GoodputSlos tpot;
  tpot.tpot_ms = 61;  // TPOT 35 ms and 60 ms: both meet it
  EXPECT_EQ(summarize(run, tpot).good_requests, 2);
  tpot.tpot_ms = 59;
  EXPECT_EQ(summarize(run, tpot).good_requests, 1);
  GoodputSlos both = ttft;
  both.e2el_ms = 100;  // and request 0's E2E (150 ms) does not meet this
  EXPECT_EQ(summarize(run, both).good_requests, 0);
  EXPECT_EQ(summarize(run).good_requests, 0) << "no SLO, no goodput";
}

}  // namespace
}  // namespace semsim
