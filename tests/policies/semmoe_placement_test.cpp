#include "policies/semmoe_placement.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "models/input_error.hpp"
#include "policies/eplb.hpp"
#include "policies/policy_registry.hpp"

namespace semsim {
namespace {

// A trace whose `types` token types each prefer one top-k set (taken with probability `affinity`,
// otherwise a random set); token frequencies vary by up to 3x between types.
RoutingTrace random_trace(int layers, int experts, int top_k, int types, double affinity,
                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  TraceBuilder b({"random", "test", layers, experts, top_k, false});
  std::vector<std::int32_t> ids;
  for (int t = 0; t < types; ++t) ids.push_back(b.token_id(fmt::format("t{}", t)));
  b.token_id("never");  // in the vocabulary, never routed
  auto random_set = [&] {
    std::vector<ExpertId> all(experts);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    return std::vector<ExpertId>(all.begin(), all.begin() + top_k);
  };
  std::vector<std::vector<ExpertId>> preferred;  // [type * layers + layer]
  for (int i = 0; i < types * layers; ++i) preferred.push_back(random_set());
  std::vector<double> weight(types);
  for (double& w : weight) w = std::uniform_real_distribution<double>(1, 3)(rng);
  std::discrete_distribution<int> draw(weight.begin(), weight.end());
  for (int r = 0; r < 40; ++r) {
    std::vector<std::int32_t> tokens;
    std::vector<ExpertId> routed;
    for (int i = 0; i < 30; ++i) {
      const int type = draw(rng);
      tokens.push_back(ids[type]);
      for (int layer = 0; layer < layers; ++layer) {
        const bool usual = std::uniform_real_distribution<double>(0, 1)(rng) < affinity;
        const auto set = usual ? preferred[type * layers + layer] : random_set();
        routed.insert(routed.end(), set.begin(), set.end());
      }
    }
    b.add({{static_cast<int>(tokens.size()), 1, true, 0}, tokens, routed, {}}, "test");
  }
  return std::move(b).build();
}

PlacementInput input_for(const RoutingProfile& profile, int devices) {
  return {profile.moe_layers(), profile.experts(), devices, 0, 1, &profile};
}

TEST(SemMoePlacement, ExactlyNOverDExpertsPerDeviceAndTokenLoadWithinTheCap) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const int devices = seed % 2 == 0 ? 4 : 8;
    const RoutingProfile profile = RoutingProfile::build(random_trace(3, 32, 4, 400, 0.7, seed), {});
    SemMoeParams params;
    params.seed = seed;
    params.shared_tokens = seed > 3;
    const PlacementResult result = semmoe_placement(input_for(profile, devices), params);
    for (int layer = 0; layer < 3; ++layer) {
      std::vector<int> hosted;
      std::vector<double> load(devices, 0.0);
      for (int d = 0; d < devices; ++d) {
        EXPECT_EQ(result.placement.slots[layer][d].size(), 32u / devices);
        hosted.insert(hosted.end(), result.placement.slots[layer][d].begin(),
                      result.placement.slots[layer][d].end());
      }
      std::sort(hosted.begin(), hosted.end());
      std::vector<int> every(32);
      std::iota(every.begin(), every.end(), 0);
      EXPECT_EQ(hosted, every);  // each expert once: no replicas
      double largest = 0;
      for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token) {
        if (profile.token_occurrences(token) == 0) continue;
        const int device = result.token_devices.device[layer][token];
        ASSERT_GE(device, 0);
        load[device] += profile.token_frequency(token);
        largest = std::max(largest, profile.token_frequency(token));
      }
      // Every token fits under the cap when the largest is below the slack (balance − 1)·S/D.
      ASSERT_LT(largest, (params.balance - 1) / devices);
      for (double l : load) EXPECT_LE(l, params.balance / devices + 1e-12);
    }
  }
}

// Four token groups, each routed only to its own four experts (top-2 among them, every pair).
RoutingTrace planted_trace() {
  TraceBuilder b({"planted", "test", 2, 16, 2, false});
  std::vector<std::int32_t> ids;
  for (int t = 0; t < 24; ++t) ids.push_back(b.token_id(fmt::format("g{}t{}", t % 4, t)));
  const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  std::vector<std::int32_t> tokens;
  std::vector<ExpertId> routed;
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int t = 0; t < 24; ++t) {
      const int group = t % 4, pair = (t / 4 + repeat) % 6;
      tokens.push_back(ids[t]);
      for (int layer = 0; layer < 2; ++layer) {
        // Group g owns experts {g, g+4, g+8, g+12} at layer 0 and {4g..4g+3} at layer 1.
        for (int side = 0; side < 2; ++side) {
          const int member = pairs[(pair + layer) % 6][side];
          routed.push_back(static_cast<ExpertId>(layer == 0 ? group + 4 * member : 4 * group + member));
        }
      }
    }
  b.add({{static_cast<int>(tokens.size()), 1, true, 0}, tokens, routed, {}}, "planted");
  return std::move(b).build();
}

