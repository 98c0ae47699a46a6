#include "sim/scenario_checks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "policies/placement_file.hpp"
#include "policies/placement_policies.hpp"

namespace semsim {
namespace {

// The placement file's plan, checked against the scenario at the `file` key.
PlacementPlan read_scenario_placement_file(const YamlInput& file_key, const Scenario& s,
                                           int devices_per_node) {
  PlacementPlan plan = read_placement_file(s.placement_file);  // its own FILE:LINE errors
  const Placement& p = plan.placement;
  auto check = [&](int in_file, int wanted, const std::string& what) {
    if (in_file != wanted)
      file_key.fail(fmt::format("placement file '{}' has {} {}, the scenario needs {}", s.placement_file,
                                in_file, what, wanted));
  };
  check(p.moe_layers, s.model.moe_layers(), "MoE layers");
  check(p.experts, s.model.routed_experts, "experts per layer");
  check(p.devices, s.expert_ranks(), "devices (the EP size)");
  check(p.devices_per_node, devices_per_node, "devices per node");
  return plan;
}

PolicyContext policy_context(const Scenario& s, const PlacementPlan* plan) {
  return {s.attention, !s.profile.empty(), plan != nullptr && plan->profiled(), s.serving.prefix_cache};
}

}  // namespace

// Where errors about the devices the experts spread over are reported: `ep` in the shorthand, else
// `moe` (its `ep`) or, without it, `attention`, whose size the experts then take.
YamlInput expert_ranks_key(const YamlInput& root) {
  const YamlInput parallelism = root.required("parallelism");
  if (parallelism.has("ep")) return parallelism.required("ep");
  if (const auto moe = parallelism.optional("moe")) return moe->has("ep") ? moe->required("ep") : *moe;
  return parallelism.required("attention");
}

// Where errors about a policy kind are reported: its key under `policies`, or where it would be.
YamlInput policy_key(const YamlInput& root, PolicyKind kind) {
  const auto policies = root.optional("policies");
  const auto node = policies ? policies->optional(policy_kind(kind).key) : std::nullopt;
  return node ? *node : policies ? *policies : root;
}

void check_dense_model(const YamlInput& root, const Scenario& s) {
  const std::string dense = fmt::format("model '{}' is dense (no experts)", s.model.name);
  if (root.has("profile")) root.required("profile").fail(dense + ": it has no routing to profile");
  if (!s.placement_file.empty())
    root.required("policies")
        .required("placement")
        .required("file")
        .fail(dense + ": it has no expert placement");
  if (s.workload.trace)
    root.required("workload").required("routing").fail(dense + ": it has no routing to replay from a trace");
  const std::pair<PolicyKind, const std::string&> chosen[] = {
      {PolicyKind::kPlacement, s.placement.name},
      {PolicyKind::kRequestScheduling, s.request_scheduling.name},
      {PolicyKind::kTokenScheduling, s.token_scheduling.name},
  };
  for (const auto& [kind, name] : chosen) {
    const PolicyRequirements& needs = policy_entry(kind, name).requirements;
    if (needs.needs_profile || needs.needs_profile_tables)
      policy_key(root, kind)
          .fail(fmt::format("{}: {} '{}' goes by expert routing", dense, policy_kind(kind).label, name));
  }
}

// The EP devices must split the placement policy's physical slots evenly (policies/placement_policies.hpp):
// checked at its `redundant` key when the scenario gives one, else at parallelism.ep, and told how to
// write the redundant experts that fit. A placement file's slots are its own.
void check_expert_slots(const YamlInput& root, const Scenario& s) {
  const YamlInput placement = policy_key(root, PolicyKind::kPlacement);
  PhysicalSlotsCheck slots;
  try {
    slots = check_physical_slots(s.placement, s.model.routed_experts, s.expert_ranks(), s.model.name);
  } catch (const InputError& e) {
    placement.fail(e.what());  // a redundant count that is no whole number
  }
  if (slots.problem.empty()) return;
  const YamlInput at = placement.is_map() && placement.has("redundant") ? placement.required("redundant")
                                                                        : expert_ranks_key(root);
  if (slots.redundant_that_fits < 0) at.fail(slots.problem);
  // A policy that cannot place them is told of one that can and reads what the scenario has.
  const bool replicates = s.placement.params.contains("redundant") && !slots.another_policy;
  const std::string suggested = replicates ? s.placement.name : s.profile.empty() ? "contiguous" : "eplb";
  at.fail(fmt::format("{}, {} policies.placement: {{name: {}, redundant: {}}}", slots.problem,
                      replicates ? "as" : "e.g.", suggested, slots.redundant_that_fits));
}

// Split by tensor parallelism, every expert is on every device: there is nothing to place, no
// dispatch (the attention's all-reduce or an all-gather gives every device every token) and no
// token to reshuffle.
void check_experts_tensor_parallel(const YamlInput& root, const Scenario& s) {
  if (!s.experts_tensor_parallel()) return;
  const std::string why =
      fmt::format("with parallelism.moe.tp {} every device holds a slice of every expert", s.moe_tp);
  if (!s.placement_file.empty())
    policy_key(root, PolicyKind::kPlacement).fail(why + ": there is no placement to read");
  const auto redundant = s.placement.params.find("redundant");
  if (s.placement.name != "contiguous" || (redundant != s.placement.params.end() && redundant->second != 0))
    policy_key(root, PolicyKind::kPlacement).fail(why + ": there is nothing to place (leave placement out)");
  const std::pair<PolicyKind, const std::string&> chosen[] = {
      {PolicyKind::kDispatch, s.dispatch_name},
      {PolicyKind::kTokenScheduling, s.token_scheduling.name},
      {PolicyKind::kReplicaChoice, s.replica_choice_name}};
  for (const auto& [kind, name] : chosen)
    if (name != policy_kind(kind).default_name)
      policy_key(root, kind)
          .fail(fmt::format("{}: no token is dispatched, so {} '{}' does not apply (leave it out)", why,
                            policy_kind(kind).key, name));
}

// A DeepEP dispatch names its kernel: serving.ep_kernel may only leave its time to the measured
// tables (auto) or price it over the topology (nccl). Across nodes its EP group fills whole nodes
// (a copy is forwarded to the GPU of its source's local index).
void check_deepep_dispatch(const YamlInput& root, const Scenario& s) {
  if (!is_deepep(s.dispatch)) return;
  if (s.ep > s.cluster.gpus_per_node && s.ep % s.cluster.gpus_per_node != 0)
    policy_key(root, PolicyKind::kDispatch)
        .fail(fmt::format("DeepEP's dispatch '{}' forwards over nodes of {} GPUs: the EP size {} must fill "
                          "whole nodes",
                          s.dispatch_name, s.cluster.gpus_per_node, s.ep));
  if (s.serving.ep_kernel == EpKernel::kNormal || s.serving.ep_kernel == EpKernel::kLowLatency)
    root.required("serving")
        .required("ep_kernel")
        .fail(fmt::format("policies.dispatch '{}' names DeepEP's kernel itself: give serving.ep_kernel "
                          "auto (the measured tables time it) or nccl (priced over the topology)",
                          s.dispatch_name));
  // Its low-latency buffers hold a fixed number of tokens per rank: every step that runs
  // low_latency (all of them; with auto, the decode-only ones) must fit.
  if (s.low_latency_buffer_tokens == 0) return;
  // A decode-only step runs each request's verified drafts too (serving.speculative).
  const bool every_step = s.dispatch == DispatchMode::kLowLatency;
  const long long most =
      every_step ? s.serving.max_batch_tokens
                 : static_cast<long long>(s.serving.max_running_requests) * s.serving.decode_step_tokens();
  if (most > s.low_latency_buffer_tokens) {
    const char* key = every_step ? "max_batch_tokens" : "max_running_requests";
    const YamlInput serving = root.optional("serving") ? root.required("serving") : root;
    const std::string tokens =
        every_step || !s.serving.speculative.on()
            ? std::to_string(most)
            : fmt::format("{} x {} tokens per decoding request (serving.speculative) = {}",
                          s.serving.max_running_requests, s.serving.decode_step_tokens(), most);
    (serving.has(key) ? serving.required(key) : policy_key(root, PolicyKind::kDispatch))
        .fail(fmt::format("serving.{} {} exceeds the {} tokens per rank DeepEP's low-latency buffers hold "
                          "(policies.dispatch '{}', max_dispatch_tokens_per_rank): lower it, or raise "
                          "max_dispatch_tokens_per_rank (buffer memory grows with it)",
                          key, tokens, s.low_latency_buffer_tokens, s.dispatch_name));
  }
}

// Placements give every node an EP group spans the same number of devices (after the DeepEP check,
// which says why its kernels need that).
void check_whole_nodes(const YamlInput& root, const Scenario& s) {
  const int per_node = s.cluster.gpus_per_node;
  if (s.ep > per_node && s.ep % per_node != 0)
    expert_ranks_key(root).fail(
        fmt::format("EP size {} spans {} nodes of {} devices of cluster '{}', the last one partly: an "
                    "EP group larger than a node fills whole nodes (a multiple of {})",
                    s.ep, (s.ep + per_node - 1) / per_node, per_node, s.cluster.name, per_node));
}

std::vector<std::string> idle_nodes_warnings(const Scenario& s) {
  if (s.disaggregation) {
    std::vector<std::string> warnings;
    for (const auto& [name, pool] : {std::pair{"prefill", s.disaggregation->prefill.get()},
                                     std::pair{"decode", s.disaggregation->decode.get()}})
      for (const std::string& warning : idle_nodes_warnings(*pool))
        warnings.push_back(fmt::format("{} pool: {}", name, warning));
    return warnings;
  }
  const int per_node = s.cluster.gpus_per_node;
  const int instances = s.deployment ? s.deployment->instances : 1;
  const int nodes_used = instances * ((s.ep + per_node - 1) / per_node);
  if (nodes_used >= s.cluster.nodes) return {};
  return {fmt::format(
      "cluster '{}' has {} nodes of {} devices; the serving group{} (parallelism.ep {}) use{} {} of them, "
      "leaving {} devices idle; per-node throughput counts the {} node{} in use",
      s.cluster.name, s.cluster.nodes, per_node,
      instances > 1 ? fmt::format("s of {} instances", instances) : "", s.ep, instances > 1 ? "" : "s",
      nodes_used, s.cluster.devices() - instances * s.ep, nodes_used, nodes_used == 1 ? "" : "s")};
}

namespace {

// The scenario key whose value sets a kernel table's axis: a prompt's tokens and the context they
// make (prefill and decode attention), the step's token budget (GEMMs, experts, permutes, copies),
// the running requests (decode batches) or the layout (experts per device).
std::string key_setting_axis(const Scenario& s, const std::string& kernel, const std::string& axis) {
  const bool prefill = kernel.ends_with("_prefill");
  const bool prompt = axis == "context" || (prefill && axis == "tokens");
  if (prompt)
    return s.workload.request_log   ? "workload.requests_from"
           : s.workload.sessions.on ? "workload.sessions"
                                    : "workload.input_len";
  if (axis == "batch") return prefill ? "serving.max_batch_tokens" : "serving.max_running_requests";
  if (axis == "experts" || axis == "active_experts") return "parallelism";
  return "serving.max_batch_tokens";
}

}  // namespace

InputError located_grid_error(const Scenario& s, const CalibrationGridError& e) {
  // The profile's file at the table's line: "FILE:LINE (embedded)".
  std::string profile = s.calibration_file;
  if (!profile.empty() && e.table_line() > 0) profile += fmt::format(":{}", e.table_line());
  if (!s.calibration_note.empty())
    profile += profile.empty() ? s.calibration_note : " (" + s.calibration_note + ")";
  const std::string message =
      fmt::format("this value asks the calibration profile ({}) for {} = {:g} ({}): {}", profile, e.axis(),
                  e.value(), e.kernel(), e.what());
  if (!s.document) return InputError(fmt::format("{}: {}", s.file, message));
  // The key, or the nearest one above it that the scenario has (a default's section).
  const std::string key = key_setting_axis(s, e.kernel(), e.axis());
  YamlInput at = *s.document;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t end = std::min(key.find('.', start), key.size());
    const std::string part = key.substr(start, end - start);
    if (!at.is_map() || !at.has(part)) break;
    at = at.required(part);
    start = end + 1;
  }
  try {
    at.fail(at.key_path() == key
                ? message
                : fmt::format("{} (the scenario leaves {} out: its default asked)", message, key));
  } catch (const InputError& located) {
    // A value given by --set (or a sweep) has no line: say where it was given.
    for (auto o = s.overrides.rbegin(); o != s.overrides.rend(); ++o)
      if (o->key_path.starts_with(key) || key.starts_with(o->key_path)) return located.set_by(o->origin);
    return located;
  }
  return InputError(message);  // fail() always throws
}

