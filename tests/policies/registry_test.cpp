// The policy registry: every kind has its entries, every entry builds, requirements fail at the
// scenario key that chose the policy, and unknown names are errors with a suggestion.
#include "policies/policy_registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "models/input_error.hpp"
#include "policies/contiguous_placement.hpp"
#include "profile_fixture.hpp"

namespace semsim {
namespace {

std::vector<std::string> names(PolicyKind kind) {
  std::vector<std::string> out;
  for (const PolicyEntry& entry : policies_of(kind)) out.push_back(entry.name);
  return out;
}

// The message of the InputError that `action` throws ("" when it throws none).
template <typename Action>
std::string input_error(Action action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Two devices, one MoE layer of four experts; tokens 0 and 1 on device 1, token 2 on device 0.
PlacementPlan plan_with_token_table() {
  PlacementPlan plan;
  plan.placement = contiguous_placement(1, 4, 2);
  plan.token_devices.device = {{1, 1, 0}};
  plan.token_devices.confidence = {{0.9F, 0.8F, 0.7F}};
  return plan;
}

TEST(PolicyRegistry, EveryKindHasItsEntriesAndItsDefault) {
  EXPECT_EQ(names(PolicyKind::kPlacement),
            (std::vector<std::string>{"contiguous", "round_robin", "random", "eplb", "semmoe", "coact", "ilp",
                                      "cost_scored"}));
  EXPECT_EQ(names(PolicyKind::kRequestScheduling),
            (std::vector<std::string>{"round_robin", "shortest_queue", "prefix_aware", "semmoe_dp",
                                      "semmoe_dp_balanced"}));
  EXPECT_EQ(names(PolicyKind::kTokenScheduling), (std::vector<std::string>{"positional", "semmoe_tp"}));
  EXPECT_EQ(names(PolicyKind::kDispatch),
            (std::vector<std::string>{"dedup", "per_expert", "allgather", "normal", "low_latency", "auto"}));
  EXPECT_EQ(names(PolicyKind::kReplicaChoice), (std::vector<std::string>{"round_robin", "uniform"}));
  EXPECT_EQ(names(PolicyKind::kRouter),
            (std::vector<std::string>{"round_robin", "least_load", "expert_affinity", "prefix_aware",
                                      "expert_affinity_hindsight"}));
  ASSERT_EQ(policy_kinds().size(), 6u);
  std::set<std::string> keys;
  for (const PolicyKindInfo& kind : policy_kinds()) {
    EXPECT_EQ(&policy_kind(kind.kind), &kind);
    keys.insert(kind.key);
    const PolicyEntry& fallback = policy_entry(kind.kind, kind.default_name);
    // A scenario that leaves the key out must be valid whatever else it chooses.
    EXPECT_EQ(fallback.requirements.needs_profile || fallback.requirements.needs_profile_tables ||
                  fallback.requirements.only_in.has_value(),
              false)
        << kind.key;
    for (const PolicyEntry& entry : policies_of(kind.kind)) {
      EXPECT_EQ(entry.kind(), kind.kind) << entry.name;
      EXPECT_FALSE(entry.help.empty()) << entry.name;
    }
  }
  EXPECT_EQ(keys, (std::set<std::string>{"placement", "request_scheduling", "token_scheduling", "dispatch",
                                         "replica_choice", "router"}));
}

TEST(PolicyRegistry, EveryPlacementBuilds) {
  const RoutingProfile profile = test::random_profile(2, 8, 2, 200, 3);
  for (const PolicyEntry& entry : policies_of(PolicyKind::kPlacement)) {
    SCOPED_TRACE(entry.name);
    PolicyChoice choice = default_policy_choice(PolicyKind::kPlacement, entry.name);
    if (entry.name == "ilp")
      choice.params["tokens"] = 8, choice.params["balance"] = 2, choice.params["time_limit"] = 1;
    // Priced by a run: built with a pricing of its own in cost_scored_placement_test.
    if (entry.requirements.needs_scoring) continue;
    const PlacementResult result = place_experts({2, 8, 2, 0, 1, &profile}, choice);
    EXPECT_EQ(result.placement.devices, 2);
    EXPECT_EQ(result.placement.moe_layers, 2);
  }
}

TEST(PolicyRegistry, EverySchedulerBuildsFromAPlanWithATokenTable) {
  const PlacementPlan plan = plan_with_token_table();
  const std::vector<RankLoad> loads(2);
  const std::vector<std::int32_t> prompt{0, 1};
  for (const PolicyEntry& entry : policies_of(PolicyKind::kRequestScheduling)) {
    auto scheduler =
        make_request_scheduler(default_policy_choice(PolicyKind::kRequestScheduling, entry.name), plan);
    const int rank = scheduler->choose(Request{}, prompt, loads);
    EXPECT_TRUE(rank == 0 || rank == 1) << entry.name;
  }
  const std::vector<std::int32_t> token_ids{0, 1, 2, 7};
  for (const PolicyEntry& entry : policies_of(PolicyKind::kTokenScheduling)) {
    auto scheduler =
        make_token_scheduler(default_policy_choice(PolicyKind::kTokenScheduling, entry.name), plan, 2);
    EXPECT_EQ(scheduler->history(0), 0) << entry.name;  // nothing precedes the first MoE layer
    std::vector<int> rank;
    scheduler->assign(0, token_ids, {}, rank);
    ASSERT_EQ(rank.size(), token_ids.size()) << entry.name;
    EXPECT_EQ(std::count(rank.begin(), rank.end(), 0), 2) << entry.name;  // equal slices
    EXPECT_EQ(std::count(rank.begin(), rank.end(), 1), 2) << entry.name;
  }
  // semmoe_tp follows the token table where the slices allow: tokens 0 and 1 on rank 1.
  auto reshuffle = make_token_scheduler({"semmoe_tp", {}}, plan, 2);
  std::vector<int> rank;
  reshuffle->assign(0, token_ids, {}, rank);
  EXPECT_EQ(rank, (std::vector<int>{1, 1, 0, 0}));
  EXPECT_TRUE(reshuffle->reshuffles());
}

TEST(PolicyRegistry, DispatchModesAndReplicaChoicesAreTheirValues) {
  EXPECT_EQ(dispatch_mode_of({"dedup", {}}), DispatchMode::kDedup);
  EXPECT_EQ(dispatch_mode_of({"per_expert", {}}), DispatchMode::kPerExpert);
  EXPECT_EQ(dispatch_mode_of({"allgather", {}}), DispatchMode::kAllGather);
  EXPECT_EQ(replica_choice_of({"round_robin", {}}), ReplicaChoice::kRoundRobin);
  EXPECT_EQ(replica_choice_of({"uniform", {}}), ReplicaChoice::kUniform);
}

TEST(PolicyRegistry, AnUnknownDispatchModeIsAnErrorNotDedup) {
  const std::string message = input_error([] { dispatch_mode_of({"dedupe", {}}); });
  EXPECT_NE(message.find("unknown dispatch mode 'dedupe' (did you mean 'dedup'?)"), std::string::npos)
      << message;
}

TEST(PolicyRegistry, UnknownNamesSuggestTheNearest) {
  std::string message = input_error([] { policy_entry(PolicyKind::kTokenScheduling, "semmoe_pt"); });
  EXPECT_NE(message.find("unknown token scheduling 'semmoe_pt' (did you mean 'semmoe_tp'?); known: "
                         "positional, semmoe_tp"),
            std::string::npos)
      << message;
  message = input_error(
      [] { read_policy_choice(YamlInput::parse("unifrom", "p.yaml"), PolicyKind::kReplicaChoice); });
  EXPECT_NE(message.find("p.yaml:1:1: unknown value 'unifrom' (did you mean 'uniform'?)"), std::string::npos)
      << message;
  message = input_error([] { make_request_scheduler({"shortest_queu", {}}, PlacementPlan{}); });
  EXPECT_NE(message.find("did you mean 'shortest_queue'?"), std::string::npos) << message;
}

// Each unmet requirement fails at the key that chose the policy, with its file:line:column.
TEST(PolicyRegistry, RequirementErrorsNameTheScenarioKey) {
  const YamlInput scenario = YamlInput::parse(
      "policies:\n  placement: eplb\n  request_scheduling: semmoe_dp\n  token_scheduling: semmoe_tp\n",
      "s.yaml");
  const YamlInput policies = scenario.required("policies");
  auto check = [&](PolicyKind kind, const PolicyContext& given) {
    const YamlInput key = policies.required(policy_kind(kind).key);
    return input_error([&] { check_requirements(policy_entry(kind, key.as_string()), given, key); });
  };
  const PolicyContext tp_with_profile{AttentionMode::kTensorParallel, true, false};
  EXPECT_EQ(
      check(PolicyKind::kTokenScheduling, tp_with_profile),
      "s.yaml:4:21: policies.token_scheduling: token scheduling 'semmoe_tp' needs a profile-driven "
      "placement's tables (token→device, inter-layer): a placement made from a routing profile (semmoe, "
      "...) or a placement file that has them");
  EXPECT_EQ(
      check(PolicyKind::kPlacement, {AttentionMode::kDataParallel, false, false}),
      "s.yaml:2:14: policies.placement: placement policy 'eplb' needs a routing profile (semsim profile)");
  EXPECT_EQ(check(PolicyKind::kTokenScheduling, {AttentionMode::kDataParallel, true, true}),
            "s.yaml:4:21: policies.token_scheduling: token scheduling 'semmoe_tp' needs attention: tp");
  EXPECT_EQ(check(PolicyKind::kRequestScheduling, {AttentionMode::kTensorParallel, true, true}),
            "s.yaml:3:23: policies.request_scheduling: request scheduling 'semmoe_dp' needs attention: dp");
  EXPECT_EQ(check(PolicyKind::kTokenScheduling, {AttentionMode::kTensorParallel, false, true}), "");
  EXPECT_EQ(check(PolicyKind::kPlacement, tp_with_profile), "");
}

// Sem-MoE's schedulers without token identities: a plan from an id-less profile (the inter-layer
// table alone) builds, votes nothing, and the fallback says what each goes by.
TEST(PolicyRegistry, WithoutTokenIdentitiesTheSemMoeSchedulersFallBackAndSaySo) {
  PlacementPlan idless;
  idless.placement = contiguous_placement(2, 4, 2);
  idless.inter_layer.reset(2, 2, 1);
  idless.inter_layer.next[1][idless.inter_layer.key_index(std::vector<int>{0})] = {1, 0.9f};
  const auto dp = make_request_scheduler({"semmoe_dp", {}}, idless);
  const std::vector<RankLoad> loads(2);
  const Request request{};
  const std::vector<std::int32_t> unknown{-1, -1, -1};
  // No votes: the mask alone, lowest unmasked rank first.
  EXPECT_EQ(dp->choose(request, unknown, loads), 0);
  EXPECT_EQ(dp->choose(request, unknown, loads), 1);
  EXPECT_EQ(dp->choose(request, unknown, loads), 0);
  auto balanced = make_request_scheduler({"semmoe_dp_balanced", {{"load_weight", 1}}}, idless);
  std::vector<RankLoad> uneven(2);
  uneven[0].outstanding_tokens = 100;
  EXPECT_EQ(balanced->choose(request, unknown, uneven), 1) << "the least loaded rank";
  EXPECT_NE(token_identity_fallback({"semmoe_dp", {}}, idless, true).find("round robin"), std::string::npos);
  EXPECT_NE(token_identity_fallback({"semmoe_dp_balanced", {}}, idless, true).find("least loaded"),
            std::string::npos);
  EXPECT_NE(token_identity_fallback({"semmoe_tp", {}}, idless, true).find("inter-layer table alone"),
            std::string::npos);
  // A plan with T, but requests without ids; and what needs no fallback.
  const PlacementPlan with_table = plan_with_token_table();
  EXPECT_NE(token_identity_fallback({"semmoe_dp", {}}, with_table, false).find("the requests carry no token"),
            std::string::npos);
  EXPECT_EQ(token_identity_fallback({"semmoe_dp", {}}, with_table, true), "");
  EXPECT_EQ(token_identity_fallback({"round_robin", {}}, idless, false), "");
}

TEST(PolicyRegistry, BuildersCheckTheTablesThePlanGives) {
  EXPECT_NE(input_error([] {
              make_token_scheduler({"semmoe_tp", {}}, PlacementPlan{}, 2);
            }).find("token scheduling 'semmoe_tp' needs a profile-driven placement's tables"),
            std::string::npos);
  EXPECT_NE(input_error([] {
              make_request_scheduler({"semmoe_dp_balanced", {{"load_weight", 1}}}, PlacementPlan{});
            }).find("request scheduling 'semmoe_dp_balanced' needs a profile-driven placement's tables"),
            std::string::npos);
  EXPECT_EQ(input_error([] { make_token_scheduler({"positional", {}}, PlacementPlan{}, 2); }), "");
}

TEST(PolicyRegistry, ListingShowsEveryKindPolicyRequirementAndParameter) {
  const std::string listing = policy_listing();
  for (const PolicyKindInfo& kind : policy_kinds()) {
    EXPECT_NE(("\n" + listing).find("\n" + kind.key + ": "), std::string::npos) << kind.key;
    for (const PolicyEntry& entry : policies_of(kind.kind))
      EXPECT_NE(listing.find("\n  " + entry.name + " "), std::string::npos) << entry.name;
  }
  EXPECT_NE(listing.find("needs a profile-driven placement, attention: tp"), std::string::npos);
  EXPECT_NE(listing.find("needs a routing profile"), std::string::npos);
  EXPECT_NE(listing.find("load_weight=1 "), std::string::npos);
}

}  // namespace
}  // namespace semsim