TEST(SemMoePlacement, RecoversPlantedClusters) {
  const RoutingProfile profile = RoutingProfile::build(planted_trace(), {});
  const PlacementResult result =
      place_experts(input_for(profile, 4), default_policy_choice(PolicyKind::kPlacement, "semmoe"));
  for (int layer = 0; layer < 2; ++layer) {
    for (int d = 0; d < 4; ++d) {
      std::vector<int> experts = result.placement.slots[layer][d];
      ASSERT_EQ(experts.size(), 4u);
      const int group = layer == 0 ? experts[0] % 4 : experts[0] / 4;
      for (int e : experts) EXPECT_EQ(layer == 0 ? e % 4 : e / 4, group) << "layer " << layer;
    }
    for (std::int32_t token = 0; token < 24; ++token)
      EXPECT_EQ(result.token_devices.confidence[layer][token], 1.0f);
  }
  // Labels aligned across layers: every token stays on its device.
  for (std::int32_t token = 0; token < 24; ++token)
    EXPECT_EQ(result.token_devices.device[0][token], result.token_devices.device[1][token]);
  EXPECT_DOUBLE_EQ(result.solver.at("profiled_local_share"), 1.0);
}

TEST(SemMoePlacement, ObjectiveNeverIncreasesAcrossKeptSwaps) {
  const RoutingProfile profile = RoutingProfile::build(random_trace(1, 32, 4, 150, 0.6, 7), {});
  const CoClusterProblem problem = CoClusterProblem::from_profile(profile, 0, 4);
  const SemMoeParams params;
  std::vector<double> objectives;
  std::vector<int> steps;  // of each kept swap's state
  const CoClustering result = co_cluster_layer(problem, params, 3, {}, [&](const CoClustering& state) {
    // The incrementally tracked objective is the objective of the state.
    EXPECT_NEAR(state.objective,
                co_clustering_objective(problem, params, state.expert_device, state.token_device), 1e-9);
    objectives.push_back(state.objective);
    steps.push_back(state.step);
  });
  ASSERT_GT(result.kept_swaps, 0);
  ASSERT_EQ(objectives.size(), static_cast<std::size_t>(result.kept_swaps));
  // Within an expert step every kept swap lowers the objective (the next step's greedy placement
  // starts afresh).
  int compared = 0;
  for (std::size_t i = 1; i < objectives.size(); ++i)
    if (steps[i] == steps[i - 1]) {
      EXPECT_LT(objectives[i], objectives[i - 1]);
      ++compared;
    }
  EXPECT_GT(compared, 0);
  EXPECT_NEAR(result.objective,
              co_clustering_objective(problem, params, result.expert_device, result.token_device), 1e-12);
}

TEST(SemMoePlacement, DeterministicForASeed) {
  const RoutingProfile profile = RoutingProfile::build(random_trace(4, 32, 4, 100, 0.6, 11), {});
  SemMoeParams params;
  params.seed = 5;
  const PlacementResult a = semmoe_placement(input_for(profile, 8), params);
  const PlacementResult b = semmoe_placement(input_for(profile, 8), params);
  EXPECT_EQ(a.placement.slots, b.placement.slots);
  EXPECT_EQ(a.token_devices.device, b.token_devices.device);
  EXPECT_EQ(a.token_devices.confidence, b.token_devices.confidence);
  EXPECT_EQ(a.solver, b.solver);
}

TEST(SemMoePlacement, UnprofiledTokensHaveNoEntry) {
  const RoutingProfile profile = RoutingProfile::build(random_trace(2, 16, 2, 40, 0.8, 2), {});
  ASSERT_EQ(profile.token_occurrences(40), 0);  // "never"
  const PlacementResult result = semmoe_placement(input_for(profile, 4), SemMoeParams{});
  for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token)
    for (int layer = 0; layer < 2; ++layer) {
      const bool profiled = profile.token_occurrences(token) > 0;
      EXPECT_EQ(result.token_devices.device[layer][token] >= 0, profiled);
      if (!profiled) {
        EXPECT_EQ(result.token_devices.confidence[layer][token], 0.0f);
      }
    }
}

