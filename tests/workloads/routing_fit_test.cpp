#include <gtest/gtest.h>

#include <cmath>

#include "workloads/routing_fit.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// A trace routed by known parameters: 300 requests of 40 prompt tokens, 4 layers of 32 experts, top-4.
RoutingTrace trace_with_known_parameters(const SyntheticRoutingParams& params, std::uint64_t seed) {
  TraceBuilder shape_builder({"shape", "test", 4, 32, 4, false});
  const std::vector<std::int32_t> ids(40, -1);
  std::vector<ExpertId> experts(40 * 4 * 4);
  for (std::size_t i = 0; i < experts.size(); ++i) experts[i] = static_cast<ExpertId>(i % 4);
  for (int r = 0; r < 300; ++r) shape_builder.add({{40, 1, true, 0}, ids, experts, {}}, "shape");
  const RoutingTrace shape = std::move(shape_builder).build();
  return synthesize_trace(shape, SyntheticRouting(params, 4, 32, 4, seed));
}

SyntheticRoutingParams known_parameters() {
  SyntheticRoutingParams p;
  p.expert_skew = {0.2, 0.9};  // resampled over the 4 layers: 0.2, 0.43, 0.67, 0.9
  p.topics = 1;
  p.topic_boost = 0;
  p.vocabulary = 400;
  p.token_skew = 1.0;
  p.token_affinity = {0.3};
  p.variant_overlap = {0.5};
  p.load_balance = 1.0;
  return p;
}

