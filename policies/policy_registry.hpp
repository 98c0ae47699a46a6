#pragma once
// Every pluggable policy of every kind in one table (policy_registry.cpp): its name, help,
// parameters, what it needs from a scenario and how it is built. The scenario loader, `semsim list
// policies` and `semsim place` read only this table; a new policy is its implementation file and one
// entry there.
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "models/parallel_layout.hpp"
#include "models/yaml_input.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement.hpp"
#include "policies/placement_plan.hpp"
#include "policies/placement_policies.hpp"
#include "policies/policy_params.hpp"
#include "policies/request_scheduling.hpp"
#include "policies/routing_to_instances.hpp"
#include "policies/token_scheduling.hpp"

namespace semsim {

// In the order of PolicyFactory's alternatives and of `semsim list policies`.
enum class PolicyKind {
  kPlacement,
  kRequestScheduling,
  kTokenScheduling,
  kDispatch,
  kReplicaChoice,
  kRouter
};

struct PolicyKindInfo {
  PolicyKind kind;
  std::string key;    // under `policies:` in a scenario (the router: under `deployment:`)
  std::string label;  // in messages: "token scheduling 'semmoe_tp' needs ..."
  std::string help;
  std::string default_name;  // what a scenario that leaves the key out gets
};

const std::vector<PolicyKindInfo>& policy_kinds();  // every kind, in PolicyKind's order
const PolicyKindInfo& policy_kind(PolicyKind kind);

struct PolicyRequirements {
  bool needs_profile = false;         // a routing profile to place from
  bool needs_profile_tables = false;  // a profile-driven plan's tables (PlacementPlan::profiled)
  std::optional<AttentionMode> only_in = std::nullopt;  // the one attention mode it works in; none: both
  bool equal_groups = false;   // a placement of N/D routed experts per device: the EP size divides N
  bool needs_scoring = false;  // a run's pricing of plans (PlacementScoring): a scenario, not `semsim place`
  bool needs_prefix_cache = false;  // serving.prefix_cache on (a scenario's; not checked outside one)
};

using PlacementFactory = PlacementResult (*)(const PlacementInput& input, const PolicyChoice& choice);
using RequestSchedulerFactory = std::unique_ptr<RequestScheduler> (*)(const PolicyChoice& choice,
                                                                      const PlacementPlan& plan);
using TokenSchedulerFactory = std::unique_ptr<TokenScheduler> (*)(const PolicyChoice& choice,
                                                                  const PlacementPlan& plan, int ranks);
// Dispatch modes, replica choices and routers are values the engine reads as they are.
using PolicyFactory = std::variant<PlacementFactory, RequestSchedulerFactory, TokenSchedulerFactory,
                                   DispatchMode, ReplicaChoice, RouterPolicy>;

struct PolicyEntry {
  std::string name;
  std::string help;
  std::vector<ParamSpec> params;
  PolicyRequirements requirements;
  PolicyFactory factory;

  // The kind is the factory's, so that an entry cannot be registered under a kind it cannot build.
  PolicyKind kind() const { return static_cast<PolicyKind>(factory.index()); }
};

const std::vector<PolicyEntry>& policies_of(PolicyKind kind);  // in registration order
// InputError naming the kind, the nearest known name and every known one when `name` is unknown.
const PolicyEntry& policy_entry(PolicyKind kind, const std::string& name);

// `name` with every parameter at its default; InputError when the kind has no such policy.
PolicyChoice default_policy_choice(PolicyKind kind, const std::string& name);
// Reads `name` or `{name: N, <param>: value, ...}` and checks both against the kind's entries.
PolicyChoice read_policy_choice(const YamlInput& in, PolicyKind kind);

// What a policy is given, for its requirements.
struct PolicyContext {
  std::optional<AttentionMode> attention;  // none outside a scenario (semsim place): not checked
  bool has_profile = false;
  bool has_profile_tables = false;
  bool has_prefix_cache = false;
};

// The first requirement of `entry` that `given` does not meet, as a sentence naming the policy; ""
// when it meets them all.
std::string unmet_requirement(const PolicyEntry& entry, const PolicyContext& given);
// Fails at `key` (its file:line:column and key path) with unmet_requirement unless it is "".
void check_requirements(const PolicyEntry& entry, const PolicyContext& given, const YamlInput& key);

// The factories, by choice; InputError when the plan lacks a table the policy reads.
std::unique_ptr<RequestScheduler> make_request_scheduler(const PolicyChoice& choice,
                                                         const PlacementPlan& plan);
std::unique_ptr<TokenScheduler> make_token_scheduler(const PolicyChoice& choice, const PlacementPlan& plan,
                                                     int ranks);
// What a Sem-MoE online scheduler (semmoe_dp, semmoe_dp_balanced, semmoe_tp) goes by where token
// identities are missing — the plan has no token→device table (its profile had none) or the requests
// carry no ids (an id-less trace) — as one sentence for the outputs; "" when it has what it reads.
std::string token_identity_fallback(const PolicyChoice& scheduler, const PlacementPlan& plan,
                                    bool requests_have_token_ids);
DispatchMode dispatch_mode_of(const PolicyChoice& choice);
ReplicaChoice replica_choice_of(const PolicyChoice& choice);
RouterPolicy router_of(const PolicyChoice& choice);

// `semsim list policies`: every kind with its default, and each policy with its help,
// requirements and parameters.
std::string policy_listing();

}  // namespace semsim
