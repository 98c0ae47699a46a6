// The cache-aware Attention-DP scheduler on hand-made ranks: the longest cached prefix among ranks
// under the load cap, the least loaded otherwise.
#include "policies/prefix_aware_scheduler.hpp"

#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

RankLoad rank(long long outstanding, long long cached) {
  RankLoad load;
  load.outstanding_tokens = outstanding;
  load.requests = outstanding > 0 ? 1 : 0;
  load.cached_prefix_tokens = cached;
  return load;
}

int choose(double load_cap, const std::vector<RankLoad>& ranks) {
  PrefixAwareScheduler scheduler(load_cap);
  return scheduler.choose(Request{}, {}, ranks);
}

TEST(PrefixAwareScheduler, DecisionsOnHandMadeRanks) {
  // Mean outstanding 1000; cap 1.5 x: 1500. Rank 2 holds most of the prompt and qualifies.
  EXPECT_EQ(choose(1.5, {rank(1000, 0), rank(500, 512), rank(1500, 1024), rank(1000, 0)}), 2);
  // At cap 1.25 (1250) rank 2 is overloaded: the next longest prefix, rank 1.
  EXPECT_EQ(choose(1.25, {rank(1000, 0), rank(500, 512), rank(1500, 1024), rank(1000, 0)}), 1);
  // Equal prefixes: the less loaded of them.
  EXPECT_EQ(choose(1.5, {rank(900, 512), rank(600, 512), rank(300, 0)}), 1);
  // No hit anywhere: the least loaded (shortest_queue), lowest index on ties.
  EXPECT_EQ(choose(1.5, {rank(700, 0), rank(200, 0), rank(200, 0)}), 1);
  // All idle: every rank qualifies; the prefix decides.
  EXPECT_EQ(choose(1.0, {rank(0, 0), rank(0, 0), rank(0, 64)}), 2);
  // Cap 1: only ranks at or below the mean.
  EXPECT_EQ(choose(1.0, {rank(400, 0), rank(200, 0), rank(600, 2048)}), 1);
}

TEST(PrefixAwareScheduler, RegistryBuildsItAndRefusesALoadCapBelowOne) {
  PolicyChoice choice = default_policy_choice(PolicyKind::kRequestScheduling, "prefix_aware");
  EXPECT_EQ(choice.param("load_cap"), 1.5);
  auto scheduler = make_request_scheduler(choice, PlacementPlan{});
  const std::vector<RankLoad> ranks{rank(100, 0), rank(100, 64)};
  EXPECT_EQ(scheduler->choose(Request{}, {}, ranks), 1);
  choice.params["load_cap"] = 0.5;
  try {
    make_request_scheduler(choice, PlacementPlan{});
    ADD_FAILURE() << "a load cap below 1 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'load_cap' must be at least 1, got 0.5"),
              std::string::npos)
        << e.what();
  }
}

// Outside a scenario (semsim place) nothing is checked; in one, the cache must be on.
TEST(PrefixAwareScheduler, NeedsThePrefixCache) {
  const PolicyEntry& entry = policy_entry(PolicyKind::kRequestScheduling, "prefix_aware");
  EXPECT_EQ(unmet_requirement(entry, {AttentionMode::kDataParallel, false, false, false}),
            "request scheduling 'prefix_aware' needs serving.prefix_cache: true (a cache to be aware of)");
  EXPECT_EQ(unmet_requirement(entry, {AttentionMode::kDataParallel, false, false, true}), "");
  EXPECT_EQ(unmet_requirement(entry, {AttentionMode::kTensorParallel, false, false, true}),
            "request scheduling 'prefix_aware' needs attention: dp");
  EXPECT_EQ(unmet_requirement(entry, {}), "");
}

}  // namespace
}  // namespace semsim