TEST(SyntheticRoutingParams, PerLayerListsResampleOverDepth) {
  EXPECT_DOUBLE_EQ(value_at_layer({0.2, 0.9}, 0, 4), 0.2);
  EXPECT_DOUBLE_EQ(value_at_layer({0.2, 0.9}, 3, 4), 0.9);
  EXPECT_NEAR(value_at_layer({0.2, 0.9}, 1, 4), 0.2 + 0.7 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(value_at_layer({0.5}, 7, 58), 0.5);
  // 26 fitted layers onto 58: the ends map to the ends, layer 29 of 58 between fitted layers 12 and 13.
  std::vector<double> fitted(26);
  for (int i = 0; i < 26; ++i) fitted[i] = i;
  EXPECT_DOUBLE_EQ(value_at_layer(fitted, 57, 58), 25.0);
  EXPECT_NEAR(value_at_layer(fitted, 29, 58), 29.0 * 25 / 57, 1e-12);
}

TEST(SyntheticRoutingParams, YamlRoundTrip) {
  const SyntheticRoutingParams p = known_parameters();
  const SyntheticRoutingParams q =
      SyntheticRoutingParams::from_yaml(YamlInput::parse(p.to_yaml(), "fit.yaml").required("routing"));
  EXPECT_EQ(q.expert_skew, p.expert_skew);
  EXPECT_EQ(q.vocabulary, 400);
  EXPECT_EQ(q.load_balance, 1.0);
  EXPECT_THROW(SyntheticRoutingParams::from_yaml(YamlInput::parse("{expert_skew: [0.1, 9]}", "x.yaml")),
               InputError);
}

TEST(SyntheticRouting, SameSeedSameRoutingOtherSeedOther) {
  const SyntheticRoutingParams p = known_parameters();
  const RoutingTrace a = trace_with_known_parameters(p, 5), b = trace_with_known_parameters(p, 5),
                     c = trace_with_known_parameters(p, 6);
  EXPECT_TRUE(std::equal(a.all_experts().begin(), a.all_experts().end(), b.all_experts().begin()));
  EXPECT_TRUE(std::equal(a.token_ids().begin(), a.token_ids().end(), b.token_ids().begin()));
  EXPECT_FALSE(std::equal(a.all_experts().begin(), a.all_experts().end(), c.all_experts().begin()));
}

// Recording requests from id 3 on gives exactly the requests 3.. of a recording from id 0: a trace
// of requests a run never sees routes as that run's generator would.
TEST(SyntheticRouting, RecordingFromAnOffsetRoutesAsTheSameRequestIds) {
  SyntheticRoutingParams p = known_parameters();
  p.topics = 2;
  const SyntheticRouting routing(p, 4, 32, 4, 9);
  const std::vector<TraceRequest> shapes{{5, 1, true, 0}, {2, 1, true, 0}, {7, 1, true, 0},
                                         {4, 1, true, 0}, {6, 1, true, 0}, {3, 1, true, 0}};
  const std::vector<int> topics{0, 1, 1, 0, 1, 0};
  const RoutingTrace all = synthesize_trace(shapes, topics, routing, {"m", "test"});
  const RoutingTrace tail =
      synthesize_trace(std::span(shapes).subspan(3), std::span(topics).subspan(3), routing, {"m", "test"}, 3);
  ASSERT_EQ(tail.requests(), 3u);
  for (std::size_t r = 0; r < 3; ++r) {
    const TraceRequestView a = all.view(r + 3), b = tail.view(r);
    EXPECT_TRUE(std::equal(a.token_ids.begin(), a.token_ids.end(), b.token_ids.begin(), b.token_ids.end()));
    EXPECT_TRUE(std::equal(a.experts.begin(), a.experts.end(), b.experts.begin(), b.experts.end()));
  }
  const RoutingTrace unshifted =
      synthesize_trace(std::span(shapes).subspan(3), std::span(topics).subspan(3), routing, {"m", "test"});
  EXPECT_FALSE(std::equal(unshifted.all_experts().begin(), unshifted.all_experts().end(),
                          tail.all_experts().begin(), tail.all_experts().end()));
}

TEST(RoutingFit, RecoversTheStatisticsOfKnownParameters) {
  const RoutingTrace trace = trace_with_known_parameters(known_parameters(), 11);
  const std::vector<bool> held_out = held_out_requests(trace.requests(), 0.2, 3);
  const RoutingFit fit = fit_synthetic_routing(trace, held_out, 4);  // another seed than the source's
  ASSERT_TRUE(fit.real.has_token_ids);
  for (int layer = 0; layer < 4; ++layer) {
    EXPECT_NEAR(fit.synthetic.load_skew[layer] / fit.real.load_skew[layer], 1.0, 0.10) << layer;
    EXPECT_NEAR(fit.synthetic.f1_p50[layer], fit.real.f1_p50[layer], 0.05) << layer;
  }
  // The popularity skew grows with depth in the source; the fit finds it growing too.
  EXPECT_LT(fit.params.expert_skew[0], fit.params.expert_skew[3]);
  EXPECT_NEAR(fit.synthetic.request_concentration, fit.real.request_concentration, 0.05);
  EXPECT_NEAR(fit.synthetic.unseen_share, fit.real.unseen_share, 0.05);
}

TEST(RoutingFit, FittedParametersScaleToAnotherExpertCount) {
  // Parameters fitted on 4 layers x 32 experts, top-4, used for 10 layers x 128 experts, top-8: the
  // per-slot affinity statistics carry over; load skew follows the Zipf exponent per relative depth.
  const RoutingTrace trace = trace_with_known_parameters(known_parameters(), 11);
  const std::vector<bool> held_out = held_out_requests(trace.requests(), 0.2, 3);
  const RoutingStatistics source = measure_routing(trace, held_out);
  TraceBuilder shape_builder({"shape", "test", 10, 128, 8, false});
  const std::vector<std::int32_t> ids(40, -1);
  std::vector<ExpertId> experts(40 * 10 * 8);
  for (std::size_t i = 0; i < experts.size(); ++i) experts[i] = static_cast<ExpertId>(i % 8);
  for (int r = 0; r < 300; ++r) shape_builder.add({{40, 1, true, 0}, ids, experts, {}}, "shape");
  const RoutingTrace scaled = synthesize_trace(std::move(shape_builder).build(),
                                               SyntheticRouting(known_parameters(), 10, 128, 8, 11));
  const RoutingStatistics target = measure_routing(scaled, held_out);
  ASSERT_EQ(target.load_skew.size(), 10u);
  EXPECT_NEAR(target.f1_mean[0], source.f1_mean[0], 0.1);
  EXPECT_NEAR(target.f1_mean[9], source.f1_mean[3], 0.1);
  EXPECT_LT(target.load_skew[0], target.load_skew[9]);  // the skew profile over depth is kept
}

}  // namespace
}  // namespace semsim