// Σ over layers of the profiled local share of every token on `device[token]` (its DP-style locality).
double shared_device_local_share(const PlacementResult& result, const RoutingProfile& profile,
                                 const std::vector<std::int16_t>& device) {
  double local = 0;
  for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token)
    for (int layer = 0; layer < profile.moe_layers() && device[token] >= 0; ++layer)
      local += profile.token_frequency(token) *
               token_confidence(result.placement, profile, layer, token, device[token]);
  return local;
}

TEST(SemMoePlacement, SharedTokensGiveOneDeviceForAllLayersAndBeatTheConsensus) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const RoutingProfile profile = RoutingProfile::build(random_trace(4, 32, 4, 300, 0.6, seed), {});
    SemMoeParams params;
    params.seed = seed;
    params.theta = 0;  // the objective is then the remote share alone
    const PlacementResult per_layer = semmoe_placement(input_for(profile, 4), params);
    params.shared_tokens = true;
    const PlacementResult shared = semmoe_placement(input_for(profile, 4), params);
    int differing = 0;
    for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token)
      for (int layer = 1; layer < 4; ++layer) {
        EXPECT_EQ(shared.token_devices.device[layer][token], shared.token_devices.device[0][token]);
        differing += per_layer.token_devices.device[layer][token] != per_layer.token_devices.device[0][token];
      }
    EXPECT_GT(differing, 0);  // per-layer co-clustering moves tokens between layers
    // The shared mode starts from the per-layer result's consensus (the DP vote) and only keeps
    // improvements, so a token on one device for all layers finds at least as many local experts.
    const double from_consensus =
        shared_device_local_share(per_layer, profile, dp_vote_devices(per_layer.token_devices, 4));
    const double refined = shared_device_local_share(shared, profile, shared.token_devices.device[0]);
    EXPECT_GT(refined, from_consensus + 1e-9) << "seed " << seed;
  }
}

TEST(SemMoePlacement, SharedTokensRecoverPlantedClusters) {
  const RoutingProfile profile = RoutingProfile::build(planted_trace(), {});
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "semmoe");
  choice.params["shared_tokens"] = 1;
  const PlacementResult result = place_experts(input_for(profile, 4), choice);
  for (int layer = 0; layer < 2; ++layer)
    for (std::int32_t token = 0; token < 24; ++token)
      EXPECT_EQ(result.token_devices.confidence[layer][token], 1.0f);
  EXPECT_DOUBLE_EQ(result.solver.at("profiled_local_share"), 1.0);
}

TEST(SemMoePlacement, SharedTokensDeterministicForASeed) {
  const RoutingProfile profile = RoutingProfile::build(random_trace(4, 32, 4, 100, 0.6, 12), {});
  SemMoeParams params;
  params.seed = 3;
  params.shared_tokens = true;
  const PlacementResult a = semmoe_placement(input_for(profile, 8), params);
  const PlacementResult b = semmoe_placement(input_for(profile, 8), params);
  EXPECT_EQ(a.placement.slots, b.placement.slots);
  EXPECT_EQ(a.token_devices.device, b.token_devices.device);
  EXPECT_EQ(a.solver, b.solver);
}

// DeepSeek-V3's 256 experts at EP72 with 32 redundant: 288 slots, 4 on every device, 40 devices
// with 4 co-clustered experts and 32 with 3 and a replica. The replicas are EPLB's: one at a time of
// the expert with the most load per replica.
TEST(SemMoePlacement, RedundantSlotsHoldTheHottestExpertsReplicasOncePerDevice) {
  for (const bool shared : {false, true}) {
    SCOPED_TRACE(shared);
    const RoutingProfile profile = RoutingProfile::build(random_trace(2, 256, 8, 400, 0.7, 3), {});
    PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "semmoe");
    choice.params["redundant"] = 32;
    choice.params["shared_tokens"] = shared ? 1 : 0;
    const PlacementResult result = place_experts(input_for(profile, 72), choice);
    const Placement& p = result.placement;
    EXPECT_EQ(p.most_slots_per_layer(), 288);
    for (int layer = 0; layer < 2; ++layer) {
      for (int d = 0; d < 72; ++d) {
        std::vector<int> experts = p.slots[layer][d];
        EXPECT_EQ(experts.size(), 4u) << "device " << d;
        std::sort(experts.begin(), experts.end());
        EXPECT_EQ(std::adjacent_find(experts.begin(), experts.end()), experts.end()) << "device " << d;
      }
      const CoClusterProblem problem = CoClusterProblem::from_profile(profile, layer, 72);
      const Replication eplb = replicate_experts({problem.expert_load}, 288);
      for (int e = 0; e < 256; ++e)
        EXPECT_EQ(p.replica_count(layer, e), eplb.logical_count[0][e])
            << "layer " << layer << " expert " << e;
    }
    // The token table's confidence counts the replica on the token's device.
    for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token) {
      const int device = result.token_devices.device[1][token];
      if (device < 0) continue;
      EXPECT_FLOAT_EQ(result.token_devices.confidence[1][token],
                      static_cast<float>(token_confidence(p, profile, 1, token, device)));
    }
    EXPECT_EQ(place_experts(input_for(profile, 72), choice).placement, p);  // deterministic
  }
}

