#include "policies/cost_scored_placement.hpp"

#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "policies/policy_registry.hpp"
#include "profile_fixture.hpp"
#include "routing_fixture.hpp"

namespace semsim {
namespace {

// Prices by hand: a device's experts cost `per_expert` per active expert plus `per_token` per token,
// an exchange `per_copy` per token copy (dispatch and combine together).
class HandPricer final : public MoeLayerPricer {
 public:
  HandPricer(double per_expert, double per_token, double per_copy)
      : per_expert_(per_expert), per_token_(per_token), per_copy_(per_copy) {}
  DispatchMode traffic(bool) override { return DispatchMode::kDedup; }
  double experts_seconds(std::span<const int> tokens) override {
    double seconds = 0;
    for (const int n : tokens) seconds += n > 0 ? per_expert_ + per_token_ * n : 0;
    return seconds;
  }
  double exchange_seconds(std::span<const long long> copies, bool) override {
    long long moved = 0;
    for (const long long c : copies) moved += c;
    return per_copy_ * static_cast<double>(moved);
  }

 private:
  double per_expert_, per_token_, per_copy_;
};

LengthDistribution fixed_length(int value) {
  LengthDistribution d;
  d.value = value;
  return d;
}

Placement two_device_plan(std::vector<int> first, std::vector<int> second) {
  Placement p;
  p.moe_layers = 1;
  p.experts = 4;
  p.devices = 2;
  p.slots = {{std::move(first), std::move(second)}};
  p.seal();
  return p;
}

// One MoE layer of 4 experts on 2 devices; every token is routed to experts 0 and 1 (top-2), each
// request one such token. Locality wants 0 and 1 together (plan A: {0,1} {2,3}); balance wants them
// apart (plan B: {0,2} {1,3}).
class LocalityAgainstBalance : public ::testing::Test {
 protected:
  LocalityAgainstBalance()
      : profile_(RoutingProfile::build(
            test::fixture_trace(1, 4, 2, 1, std::vector<std::vector<test::FixtureToken>>(16, {{0, {0, 1}}})),
            {})) {}

  // Attention-TP, 4 requests in flight, every output 1 token: the sample alternates a step decoding
  // the 4 requests and one prefilling their 4 replacements' 1-token prompts, 4 tokens each, 2 per
  // device (positional slices).
  PlacementResult choose(HandPricer& pricer, std::vector<PlacementStart> starts, int evaluations) {
    PlacementScoring scoring;
    scoring.pricer = &pricer;
    scoring.tensor_parallel_attention = true;
    scoring.in_flight = 4;
    scoring.output_len = fixed_length(1);
    PlacementInput input{1, 4, 2, 0, 1, &profile_};
    input.scoring = &scoring;
    CostScoredParams params;
    params.steps = 8;
    params.evaluations = evaluations;
    return improve_cheapest_start(input, std::move(starts), params);
  }

  static std::vector<PlacementStart> plans_a_and_b() {
    return {{"a", two_device_plan({0, 1}, {2, 3}), {}}, {"b", two_device_plan({0, 2}, {1, 3}), {}}};
  }

  RoutingProfile profile_;
};

// Per step of 4 tokens, 2 on each device, a = 1 per active expert, b = 0.25 per token, c per copy:
//   A: device 0 runs experts 0 and 1 on 4 tokens each (2a + 8b = 4), device 1's 2 tokens send one
//      copy each (2c): 4 + 2c;
//   B: each device runs one expert on 4 tokens (a + 4b = 2), every token sends one copy: 2 + 4c.
TEST_F(LocalityAgainstBalance, LayerTimeIsTheSlowestDevicePlusTheExchange) {
  HandPricer slow_links(1, 0.25, 2);
  const std::vector<SampledStep> step = {{{0, 1, 2, 3}, {0, 0, 1, 1}, true}};
  const RoutingTrace& paths = *profile_.profiled_paths();
  EXPECT_DOUBLE_EQ(sampled_layer_seconds(two_device_plan({0, 1}, {2, 3}), 0, paths, step, slow_links,
                                         ReplicaChoice::kRoundRobin),
                   4 + 2 * 2);
  EXPECT_DOUBLE_EQ(sampled_layer_seconds(two_device_plan({0, 2}, {1, 3}), 0, paths, step, slow_links,
                                         ReplicaChoice::kRoundRobin),
                   2 + 4 * 2);
}

TEST_F(LocalityAgainstBalance, SlowLinksPickTheCoLocatedPlan) {
  HandPricer slow_links(1, 0.25, 2);  // A: 8 per step, B: 10
  const PlacementResult r = choose(slow_links, plans_a_and_b(), 0);
  EXPECT_EQ(r.solver.at("start"), 0);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_a"), 8 * 8);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_b"), 8 * 10);
  EXPECT_EQ(r.placement.slots[0][0], (std::vector<int>{0, 1}));
}

