#include "policies/policy_registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "models/input_error.hpp"
#include "policies/coact_placement.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/cost_scored_placement.hpp"
#include "policies/eplb_placement.hpp"
#include "policies/expert_affinity_router.hpp"
#include "policies/ilp_placement.hpp"
#include "policies/least_load_router.hpp"
#include "policies/prefix_aware_scheduler.hpp"
#include "policies/random_placement.hpp"
#include "policies/round_robin_placement.hpp"
#include "policies/round_robin_router.hpp"
#include "policies/round_robin_scheduler.hpp"
#include "policies/semmoe_dp_scheduler.hpp"
#include "policies/semmoe_placement.hpp"
#include "policies/shortest_queue_scheduler.hpp"

namespace semsim {
namespace {

constexpr std::size_t kKinds = std::variant_size_v<PolicyFactory>;

PlacementResult place_contiguous(const PlacementInput& input, const PolicyChoice& choice) {
  const int physical = physical_slots(choice, input.experts, input.devices);
  return {
      contiguous_placement(input.moe_layers, input.experts, input.devices, physical - input.experts), {}, {}};
}

PlacementResult place_semmoe(const PlacementInput& input, const PolicyChoice& choice) {
  return semmoe_placement(input, semmoe_params(choice, input.experts, input.devices));
}

// A request scheduler that reads neither parameters nor tables.
template <typename Scheduler>
std::unique_ptr<RequestScheduler> make_plain_scheduler(const PolicyChoice&, const PlacementPlan&) {
  return std::make_unique<Scheduler>();
}

std::unique_ptr<RequestScheduler> make_semmoe_dp(const PolicyChoice&, const PlacementPlan& plan) {
  const int devices = plan.placement.devices;
  return std::make_unique<SemMoeDpScheduler>(dp_vote_devices(plan.token_devices, devices), devices);
}

std::unique_ptr<RequestScheduler> make_semmoe_dp_balanced(const PolicyChoice& choice,
                                                          const PlacementPlan& plan) {
  const int devices = plan.placement.devices;
  return std::make_unique<SemMoeDpBalancedScheduler>(dp_vote_devices(plan.token_devices, devices), devices,
                                                     choice.param("load_weight"));
}

std::unique_ptr<RequestScheduler> make_prefix_aware(const PolicyChoice& choice, const PlacementPlan&) {
  return std::make_unique<PrefixAwareScheduler>(choice.param_at_least("load_cap", 1));
}

std::unique_ptr<TokenScheduler> make_positional(const PolicyChoice&, const PlacementPlan&, int ranks) {
  return std::make_unique<PositionalTokenScheduler>(ranks);
}

std::unique_ptr<TokenScheduler> make_semmoe_tp(const PolicyChoice&, const PlacementPlan& plan, int ranks) {
  return std::make_unique<SemMoeTpTokenScheduler>(plan, ranks);
}

constexpr PolicyRequirements kProfile{.needs_profile = true};
constexpr PolicyRequirements kProfileEqualGroups{.needs_profile = true, .equal_groups = true};
constexpr PolicyRequirements kProfileScoring{.needs_profile = true, .needs_scoring = true};
constexpr PolicyRequirements kDataParallel{.only_in = AttentionMode::kDataParallel};
constexpr PolicyRequirements kPrefixCacheDataParallel{.only_in = AttentionMode::kDataParallel,
                                                      .needs_prefix_cache = true};
constexpr PolicyRequirements kProfileTablesDataParallel{.needs_profile_tables = true,
                                                        .only_in = AttentionMode::kDataParallel};
constexpr PolicyRequirements kProfileTablesTensorParallel{.needs_profile_tables = true,
                                                          .only_in = AttentionMode::kTensorParallel};

// DeepEP's num_max_dispatch_tokens_per_rank (SGLang's default), sizing the low-latency buffers.
const ParamSpec kLowLatencyBuffer{"max_dispatch_tokens_per_rank", 128,
                                  "tokens per rank the low-latency buffers hold (their memory; no step "
                                  "that runs low_latency may send more)"};

// Placement (policies/placement_policies.hpp, one file per policy).
std::vector<PolicyEntry> placement_policies() {
  return {
      {"contiguous",
       "expert e on device floor(e*D/N) (vanilla EP); with redundant slots, slot p holds expert p mod N "
       "on device floor(p*D/P) (SGLang's trivial layout)",
       {redundant_experts(0)},
       {},
       place_contiguous},
      {"round_robin",
       "expert e on device e mod D; redundant slots continue the rotation with experts 0, 1, ...",
       {redundant_experts(0)},
       {},
       round_robin_placement},
      {"random",
       "a seeded random permutation per layer placed as contiguous, (N + redundant)/D slots per device",
       {{"seed", 1, "permutation seed"}, redundant_experts(0)},
       {},
       random_placement},
      {"eplb",
       "DeepSeek's EPLB on the profile's expert loads, with redundant replicas",
       {redundant_experts(-1), {"groups", 0, "expert groups for the hierarchical policy (0: the model's)"}},
       kProfile,
       eplb_placement},
      {"semmoe",
       "Sem-MoE's token-expert co-clustering, (N + redundant)/D slots per device; redundant slots replicate "
       "the experts of most load per replica on the devices whose tokens use them most",
       semmoe_param_specs(), kProfile, place_semmoe},
      {"coact",
       "METIS k-way cut of each layer's expert co-activation graph, N/D experts per device; redundant slots "
       "replicate the experts of most load per replica where their co-activated experts are",
       {{"seed", 1, "METIS random seed"}, redundant_experts(0)},
       kProfileEqualGroups,
       coact_placement},
      {"ilp",
       "exact token-expert co-clustering of the most frequent tokens with CBC, N/D experts per device (small "
       "instances; a profile without token identities: coact's cut); redundant slots as coact's",
       {{"tokens", 64, "most frequent profiled tokens modelled per layer"},
        {"balance", 1.10, "token load per device at most balance x mean"},
        {"time_limit", 10, "wall-clock seconds of CBC per layer (root LP included); the gap is reported"},
        redundant_experts(0)},
       kProfileEqualGroups,
       ilp_placement},
      {"cost_scored",
       "the cheapest of contiguous, EPLB and Sem-MoE by the simulated MoE-layer time of a sample of the "
       "profiled requests (the run's cost model, links, scheduler and load), improved by expert swaps and "
       "replica moves that lower it",
       cost_scored_param_specs(), kProfileScoring, cost_scored_placement},
  };
}

// Request scheduling (policies/request_scheduling.hpp).
std::vector<PolicyEntry> request_schedulers() {
  return {
      {"round_robin",
       "request i to rank i mod D (SGLang default)",
       {},
       {},
       &make_plain_scheduler<RoundRobinScheduler>},
      {"shortest_queue",
       "rank with the fewest outstanding tokens",
       {},
       kDataParallel,
       &make_plain_scheduler<ShortestQueueScheduler>},
      {"prefix_aware",
       "rank whose prefix cache holds most of the prompt, among ranks with outstanding tokens at most "
       "load_cap x the mean (ties: fewest outstanding)",
       {{"load_cap", 1.5, "a rank qualifies with outstanding tokens at most this x the ranks' mean (>= 1)"}},
       kPrefixCacheDataParallel,
       make_prefix_aware},
      {"semmoe_dp",
       "Sem-MoE: most prompt-token votes among ranks not yet masked; mask resets every D requests",
       {},
       kProfileTablesDataParallel,
       make_semmoe_dp},
      {"semmoe_dp_balanced",
       "ours: prompt-token vote share minus load_weight x relative excess load (no mask)",
       {{"load_weight", 1.0, "weight of a rank's outstanding tokens above the mean, relative to the mean"}},
       kProfileTablesDataParallel,
       make_semmoe_dp_balanced},
  };
}

// Token scheduling (policies/token_scheduling.hpp).
std::vector<PolicyEntry> token_schedulers() {
  return {
      {"positional", "equal contiguous slices by position (vanilla Attention-TP)", {}, {}, make_positional},
      {"semmoe_tp",
       "Sem-MoE: per token T if T_p > A_p else A, aligned to equal slices (shuffled reduce-scatter)",
       {},
       kProfileTablesTensorParallel,
       make_semmoe_tp},
  };
}

// Dispatch (policies/dispatch.hpp).
std::vector<PolicyEntry> dispatch_modes() {
  return {
      {"dedup",
       "one copy per token and remote device (high-throughput EP kernels)",
       {},
       {},
       DispatchMode::kDedup},
      {"per_expert",
       "one copy per token and remote expert (low-latency decode kernels)",
       {},
       {},
       DispatchMode::kPerExpert},
      {"allgather", "every token to every device, independent of routing", {}, {}, DispatchMode::kAllGather},
      {"normal",
       "DeepEP normal: one copy per token and GPU in its node; across nodes one RDMA copy per node, "
       "forwarded over NVLink",
       {},
       {},
       DispatchMode::kHierarchical},
      {"low_latency",
       "DeepEP low-latency: one copy per token and remote expert, sent directly",
       {kLowLatencyBuffer},
       {},
       DispatchMode::kLowLatency},
      {"auto",
       "DeepEP as SGLang's auto mode: normal for steps with prefill, low_latency for decode-only steps",
       {kLowLatencyBuffer},
       {},
       DispatchMode::kDeepepAuto},
  };
}

// Replica choice (policies/placement.hpp).
std::vector<PolicyEntry> replica_choices() {
  return {
      {"round_robin",
       "rotate over the replicas (one turn counter per layer and expert)",
       {},
       {},
       ReplicaChoice::kRoundRobin},
      {"uniform",
       "a replica by a hash of the dispatch, the token and the expert",
       {},
       {},
       ReplicaChoice::kUniform},
  };
}

// Routers over a deployment's instances (policies/routing_to_instances.hpp).
std::vector<PolicyEntry> routers() {
  const ParamSpec load_slack{
      "load_slack", 0.25,
      "an instance qualifies while its requests in flight < (1 + load_slack) x the mean + 1"};
  return {
      {"round_robin",
       "every instance in turn",
       {},
       {},
       RouterPolicy{round_robin_router, AffinityInput::kNone}},
      {"least_load",
       "the instance with the fewest requests in flight",
       {},
       {},
       RouterPolicy{least_load_router, AffinityInput::kNone}},
      {"expert_affinity",
       "the instance whose expert placement keeps most of the request's activations local, estimated from "
       "its "
       "prompt's token ids, under a load cap",
       {load_slack},
       {false, true, AttentionMode::kDataParallel},
       RouterPolicy{expert_affinity_router, AffinityInput::kPromptEstimate}},
      {"prefix_aware",
       "the instance whose earlier requests (as the router sent them) share most of the request's prompt, "
       "under the same load cap: a cache-aware router",
       {load_slack},
       {.needs_prefix_cache = true},
       RouterPolicy{expert_affinity_router, AffinityInput::kSentPrefixes}},
      {"expert_affinity_hindsight",
       "expert_affinity knowing the request's actual routing: a bound, not an online router",
       {load_slack},
       {false, false, AttentionMode::kDataParallel},
       RouterPolicy{expert_affinity_router, AffinityInput::kHindsight}},
  };
}

// Every policy, grouped by kind in PolicyKind's order.
std::vector<PolicyEntry> registry() {
  std::vector<PolicyEntry> entries;
  for (const std::vector<PolicyEntry>& kind : {placement_policies(), request_schedulers(), token_schedulers(),
                                               dispatch_modes(), replica_choices(), routers()})
    entries.insert(entries.end(), kind.begin(), kind.end());
  return entries;
}

std::vector<std::string> names_of(PolicyKind kind) {
  std::vector<std::string> names;
  for (const PolicyEntry& entry : policies_of(kind)) names.push_back(entry.name);
  return names;
}

PolicyChoice defaults_of(const PolicyEntry& entry) {
  PolicyChoice choice{entry.name, {}};
  for (const ParamSpec& param : entry.params) choice.params[param.name] = param.default_value;
  return choice;
}

std::string policy_named(const PolicyEntry& entry) {
  return fmt::format("{} '{}'", policy_kind(entry.kind()).label, entry.name);
}

// The entry of `choice`, checked to meet the tables `plan` gives it.
const PolicyEntry& entry_for_plan(PolicyKind kind, const PolicyChoice& choice, const PlacementPlan& plan) {
  const PolicyEntry& entry = policy_entry(kind, choice.name);
  const std::string unmet = unmet_requirement(entry, {std::nullopt, false, plan.profiled()});
  if (!unmet.empty()) throw InputError(unmet);
  return entry;
}

}  // namespace

const std::vector<PolicyKindInfo>& policy_kinds() {
  static const std::vector<PolicyKindInfo> kinds = {
      {PolicyKind::kPlacement, "placement", "placement policy",
       "expert slots per device, by a policy run at load time or from `{file: PATH}`", "contiguous"},
      {PolicyKind::kRequestScheduling, "request_scheduling", "request scheduling",
       "Attention-DP: the rank that serves each arriving request", "round_robin"},
      {PolicyKind::kTokenScheduling, "token_scheduling", "token scheduling",
       "Attention-TP: the rank whose slice of each MoE layer a token joins", "positional"},
      {PolicyKind::kDispatch, "dispatch", "dispatch mode", "which token copies the MoE all-to-all moves",
       "dedup"},
      {PolicyKind::kReplicaChoice, "replica_choice", "replica choice",
       "the replica of an expert a token uses when neither its device nor its node hosts one", "round_robin"},
      {PolicyKind::kRouter, "router", "router",
       "deployment: which serving instance each arriving request goes to", "round_robin"},
  };
  return kinds;
}

const PolicyKindInfo& policy_kind(PolicyKind kind) {
  return policy_kinds().at(static_cast<std::size_t>(kind));
}

const std::vector<PolicyEntry>& policies_of(PolicyKind kind) {
  static const std::array<std::vector<PolicyEntry>, kKinds> by_kind = [] {
    std::array<std::vector<PolicyEntry>, kKinds> out;
    for (const PolicyEntry& entry : registry()) out[static_cast<std::size_t>(entry.kind())].push_back(entry);
    return out;
  }();
  return by_kind.at(static_cast<std::size_t>(kind));
}

const PolicyEntry& policy_entry(PolicyKind kind, const std::string& name) {
  for (const PolicyEntry& entry : policies_of(kind))
    if (entry.name == name) return entry;
  const std::vector<std::string> names = names_of(kind);
  throw InputError(fmt::format("unknown {} '{}'{}; known: {}", policy_kind(kind).label, name,
                               did_you_mean(name, names), fmt::join(names, ", ")));
}

PolicyChoice default_policy_choice(PolicyKind kind, const std::string& name) {
  return defaults_of(policy_entry(kind, name));
}

PolicyChoice read_policy_choice(const YamlInput& in, PolicyKind kind) {
  const YamlInput name_node = in.is_map() ? in.required("name") : in;
  const PolicyEntry& entry = policy_entry(kind, name_node.as_choice(names_of(kind)));
  PolicyChoice choice = defaults_of(entry);
  choice.key_path = in.key_path();
  choice.location = in.location();
  if (in.is_map()) {
    std::vector<std::string> allowed{"name"};
    for (const ParamSpec& param : entry.params) allowed.push_back(param.name);
    // A parameter of other policies of the kind (placement's `redundant`): say which take it.
    for (const std::string& key : in.keys()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::vector<std::string> taking;
      for (const PolicyEntry& other : policies_of(kind))
        for (const ParamSpec& param : other.params)
          if (param.name == key) taking.push_back(other.name);
      if (!taking.empty())
        in.required(key).fail(fmt::format("{} has no parameter '{}'; the policies that have it: {}",
                                          policy_named(entry), key, fmt::join(taking, ", ")));
    }
    in.expect_map(allowed);
    for (const ParamSpec& param : entry.params)
      if (const auto value = in.optional(param.name)) {
        choice.params[param.name] = value->as_double();
        choice.param_locations[param.name] = value->location();
      }
  } else if (!in.is_scalar()) {
    in.fail("expected a policy name or a map with 'name' and parameters");
  }
  return choice;
}

std::string unmet_requirement(const PolicyEntry& entry, const PolicyContext& given) {
  const PolicyRequirements& needs = entry.requirements;
  if (needs.only_in && given.attention && *needs.only_in != *given.attention)
    return fmt::format("{} needs attention: {}", policy_named(entry), attention_name(*needs.only_in));
  if (needs.needs_prefix_cache && given.attention && !given.has_prefix_cache)
    return policy_named(entry) + " needs serving.prefix_cache: true (a cache to be aware of)";
  if (needs.needs_profile && !given.has_profile)
    return policy_named(entry) + " needs a routing profile (semsim profile)";
  if (needs.needs_profile_tables && !given.has_profile_tables)
    return policy_named(entry) +
           " needs a profile-driven placement's tables (token→device, inter-layer): a placement made from a "
           "routing profile (semmoe, ...) or a placement file that has them";
  return "";
}

void check_requirements(const PolicyEntry& entry, const PolicyContext& given, const YamlInput& key) {
  const std::string unmet = unmet_requirement(entry, given);
  if (!unmet.empty()) key.fail(unmet);
}

std::unique_ptr<RequestScheduler> make_request_scheduler(const PolicyChoice& choice,
                                                         const PlacementPlan& plan) {
  return std::get<RequestSchedulerFactory>(
      entry_for_plan(PolicyKind::kRequestScheduling, choice, plan).factory)(choice, plan);
}

std::unique_ptr<TokenScheduler> make_token_scheduler(const PolicyChoice& choice, const PlacementPlan& plan,
                                                     int ranks) {
  return std::get<TokenSchedulerFactory>(entry_for_plan(PolicyKind::kTokenScheduling, choice, plan).factory)(
      choice, plan, ranks);
}

DispatchMode dispatch_mode_of(const PolicyChoice& choice) {
  return std::get<DispatchMode>(policy_entry(PolicyKind::kDispatch, choice.name).factory);
}

ReplicaChoice replica_choice_of(const PolicyChoice& choice) {
  return std::get<ReplicaChoice>(policy_entry(PolicyKind::kReplicaChoice, choice.name).factory);
}

RouterPolicy router_of(const PolicyChoice& choice) {
  return std::get<RouterPolicy>(policy_entry(PolicyKind::kRouter, choice.name).factory);
}

std::string token_identity_fallback(const PolicyChoice& scheduler, const PlacementPlan& plan,
                                    bool requests_have_token_ids) {
  const std::string& name = scheduler.name;
  if (name != "semmoe_dp" && name != "semmoe_dp_balanced" && name != "semmoe_tp") return "";
  if (!plan.token_devices.empty() && requests_have_token_ids) return "";
  const std::string why =
      plan.token_devices.empty()
          ? "the placement has no token→device table (its profile had no token identities)"
          : "the requests carry no token identities";
  if (name == "semmoe_tp")
    return fmt::format(
        "{}: semmoe_tp follows the inter-layer table alone (positional slices at the first MoE "
        "layer)",
        why);
  return fmt::format(
      "{}: prompts cannot vote, so {} sends each request to {}", why, name,
      name == "semmoe_dp" ? "the lowest rank its mask leaves (round robin)" : "the least loaded rank");
}

std::string policy_listing() {
  std::string out;
  for (const PolicyKindInfo& kind : policy_kinds()) {
    out += fmt::format("{}: {}; default {}\n", kind.key, kind.help, kind.default_name);
    for (const PolicyEntry& entry : policies_of(kind.kind)) {
      out += fmt::format("  {:<18} {}\n", entry.name, entry.help);
      std::vector<std::string> needs;
      if (entry.requirements.needs_profile) needs.emplace_back("a routing profile");
      if (entry.requirements.needs_profile_tables) needs.emplace_back("a profile-driven placement");
      if (entry.requirements.needs_scoring)
        needs.emplace_back("a scenario (its cost model prices the plans)");
      if (entry.requirements.needs_prefix_cache) needs.emplace_back("serving.prefix_cache");
      if (entry.requirements.only_in)
        needs.push_back(fmt::format("attention: {}", attention_name(*entry.requirements.only_in)));
      if (!needs.empty()) out += fmt::format("      needs {}\n", fmt::join(needs, ", "));
      for (const ParamSpec& param : entry.params)
        out += fmt::format("      {}={} {}\n", param.name, param.default_value, param.help);
    }
  }
  return out;
}

}  // namespace semsim
