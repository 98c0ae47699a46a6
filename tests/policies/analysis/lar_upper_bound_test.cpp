#include "policies/analysis/lar_upper_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "../routing_fixture.hpp"
#include "models/input_error.hpp"
#include "policies/placement_policies.hpp"
#include "policies/policy_registry.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

using DeviceOfExpert = std::vector<int>;

// The bound with one load tolerance for TP and DP (as brute_force below checks them), on two threads.
LarUpperBound bound_of(const RoutingTrace& trace, const std::vector<bool>& use, int devices, double balance,
                       int triangle_rounds = 2) {
  return lar_upper_bound(trace, use, devices, {balance, balance, 100, triangle_rounds, 2});
}

// Every way to put `experts` experts on `devices` devices, experts/devices each.
std::vector<DeviceOfExpert> all_balanced_placements(int experts, int devices) {
  std::vector<DeviceOfExpert> out;
  DeviceOfExpert current(experts);
  std::vector<int> room(devices, experts / devices);
  std::function<void(int)> extend = [&](int e) {
    if (e == experts) return out.push_back(current);
    for (int d = 0; d < devices; ++d)
      if (room[d] > 0) {
        --room[d];
        current[e] = d;
        extend(e + 1);
        ++room[d];
      }
  };
  extend(0);
  return out;
}

// Local activations of `token` at `layer` on `device`.
int local(const RoutingTrace& trace, std::int64_t token, int layer, const DeviceOfExpert& placement,
          int device) {
  int count = 0;
  for (int i = 0; i < trace.header().top_k; ++i)
    count += placement[trace.experts_of(token, layer)[i]] == device;
  return count;
}

// Calls visit(assignment) for every assignment of `units` weighted units to `devices` devices
// within the load limit balance × total / devices.
void for_each_assignment(const std::vector<int>& weight, int devices, double balance,
                         const std::function<void(const std::vector<int>&)>& visit) {
  double total = 0;
  for (int w : weight) total += w;
  const double limit = balance * total / devices + 1e-9;
  std::vector<int> assignment(weight.size()), load(devices, 0);
  std::function<void(std::size_t)> extend = [&](std::size_t u) {
    if (u == weight.size()) return visit(assignment);
    for (int d = 0; d < devices; ++d)
      if (load[d] + weight[u] <= limit) {
        load[d] += weight[u];
        assignment[u] = d;
        extend(u + 1);
        load[d] -= weight[u];
      }
  };
  extend(0);
}

struct Optimum {
  double tp = -1, dp = -1;  // LAR; -1: no assignment within the balance
};

// Best LAR over the given per-layer placement candidates and every token (TP) or request (DP)
// assignment, by enumeration.
Optimum brute_force(const RoutingTrace& trace, int devices, double balance,
                    const std::vector<std::vector<DeviceOfExpert>>& candidates) {
  const int layers = trace.header().moe_layers;
  const double activations = static_cast<double>(trace.tokens()) * trace.header().top_k * layers;
  Optimum best;
  double tp_local = 0;
  for (int layer = 0; layer < layers; ++layer) {
    double layer_best = -1;
    for_each_assignment(std::vector<int>(trace.tokens(), 1), devices, balance,
                        [&](const std::vector<int>& device) {
                          for (const DeviceOfExpert& placement : candidates[layer]) {
                            double sum = 0;
                            for (std::size_t t = 0; t < trace.tokens(); ++t)
                              sum += local(trace, t, layer, placement, device[t]);
                            layer_best = std::max(layer_best, sum);
                          }
                        });
    if (layer_best < 0) return {};
    tp_local += layer_best;
  }
  best.tp = tp_local / activations;
  std::vector<int> request_tokens;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    request_tokens.push_back(trace.request(r).routed_tokens());
  for_each_assignment(request_tokens, devices, balance, [&](const std::vector<int>& device) {
    double sum = 0;
    for (int layer = 0; layer < layers; ++layer) {
      double layer_best = 0;
      for (const DeviceOfExpert& placement : candidates[layer]) {
        double s = 0;
        for (std::size_t r = 0; r < trace.requests(); ++r)
          for (std::int64_t t = trace.first_token(r); t < trace.first_token(r + 1); ++t)
            s += local(trace, t, layer, placement, device[r]);
        layer_best = std::max(layer_best, s);
      }
      sum += layer_best;
    }
    best.dp = std::max(best.dp, sum / activations);
  });
  return best;
}