// Four token groups on four devices, group g routed to experts {2g, 2g+1}, except group 2, routed to
// expert 0 (group 0's) with 4 or 5. Expert 0 is the hottest, and its first replica goes to the
// device of group 2's tokens, which then find both their experts at home.
TEST(SemMoePlacement, AReplicaGoesWhereTheTokensUsingItAre) {
  TraceBuilder b({"shared expert", "test", 1, 8, 2, false});
  std::vector<std::int32_t> ids, tokens;
  for (int t = 0; t < 24; ++t) ids.push_back(b.token_id(fmt::format("g{}t{}", t % 4, t)));
  std::vector<ExpertId> routed;
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int t = 0; t < 24; ++t) {
      const int group = t % 4;
      tokens.push_back(ids[t]);
      const std::vector<ExpertId> experts =
          group == 2
              ? std::vector<ExpertId>{static_cast<ExpertId>(4 + t / 4 % 2), 0}
              : std::vector<ExpertId>{static_cast<ExpertId>(2 * group), static_cast<ExpertId>(2 * group + 1)};
      routed.insert(routed.end(), experts.begin(), experts.end());
    }
  b.add({{static_cast<int>(tokens.size()), 1, true, 0}, tokens, routed, {}}, "test");
  const RoutingProfile profile = RoutingProfile::build(std::move(b).build(), {});
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "semmoe");
  choice.params["redundant"] = -1;  // one per device: 3 slots each
  const PlacementResult result = place_experts(input_for(profile, 4), choice);
  const int group2_device = result.token_devices.device[0][ids[2]];
  EXPECT_TRUE(result.placement.hosts(0, 4, group2_device));
  EXPECT_TRUE(result.placement.hosts(0, 0, group2_device));
  EXPECT_GE(result.placement.replica_count(0, 0), 2);
  for (std::int32_t t = 0; t < 24; ++t) {
    EXPECT_EQ(result.token_devices.device[0][ids[t]], result.token_devices.device[0][ids[t % 4]]);
    EXPECT_EQ(result.token_devices.confidence[0][ids[t]], 1.0f) << "token " << t;
  }
  EXPECT_DOUBLE_EQ(result.solver.at("profiled_local_share"), 1.0);
}

TEST(SemMoePlacement, RejectsUnevenSplitsAndBadParameters) {
  const RoutingProfile profile = RoutingProfile::build(random_trace(1, 16, 2, 20, 0.8, 1), {});
  EXPECT_THROW(semmoe_placement(input_for(profile, 3), SemMoeParams{}), InputError);
  SemMoeParams replicating;
  replicating.redundant = 17;  // 33 slots on 3 devices, 11 each: 6, 5 and 5 co-clustered experts
  EXPECT_NO_THROW(semmoe_placement(input_for(profile, 3), replicating));
  replicating.redundant = 18;  // 34 slots do not split over 3
  EXPECT_THROW(semmoe_placement(input_for(profile, 3), replicating), InputError);
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, "semmoe");
  choice.params["theta"] = 1.5;
  EXPECT_THROW(place_experts(input_for(profile, 4), choice), InputError);
  choice = default_policy_choice(PolicyKind::kPlacement, "semmoe");
  choice.params["balance"] = 0.9;
  EXPECT_THROW(place_experts(input_for(profile, 4), choice), InputError);
  PlacementInput without_profile = input_for(profile, 4);
  without_profile.profile = nullptr;
  EXPECT_THROW(place_experts(without_profile, default_policy_choice(PolicyKind::kPlacement, "semmoe")),
               InputError);
}

}  // namespace
}  // namespace semsim
