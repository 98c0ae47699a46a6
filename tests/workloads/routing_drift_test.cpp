// Routing drift: zero on the profiled requests themselves, small between two samples of the same
// traffic, and growing with a known shift of the generator's expert popularity.
#include "workloads/routing_drift.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "models/input_error.hpp"

namespace semsim {
namespace {

constexpr int kLayers = 4, kExperts = 16;

// `requests` prompts of 32 tokens; at every layer a token takes `top_k` distinct experts drawn by
// Zipf popularity over the experts rotated by `shift` (expert (e + shift) mod E has rank e); with
// probability `paired` its second expert is its first's neighbour (e, e + 1): what co-activation
// sees.
RoutingTrace zipf_trace(int requests, int shift, int top_k, std::uint64_t seed, double paired = 0.9) {
  TraceBuilder b({"test", "zipf", kLayers, kExperts, top_k, false});
  std::mt19937_64 rng(seed);
  std::vector<double> weights(kExperts);
  for (int rank = 0; rank < kExperts; ++rank)
    weights[(rank + shift) % kExperts] = 1.0 / std::pow(rank + 1, 1.2);
  std::discrete_distribution<int> draw(weights.begin(), weights.end());
  for (int r = 0; r < requests; ++r) {
    std::vector<std::int32_t> ids;
    std::vector<ExpertId> routed;
    for (int t = 0; t < 32; ++t) {
      ids.push_back(b.token_id(fmt::format("w{}", rng() % 50)));
      for (int layer = 0; layer < kLayers; ++layer) {
        std::vector<ExpertId> chosen{static_cast<ExpertId>(draw(rng))};
        if (top_k > 1 && std::uniform_real_distribution<double>(0, 1)(rng) < paired)
          chosen.push_back(static_cast<ExpertId>((chosen[0] + 1) % kExperts));
        while (static_cast<int>(chosen.size()) < top_k) {
          const auto e = static_cast<ExpertId>(draw(rng));
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
        }
        routed.insert(routed.end(), chosen.begin(), chosen.end());
      }
    }
    b.add({{32, 1, true, 0}, ids, routed, {}}, "zipf");
  }
  return std::move(b).build();
}

TEST(RoutingDrift, IsZeroOnTheProfiledRequestsThemselves) {
  const RoutingTrace trace = zipf_trace(40, 0, 3, 1);
  const std::vector<bool> held_out = held_out_requests(trace.requests(), 0.5, 1);
  std::vector<bool> profiled(held_out.size());
  for (std::size_t r = 0; r < held_out.size(); ++r) profiled[r] = !held_out[r];
  const RoutingCounts from_profile = RoutingCounts::of(RoutingProfile::build(trace, held_out));
  const RoutingCounts from_trace = RoutingCounts::of(trace, profiled);
  EXPECT_EQ(from_profile.load, from_trace.load);
  EXPECT_EQ(from_profile.coactivation, from_trace.coactivation);
  const RoutingDrift d = routing_drift(from_profile, from_trace);
  EXPECT_EQ(d.popularity_max, 0.0);
  EXPECT_NEAR(*d.coactivation_max, 0.0, 1e-12);
  EXPECT_FALSE(d.stale());
}

TEST(RoutingDrift, GrowsWithAShiftOfPopularityOrOfWhichExpertsTravelTogether) {
  const RoutingCounts base = RoutingCounts::of(zipf_trace(200, 0, 3, 1));
  // Shift 0 is another sample of the same traffic (another seed): no warning.
  const RoutingDrift resampled = routing_drift(base, RoutingCounts::of(zipf_trace(200, 0, 3, 2)));
  EXPECT_FALSE(resampled.stale()) << resampled.popularity_max << " " << *resampled.coactivation_max;
  double previous = resampled.popularity_mean;
  for (const int shift : {1, 4, 8}) {
    SCOPED_TRACE(shift);
    const RoutingDrift d = routing_drift(base, RoutingCounts::of(zipf_trace(200, shift, 3, 2)));
    EXPECT_GT(d.popularity_mean, previous);
    EXPECT_TRUE(d.stale());
    previous = d.popularity_mean;
  }
  // The co-activation spectrum sees structure, not names: pairs that stop travelling together.
  previous = *resampled.coactivation_mean;
  for (const double paired : {0.5, 0.0}) {
    SCOPED_TRACE(paired);
    const RoutingDrift d = routing_drift(base, RoutingCounts::of(zipf_trace(200, 0, 3, 2, paired)));
    EXPECT_GT(*d.coactivation_mean, previous);
    previous = *d.coactivation_mean;
  }
  const RoutingDrift unpaired = routing_drift(base, RoutingCounts::of(zipf_trace(200, 0, 3, 2, 0.0)));
  EXPECT_TRUE(unpaired.stale()) << *unpaired.coactivation_max << " resampled " << *resampled.coactivation_max;
}

// Over a trace, the noise is measured between halves of the evaluated requests: a small sample of
// the same traffic is not stale, however noisy; a shifted one is.
TEST(RoutingDrift, OverATraceWarnsOnlyBeyondItsOwnSamplingNoise) {
  const RoutingCounts base = RoutingCounts::of(zipf_trace(200, 0, 3, 1));
  const RoutingDrift same = routing_drift(base, zipf_trace(2, 0, 3, 2));
  ASSERT_TRUE(same.popularity_noise.has_value());
  EXPECT_GT(*same.popularity_noise, same.popularity_max) << "halves of a small sample differ more";
  EXPECT_FALSE(same.stale()) << same.popularity_max << " vs noise " << *same.popularity_noise;
  const RoutingDrift shifted = routing_drift(base, zipf_trace(60, 8, 3, 2));
  EXPECT_TRUE(shifted.stale()) << shifted.popularity_max << " vs noise " << *shifted.popularity_noise;
}

TEST(RoutingDrift, TopOneRoutingHasNoCoactivationAndShapesMustMatch) {
  const RoutingDrift d =
      routing_drift(RoutingCounts::of(zipf_trace(20, 0, 1, 1)), RoutingCounts::of(zipf_trace(20, 4, 1, 2)));
  EXPECT_FALSE(d.coactivation_mean.has_value());
  EXPECT_GT(d.popularity_mean, 0.0);
  EXPECT_THROW(routing_drift(RoutingCounts::of(zipf_trace(2, 0, 1, 1)), RoutingCounts{}), InputError);
}

}  // namespace
}  // namespace semsim