struct Shape {
  int experts, devices, k;
  double balance;
};

TEST(LarUpperBound, NeverBelowTheExhaustiveOptimumOrAnyPolicy) {
  int policies_checked = 0;
  for (const Shape& shape : {Shape{4, 2, 2, 1.0}, Shape{6, 2, 2, 1.2}, Shape{6, 2, 3, 2.0},
                             Shape{6, 3, 2, 1.5}, Shape{8, 2, 3, 1.1}}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const RoutingTrace trace =
          test::random_trace(2, shape.experts, shape.k, 3, 3, 4, seed * 31 + shape.experts);
      if (trace.tokens() > 8) continue;  // keep the enumeration small
      const LarUpperBound bound = bound_of(trace, {}, shape.devices, shape.balance);
      EXPECT_LE(bound.dp, bound.tp + 1e-12);
      const auto every = all_balanced_placements(shape.experts, shape.devices);
      const Optimum optimum = brute_force(trace, shape.devices, shape.balance, {every, every});
      EXPECT_GE(bound.tp, optimum.tp - 1e-9) << shape.experts << "/" << shape.devices << " seed " << seed;
      EXPECT_GE(bound.dp, optimum.dp - 1e-9) << shape.experts << "/" << shape.devices << " seed " << seed;

      const RoutingProfile profile = RoutingProfile::build(trace, {});
      const PlacementInput input{2, shape.experts, shape.devices, 0, 1, &profile};
      for (const PolicyEntry& info : policies_of(PolicyKind::kPlacement)) {
        PlacementResult result;
        try {
          result = place_experts(input, default_policy_choice(PolicyKind::kPlacement, info.name));
        } catch (const InputError&) {
          continue;  // the policy does not apply to this shape (e.g. its balance cannot be met)
        }
        if (result.placement.has_replicas()) continue;  // the bound is for placements without replicas
        std::vector<std::vector<DeviceOfExpert>> placed(2, {DeviceOfExpert(shape.experts)});
        for (int layer = 0; layer < 2; ++layer)
          for (int d = 0; d < shape.devices; ++d)
            for (int e : result.placement.slots[layer][d]) placed[layer][0][e] = d;
        const Optimum achieved = brute_force(trace, shape.devices, shape.balance, placed);
        EXPECT_GE(bound.tp, achieved.tp - 1e-9) << info.name;
        EXPECT_GE(bound.dp, achieved.dp - 1e-9) << info.name;
        ++policies_checked;
      }
    }
  }
  EXPECT_GT(policies_checked, 20);
}

TEST(LarUpperBound, TightWhenTheCoactivationGraphHasAPerfectSplit) {
  // One request; tokens {0,1} x3, {0,2}, {2,3}. Best TP: {0,1} | {2,3}, every token on its best
  // device: 2+2+2+1+2 = 9 of 10 activations. Best DP (all on one device): {0,1} hosts 4+3 of 10.
  using test::FixtureToken;
  const RoutingTrace trace =
      test::fixture_trace(1, 4, 2, 1, {{{0, {0, 1}}, {0, {0, 1}}, {0, {1, 0}}, {0, {0, 2}}, {0, {2, 3}}}});
  const LarUpperBound bound = bound_of(trace, {}, 2, 2.0);
  EXPECT_NEAR(bound.tp, 0.9, 1e-9);
  EXPECT_NEAR(bound.dp, 0.7, 1e-9);
  const auto every = all_balanced_placements(4, 2);
  const Optimum optimum = brute_force(trace, 2, 2.0, {every});
  EXPECT_NEAR(optimum.tp, 0.9, 1e-12);
  EXPECT_NEAR(optimum.dp, 0.7, 1e-12);
}

