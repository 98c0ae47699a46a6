// Offline evaluation of a placement plan (policies/analysis/placement_evaluation.hpp) on planted
// routing, where the right answers are known.
#include <gtest/gtest.h>

#include "policies/analysis/placement_evaluation.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/placement_plan.hpp"
#include "policies/placement_policies.hpp"
#include "policies/policy_registry.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// Planted routing: token type j (0..3) always uses experts {2(j%2), 2(j%2)+1}, i.e. one device.
RoutingTrace planted_trace(int requests) {
  TraceBuilder b({"tiny", "planted", 1, 4, 2, false});
  for (const char* text : {"t0", "t1", "t2", "t3"}) b.token_id(text);
  for (int r = 0; r < requests; ++r) {
    const int type = r % 4;  // one token type per request, 8 tokens
    std::vector<std::int32_t> ids(8, type);
    std::vector<ExpertId> experts;
    for (int t = 0; t < 8; ++t) {
      const auto first = static_cast<ExpertId>(2 * (type % 2));
      experts.push_back(t % 2 ? first : static_cast<ExpertId>(first + 1));
      experts.push_back(t % 2 ? static_cast<ExpertId>(first + 1) : first);
    }
    b.add({{8, 1, true, 0}, ids, experts, {}}, "fixture");
  }
  return std::move(b).build();
}

TEST(PlacementEvaluation, PlantedRoutingIsFullyLocalWithTheTables) {
  const RoutingTrace trace = planted_trace(16);
  const std::vector<bool> held_out = held_out_requests(trace.requests(), 0.5, 3);
  const RoutingProfile profile = RoutingProfile::build(trace, held_out);
  const PlacementPlan plan = make_placement_plan({1, 4, 2, 2, 1, &profile},
                                                 default_policy_choice(PolicyKind::kPlacement, "contiguous"));
  const PlacementEvaluation e = evaluate_placement(plan, trace, held_out, {1.10, 16});
  EXPECT_EQ(e.requests, 8);
  EXPECT_EQ(e.tokens, 64);
  EXPECT_EQ(e.activations, 128);
  EXPECT_DOUBLE_EQ(e.lar_tp, 1.0);
  EXPECT_DOUBLE_EQ(e.lar_dp, 1.0);
  EXPECT_EQ(e.remote_copies_tp, 0);
  EXPECT_DOUBLE_EQ(e.imbalance_dp, 1.0);
  EXPECT_DOUBLE_EQ(e.tp_by_token_table, 1.0);
  EXPECT_DOUBLE_EQ(e.lar_tp_hindsight, 1.0);
  EXPECT_DOUBLE_EQ(e.lar_dp_hindsight, 1.0);
}

TEST(PlacementEvaluation, WithoutTablesTokensSpreadAndLarIsTheExpertShare) {
  const RoutingTrace trace = planted_trace(16);
  PlacementPlan plan;
  plan.placement = contiguous_placement(1, 4, 2);
  // Round robin: it needs no token table.
  const PlacementEvaluation e = evaluate_placement(
      plan, trace, {}, {1.10, 0, default_policy_choice(PolicyKind::kRequestScheduling, "round_robin")});
  // Every token's two experts share a device, and tokens alternate devices: half are local.
  EXPECT_DOUBLE_EQ(e.tp_unpredicted, 1.0);
  EXPECT_DOUBLE_EQ(e.lar_tp, 0.5);
  EXPECT_DOUBLE_EQ(e.imbalance_tp, 1.0);
  // Each local token saves both copies; each remote one sends one deduplicated copy.
  EXPECT_EQ(e.remote_copies_tp, 64);
  // With hindsight every token and request sits with its experts: half of each on either device.
  EXPECT_DOUBLE_EQ(e.lar_tp_hindsight, 1.0);
  EXPECT_DOUBLE_EQ(e.lar_dp_hindsight, 1.0);
}

}  // namespace
}  // namespace semsim
