// Redundant expert slots: EP sizes that do not divide the routed experts (DeepSeek-V3's 256 at EP144
// and EP72, 288 slots) for every placement policy that replicates, and a clear refusal from those
// that do not.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "policies/dispatch.hpp"
#include "policies/policy_registry.hpp"
#include "profile_fixture.hpp"

namespace semsim {
namespace {

constexpr int kDeepSeekExperts = 256;
constexpr int kDeepSeekGroups = 8;

PolicyChoice with_redundant(const std::string& policy, double redundant) {
  PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, policy);
  choice.params["redundant"] = redundant;
  return choice;
}

// One MoE layer of DeepSeek-V3's 256 experts, each with its own load 300 + (89 e mod 256): the
// hottest holds less than twice the coldest's, so EPLB's replicas go to the hottest experts.
const RoutingProfile& distinct_loads_profile() {
  static const RoutingProfile profile = [] {
    std::vector<int> loads(kDeepSeekExperts);
    for (int e = 0; e < kDeepSeekExperts; ++e) loads[e] = 300 + e * 89 % kDeepSeekExperts;
    return test::profile_with_loads(loads);
  }();
  return profile;
}

// DeepSeek-V3's shape on `devices` GPUs in nodes of 8, with the profile above.
PlacementInput deepseek_input(int devices) {
  return {1, kDeepSeekExperts, devices, 8, kDeepSeekGroups, &distinct_loads_profile()};
}

// Every device holds `per_device` slots of distinct experts in every layer, every expert has one
// at least, and the slots sum to the experts plus `redundant`.
void expect_slots(const Placement& p, int per_device, int redundant) {
  for (int layer = 0; layer < p.moe_layers; ++layer) {
    int replicas = 0;
    for (int device = 0; device < p.devices; ++device)
      EXPECT_EQ(static_cast<int>(p.slots[layer][device].size()), per_device) << "device " << device;
    for (int e = 0; e < p.experts; ++e) {
      EXPECT_GE(p.replica_count(layer, e), 1) << "expert " << e;
      replicas += p.replica_count(layer, e);
    }
    EXPECT_EQ(replicas, p.experts + redundant);
  }
  EXPECT_EQ(p.most_slots_per_layer(), p.experts + redundant);
}

// The experts of `layer` with two replicas, ascending.
std::vector<int> replicated_experts(const Placement& p, int layer = 0) {
  std::vector<int> twice;
  for (int e = 0; e < p.experts; ++e)
    if (p.replica_count(layer, e) > 1) twice.push_back(e);
  return twice;
}

std::vector<int> first_experts(int count) {
  std::vector<int> ids(count);
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

// SGLang's trivial layout: physical slot p holds logical expert p mod N, 2 slots per GPU at EP144.
TEST(RedundantSlots, ContiguousIsSglangsTrivialLayout) {
  const Placement p = place_experts(deepseek_input(144), with_redundant("contiguous", 32)).placement;
  expect_slots(p, 2, 32);
  for (int device = 0; device < 144; ++device)
    EXPECT_EQ(p.slots[0][device], (std::vector<int>{2 * device % 256, (2 * device + 1) % 256}));
  EXPECT_EQ(replicated_experts(p), first_experts(32));
}

TEST(RedundantSlots, RoundRobinDealsReplicasOnInTheRotation) {
  const Placement ep72 = place_experts(deepseek_input(72), with_redundant("round_robin", 32)).placement;
  expect_slots(ep72, 4, 32);
  EXPECT_EQ(ep72.slots[0][0], (std::vector<int>{0, 72, 144, 216}));
  EXPECT_EQ(replicated_experts(ep72), first_experts(32));
  // Where D divides N the second round starts one device later: expert e's copy on device e + 1.
  const Placement even = place_experts({1, 64, 8, 0, 1, nullptr}, with_redundant("round_robin", 8)).placement;
  expect_slots(even, 9, 8);
  for (int e = 0; e < 8; ++e) EXPECT_TRUE(even.hosts(0, e, (e + 1) % 8)) << e;
  // No redundancy: expert e on device e mod D, as before.
  const Placement plain =
      place_experts({1, 64, 8, 0, 1, nullptr}, with_redundant("round_robin", 0)).placement;
  for (int e = 0; e < 64; ++e) EXPECT_EQ(plain.home_devices(0)[e], e % 8);
  EXPECT_FALSE(plain.has_replicas());
}

TEST(RedundantSlots, RandomReplicatesTheExpertsItsPermutationPutsFirst) {
  PolicyChoice choice = with_redundant("random", 32);
  const Placement p = place_experts(deepseek_input(72), choice).placement;
  expect_slots(p, 4, 32);
  EXPECT_EQ(replicated_experts(p).size(), 32u);
  EXPECT_NE(replicated_experts(p), first_experts(32));
  EXPECT_EQ(p, place_experts(deepseek_input(72), choice).placement);
}

// DeepSeek-V3's 8 groups divide neither 18 nor 9 nodes: EPLB falls back to its global policy, and
// the one extra slot of each of the 32 hottest experts holds its replica.
TEST(RedundantSlots, EplbAtEp144AndEp72ReplicatesTheHottestExpertsGlobally) {
  std::vector<int> hottest;
  for (int e = 0; e < kDeepSeekExperts; ++e)
    if (300 + e * 89 % kDeepSeekExperts >= 300 + kDeepSeekExperts - 32) hottest.push_back(e);
  for (const int devices : {144, 72}) {
    SCOPED_TRACE(devices);
    const PlacementResult r = place_experts(deepseek_input(devices), with_redundant("eplb", 32));
    expect_slots(r.placement, 288 / devices, 32);
    EXPECT_EQ(r.solver.at("hierarchical"), 0);
    EXPECT_EQ(r.solver.at("physical_slots"), 288);
    EXPECT_EQ(r.solver.at("duplicates_dropped"), 0);
    EXPECT_EQ(replicated_experts(r.placement), hottest);
  }
  // Prefill's EP32 on 4 nodes: the groups divide the nodes, so EPLB stays hierarchical (9 per GPU).
  const PlacementResult prefill = place_experts(deepseek_input(32), with_redundant("eplb", 32));
  expect_slots(prefill.placement, 9, 32);
  EXPECT_EQ(prefill.solver.at("hierarchical"), 1);
}

// Sem-MoE co-clusters the 256 experts into 144 or 72 devices (1 or 2, 3 or 4 each) and gives the
// devices with a spare slot one replica each of the 32 hottest experts.
TEST(RedundantSlots, SemMoeAtEp144AndEp72ReplicatesTheHottestExperts) {
  std::vector<int> hottest;
  for (int e = 0; e < kDeepSeekExperts; ++e)
    if (300 + e * 89 % kDeepSeekExperts >= 300 + kDeepSeekExperts - 32) hottest.push_back(e);
  for (const int devices : {144, 72}) {
    SCOPED_TRACE(devices);
    const PlacementResult r = place_experts(deepseek_input(devices), with_redundant("semmoe", 32));
    expect_slots(r.placement, 288 / devices, 32);
    EXPECT_EQ(replicated_experts(r.placement), hottest);
  }
}

// Placements that partition N/D experts per device (METIS, CBC) place no replicas: refused by name.
TEST(RedundantSlots, EqualGroupPoliciesNeedAnEpSizeThatDividesTheExperts) {
  for (const std::string policy : {"coact", "ilp"}) {
    try {
      place_experts(deepseek_input(144), with_redundant(policy, 32));
      ADD_FAILURE() << policy;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "EP size 144 does not divide the 256 routed experts, and placement policy '" + policy +
                    "' puts an equal number of them on every device (its redundant slots only add replicas): "
                    "give 32 redundant experts (288 slots per layer, 2 per device) with one that splits them "
                    "unevenly (contiguous, round_robin, random, eplb, semmoe)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(check_physical_slots(with_redundant(policy, 32), 256, 144, "").another_policy);
    EXPECT_EQ(check_physical_slots(with_redundant(policy, 32), 256, 32, "").problem, "");
  }
}

TEST(RedundantSlots, CountsThatDoNotFitAreRefusedWithOneThatDoes) {
  auto problem = [](const PolicyChoice& choice, int experts, int devices) {
    return check_physical_slots(choice, experts, devices, "m").problem;
  };
  EXPECT_EQ(problem(with_redundant("contiguous", 32), 256, 144), "");
  EXPECT_EQ(problem(with_redundant("contiguous", 0), 256, 32), "");
  EXPECT_EQ(problem(with_redundant("contiguous", 10), 256, 144),
            "the 256 routed experts of 'm' + 10 redundant = 266 physical slots per layer do not split evenly "
            "over EP size 144: give 32 redundant experts (288 slots per layer, 2 per device)");
  EXPECT_EQ(check_physical_slots(with_redundant("contiguous", 0), 256, 72, "").redundant_that_fits, 32);
  // EPLB's default, one redundant expert per device, at EP144: 400 slots; the fewest that fit are told.
  EXPECT_EQ(problem(default_policy_choice(PolicyKind::kPlacement, "eplb"), 256, 144),
            "the 256 routed experts of 'm' + 144 redundant (-1: one per device) = 400 physical "
            "slots per layer do not split evenly over EP size 144: give 32 redundant experts (288 slots per "
            "layer, 2 per device)");
  // More slots than a device can hold distinct experts, split evenly or not: no count above fits.
  for (const int redundant : {6, 5}) {
    const PhysicalSlotsCheck full = check_physical_slots(with_redundant("round_robin", redundant), 4, 2, "m");
    EXPECT_EQ(full.problem, fmt::format("the 4 routed experts of 'm' + {} redundant = {} physical slots per "
                                        "layer put more than 4 on some of the 2 devices (a device holds an "
                                        "expert at most once): give at most 4 redundant experts",
                                        redundant, 4 + redundant));
    EXPECT_EQ(full.redundant_that_fits, -1);
  }
  EXPECT_THROW(place_experts({1, 4, 2, 0, 1, nullptr}, with_redundant("round_robin", 6)), InputError);
  EXPECT_THROW(place_experts({1, 4, 2, 0, 1, nullptr}, with_redundant("contiguous", 1.5)), InputError);
}

// Devices holding replicas: a token on a device with a replica is served there, others rotate over
// the replicas; each device's load is its own slots' tokens, however many slots it holds.
TEST(RedundantSlots, DispatchServesEachReplicaOnTheDeviceHoldingIt) {
  // 4 experts, 3 devices, 2 redundant: {0, 1} {2, 3} {0, 1}.
  const Placement p = place_experts({1, 4, 3, 0, 1, nullptr}, with_redundant("contiguous", 2)).placement;
  ASSERT_EQ(p.slots[0], (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {0, 1}}));
  LayerDispatch out(3, 4);
  const std::vector<int> token_device = {0, 2, 1, 1};
  const std::vector<ExpertId> routed = {0, 2, 0, 3, 0, 1, 0, 1};
  account_dispatch(p, 0, DispatchMode::kDedup, token_device, routed, 2, out);
  // Token 0 (device 0): expert 0 local, 2 on device 1. Token 1 (device 2): 0 local, 3 on device 1.
  // Tokens 2 and 3 (device 1): experts 0 and 1 from device 0, then from device 2 (the rotation).
  EXPECT_EQ(out.local_activations, 2);
  EXPECT_EQ(out.device_tokens, (std::vector<long long>{3, 2, 3}));
  EXPECT_EQ(out.copies[1 * 3 + 0], 1);
  EXPECT_EQ(out.copies[1 * 3 + 2], 1);
  EXPECT_EQ(out.copies[0 * 3 + 1], 1);
  EXPECT_EQ(out.copies[2 * 3 + 1], 1);

  // Devices holding different numbers of slots (a placement file may): 3 experts on device 0, and
  // expert 3 with a replica of 0 on device 1.
  Placement uneven;
  uneven.moe_layers = 1;
  uneven.experts = 4;
  uneven.devices = 2;
  uneven.slots = {{{0, 1, 2}, {3, 0}}};
  uneven.seal();
  LayerDispatch two(2, 4);
  const std::vector<int> from = {1, 0};
  const std::vector<ExpertId> to = {0, 1, 3, 2};
  account_dispatch(uneven, 0, DispatchMode::kPerExpert, from, to, 2, two);
  EXPECT_EQ(two.local_activations, 2);  // expert 0 on device 1, expert 2 on device 0
  EXPECT_EQ(two.device_tokens, (std::vector<long long>{2, 2}));
  EXPECT_EQ(two.copies, (std::vector<long long>{0, 1, 1, 0}));
  EXPECT_EQ(two.expert_tokens[1 * 4 + 0], 1);  // device 1's replica of expert 0 served its own token
}

}  // namespace
}  // namespace semsim
