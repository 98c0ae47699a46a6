#include "policies/analysis/oracle_assignment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "../routing_fixture.hpp"
#include "policies/analysis/lar_upper_bound.hpp"
#include "policies/analysis/placement_evaluation.hpp"
#include "policies/placement_plan.hpp"
#include "policies/placement_policies.hpp"
#include "policies/policy_registry.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// Calls visit(device) for every assignment of `items` items to `devices` devices.
template <typename Visit>
void every_assignment(std::size_t items, int devices, Visit visit) {
  std::vector<int> device(items, 0);
  for (;;) {
    visit(device);
    std::size_t i = 0;
    while (i < items && ++device[i] == devices) device[i++] = 0;
    if (i == items) return;
  }
}

TEST(BestCapacitatedAssignment, EqualsExhaustiveSearch) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const int devices = 2 + trial % 3;
    const std::size_t items = 1 + rng() % 7;
    const long long capacity = (static_cast<long long>(items) + devices - 1) / devices + (trial % 4 == 0);
    std::vector<int> local(items * devices);
    for (int& v : local) v = static_cast<int>(rng() % 4);
    long long best = -1;
    every_assignment(items, devices, [&](const std::vector<int>& device) {
      std::vector<long long> load(devices, 0);
      long long sum = 0;
      for (std::size_t i = 0; i < items; ++i) {
        ++load[device[i]];
        sum += local[i * devices + device[i]];
      }
      if (*std::max_element(load.begin(), load.end()) <= capacity) best = std::max(best, sum);
    });
    EXPECT_EQ(best_capacitated_assignment(local, devices, capacity), best) << "trial " << trial;
  }
  EXPECT_THROW(best_capacitated_assignment(std::vector<int>(6, 1), 2, 1), std::invalid_argument);
}

TEST(HindsightRequestAssignment, FeasibleNeverBelowTheStartAndOptimalWithoutACap) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 40; ++trial) {
    const int devices = 2 + trial % 3;
    const std::size_t requests = 2 + rng() % 7;
    std::vector<long long> local(requests * devices), size(requests);
    for (long long& v : local) v = static_cast<long long>(rng() % 20);
    for (long long& s : size) s = 1 + static_cast<long long>(rng() % 5);
    long long total = 0;
    for (long long s : size) total += s;
    const double cap = 1.3 * static_cast<double>(total) / devices;
    auto value = [&](const std::vector<int>& device) {
      long long sum = 0;
      for (std::size_t r = 0; r < requests; ++r) sum += local[r * devices + device[r]];
      return sum;
    };
    auto within_cap = [&](const std::vector<int>& device) {
      std::vector<long long> load(devices, 0);
      for (std::size_t r = 0; r < requests; ++r) load[device[r]] += size[r];
      return static_cast<double>(*std::max_element(load.begin(), load.end())) <= cap;
    };
    // A feasible start: requests dealt round-robin by decreasing size, which stays within the cap
    // when it can; skip the trial otherwise.
    std::vector<int> start(requests);
    for (std::size_t r = 0; r < requests; ++r) start[r] = static_cast<int>(r % devices);
    if (!within_cap(start)) continue;
    const std::vector<int> chosen = hindsight_request_assignment(local, size, devices, cap, start);
    EXPECT_TRUE(within_cap(chosen)) << "trial " << trial;
    EXPECT_GE(value(chosen), value(start)) << "trial " << trial;

    long long best_free = 0;
    for (std::size_t r = 0; r < requests; ++r)
      best_free += *std::max_element(local.begin() + static_cast<std::ptrdiff_t>(r * devices),
                                     local.begin() + static_cast<std::ptrdiff_t>((r + 1) * devices));
    EXPECT_EQ(value(hindsight_request_assignment(local, size, devices, 1e18, start)), best_free);
  }
}

TEST(HindsightLar, BetweenThePredictedLarAndTheUpperBound) {
  int checked = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const RoutingTrace trace = test::random_trace(3, 8, 2, 8, 6, 10, seed);
    const std::vector<bool> held_out = held_out_requests(trace.requests(), 0.5, seed);
    const RoutingProfile profile = RoutingProfile::build(trace, held_out);
    for (const char* policy : {"contiguous", "semmoe", "coact"}) {
      const PlacementPlan plan = make_placement_plan({3, 8, 2, 2, 1, &profile},
                                                     default_policy_choice(PolicyKind::kPlacement, policy));
      const EvaluationOptions options{1.5, 8};
      const PlacementEvaluation e = evaluate_placement(plan, trace, held_out, options);
      const double tp_balance = equal_slice_balance(e.tokens, options.tp_batch_tokens, 2);
      const LarUpperBound bound = lar_upper_bound(trace, held_out, 2, {tp_balance, 1.5, 100, 2, 1});
      EXPECT_GE(e.lar_tp_hindsight, e.lar_tp - 1e-12) << policy << " seed " << seed;
      EXPECT_LE(e.lar_tp_hindsight, bound.tp + 1e-9) << policy << " seed " << seed;
      if (e.imbalance_dp <= 1.5) {
        EXPECT_GE(e.lar_dp_hindsight, e.lar_dp - 1e-12) << policy << " seed " << seed;
      }
      EXPECT_LE(e.lar_dp_hindsight, bound.dp + 1e-9) << policy << " seed " << seed;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18);
}

TEST(EqualSliceBalance, MostTokensPerRankOverTheMean) {
  EXPECT_DOUBLE_EQ(equal_slice_balance(8, 4, 4), 1.0);
  EXPECT_DOUBLE_EQ(equal_slice_balance(10, 4, 4), 1.2);  // batches 4, 4, 2: at most 1 + 1 + 1 of mean 2.5
  EXPECT_DOUBLE_EQ(equal_slice_balance(10, 0, 4), 1.2);  // one batch of 10: ceil(10/4) = 3
  EXPECT_DOUBLE_EQ(equal_slice_balance(0, 4, 4), 1.0);
}

}  // namespace
}  // namespace semsim