// The requirements of every policy but the placement, from their registry entries, once the plan
// says whether it was made from a profile.
void check_policies_on_plan(const YamlInput& root, const Scenario& s, const PlacementPlan& plan) {
  const std::pair<PolicyKind, const std::string&> chosen[] = {
      {PolicyKind::kRequestScheduling, s.request_scheduling.name},
      {PolicyKind::kTokenScheduling, s.token_scheduling.name},
      {PolicyKind::kDispatch, s.dispatch_name},
      {PolicyKind::kReplicaChoice, s.replica_choice_name},
  };
  for (const auto& [kind, name] : chosen)
    check_requirements(policy_entry(kind, name), policy_context(s, &plan), policy_key(root, kind));
}

// Replicas in the token's node are preferred; an EP group smaller than a node is one node.
int placement_devices_per_node(const Scenario& s) {
  return std::min(s.cluster.gpus_per_node, s.expert_ranks());
}

// A placement file is an input: read and checked when the scenario is loaded.
void read_placement_input(const YamlInput& root, Scenario& s) {
  if (s.placement_file.empty()) {
    // Checked before it runs, on what it reads; a placement file's policy ran where its inputs were.
    check_requirements(policy_entry(PolicyKind::kPlacement, s.placement.name), policy_context(s, nullptr),
                       policy_key(root, PolicyKind::kPlacement));
    return;
  }
  PlacementPlan plan = read_scenario_placement_file(
      root.required("policies").required("placement").required("file"), s, placement_devices_per_node(s));
  s.placement = plan.policy;
  check_policies_on_plan(root, s, plan);
  s.placement_from_file = std::make_shared<const PlacementPlan>(std::move(plan));
}

}  // namespace semsim