TEST(LarUpperBound, OddCycleIsNotTightButValid) {
  // Tokens {0,1}, {0,2}, {1,2} on three devices of two experts: only one pair can share a device
  // (4 of 6 local), while the relaxation may split every pair in halves (at most 4.5 of 6).
  const RoutingTrace trace = test::fixture_trace(1, 6, 2, 1, {{{0, {0, 1}}, {0, {0, 2}}, {0, {1, 2}}}});
  const LarUpperBound bound = bound_of(trace, {}, 3, 3.0);
  EXPECT_GE(bound.tp, 4.0 / 6 - 1e-9);
  EXPECT_LE(bound.tp, 4.5 / 6 + 1e-9);
}

TEST(LarUpperBound, TriangleInequalitiesCutNonPartitions) {
  // Tokens on the edges of the 6-cycle 0-1-2-3-4-5-0, two devices of three experts. Degrees alone
  // allow co-locating every cycle edge (all 12 activations local); a partition keeps at most 4
  // edges (e.g. {0,1,2} | {3,4,5}): 10 of 12.
  std::vector<test::FixtureToken> tokens;
  for (int e = 0; e < 6; ++e)
    tokens.push_back({0, {static_cast<ExpertId>(e), static_cast<ExpertId>((e + 1) % 6)}});
  const RoutingTrace trace = test::fixture_trace(1, 6, 2, 1, {tokens});
  EXPECT_NEAR(bound_of(trace, {}, 2, 2.0, 0).tp, 1.0, 1e-9);
  const double with_triangles = bound_of(trace, {}, 2, 2.0, 2).tp;
  EXPECT_LT(with_triangles, 0.99);
  EXPECT_GE(with_triangles, 10.0 / 12 - 1e-9);
}

TEST(LarUpperBound, SameOnAnyNumberOfThreadsAndTpBalanceOnlyTightensTp) {
  const RoutingTrace trace = test::random_trace(5, 16, 4, 6, 4, 12, 7);
  const LarUpperBound one = lar_upper_bound(trace, {}, 4, {1.5, 1.5, 100, 1, 1});
  const LarUpperBound three = lar_upper_bound(trace, {}, 4, {1.5, 1.5, 100, 1, 3});
  EXPECT_EQ(one.tp_layer, three.tp_layer);
  EXPECT_EQ(one.dp_layer, three.dp_layer);
  const LarUpperBound even = lar_upper_bound(trace, {}, 4, {1.0, 1.5, 100, 1, 2});
  EXPECT_LE(even.tp, one.tp);
  EXPECT_EQ(even.dp_layer, one.dp_layer);
  EXPECT_THROW(lar_upper_bound(trace, {}, 4, {1.0, 1.5, 100, 1, 0}), InputError);
  EXPECT_THROW(lar_upper_bound(trace, {}, 4, {0.9, 1.5, 100, 1, 1}), InputError);
}

TEST(LarUpperBound, MaskSelectsRequests) {
  // Alone, the token {0,1} can be all local; with {0,2} beside it, expert 0 has one partner: 3 of 4.
  const RoutingTrace trace = test::fixture_trace(1, 4, 2, 1, {{{0, {0, 1}}}, {{0, {0, 2}}}});
  EXPECT_NEAR(bound_of(trace, {true, false}, 2, 2.0).tp, 1.0, 1e-9);
  EXPECT_NEAR(bound_of(trace, {}, 2, 2.0).tp, 0.75, 1e-9);
  EXPECT_THROW(bound_of(trace, {}, 3, 1.1), InputError);
}

}  // namespace
}  // namespace semsim