TEST_F(LocalityAgainstBalance, FastLinksPickTheBalancedPlan) {
  HandPricer fast_links(1, 0.25, 0.5);  // A: 5 per step, B: 4
  const PlacementResult r = choose(fast_links, plans_a_and_b(), 0);
  EXPECT_EQ(r.solver.at("start"), 1);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_a"), 8 * 5);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_b"), 8 * 4);
  EXPECT_EQ(r.placement.slots[0][0], (std::vector<int>{0, 2}));
}

// From the co-located plan alone, fast links: the search's swaps find a plan as cheap as B, which
// splits experts 0 and 1.
TEST_F(LocalityAgainstBalance, SearchFindsTheBalancedPlanFromTheCoLocatedOne) {
  HandPricer fast_links(1, 0.25, 0.5);
  const PlacementResult r = choose(fast_links, {{"a", two_device_plan({0, 1}, {2, 3}), {}}}, 64);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_start"), 8 * 5);
  EXPECT_DOUBLE_EQ(r.solver.at("seconds_result"), 8 * 4);
  EXPECT_GT(r.solver.at("kept_moves"), 0);
  EXPECT_NE(r.placement.hosts(0, 0, 0), r.placement.hosts(0, 1, 0));
}

// The registered policy on a skewed random profile, Attention-DP with Sem-MoE's request vote: never
// above its cheapest start on its own sample, and the same plan on a rerun.
TEST(CostScoredPlacement, NeverWorseThanItsStartAndDeterministic) {
  const RoutingProfile profile = test::random_profile(3, 16, 2, 400, 7);
  HandPricer pricer(1, 0.05, 0.2);
  for (const char* scheduler : {"round_robin", "semmoe_dp"}) {
    SCOPED_TRACE(scheduler);
    PlacementScoring scoring;
    scoring.pricer = &pricer;
    scoring.request_scheduling = default_policy_choice(PolicyKind::kRequestScheduling, scheduler);
    scoring.in_flight = 8;
    scoring.output_len = fixed_length(3);
    PlacementInput input{3, 16, 4, 0, 1, &profile};
    input.scoring = &scoring;
    PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "cost_scored");
    choice.params["steps"] = 16;
    choice.params["evaluations"] = 300;
    const PlacementResult first = place_experts(input, choice);
    const PlacementResult again = place_experts(input, choice);
    EXPECT_EQ(first.placement, again.placement);
    EXPECT_EQ(first.token_devices, again.token_devices);
    EXPECT_EQ(first.solver, again.solver);
    const double result = first.solver.at("seconds_result");
    EXPECT_LE(result, first.solver.at("seconds_start"));
    for (const char* start : {"seconds_contiguous", "seconds_eplb", "seconds_semmoe"})
      EXPECT_LE(result, first.solver.at(start)) << start;
    EXPECT_GT(first.solver.at("evaluations"), 0);
    // Moves keep every device's slot count (its weight memory): equal, as every start's.
    for (int layer = 0; layer < 3; ++layer)
      for (int d = 1; d < 4; ++d)
        EXPECT_EQ(first.placement.slots[layer][d].size(), first.placement.slots[layer][0].size());
  }
}

TEST(CostScoredPlacement, RefusedWithoutARunsPricing) {
  const RoutingProfile profile = test::random_profile(1, 8, 2, 50, 1);
  const PlacementInput input{1, 8, 2, 0, 1, &profile};
  try {
    place_experts(input, default_policy_choice(PolicyKind::kPlacement, "cost_scored"));
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not in `semsim place`"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace semsim
