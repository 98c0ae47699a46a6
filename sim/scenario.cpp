#include "sim/scenario.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <span>
#include <sstream>
#include <utility>

#include "models/compressed_file.hpp"
#include "models/input_limits.hpp"
#include "models/memory_budget.hpp"
#include "models/presets.hpp"
#include "policies/placement_file.hpp"
#include "sim/run_result.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace scenarios_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

std::string default_scenario_text() {
  for (const auto& [name, text] : scenarios_data::embedded_files())
    if (name == "default.yaml") return std::string(text);
  throw std::logic_error("embedded default scenario missing");
}

ScenarioOverride parse_override(const std::string& assignment, const std::string& file) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InputError(file + ": --set '" + assignment + "': expected key.path=value");
  ScenarioOverride o{assignment.substr(0, equals), {}, "--set " + assignment};
  try {
    o.value = YamlInput::parse(assignment.substr(equals + 1), "value").node();
  } catch (const InputError& e) {
    throw InputError(file + ": --set '" + assignment + "': value is not valid YAML: " + e.what());
  }
  return o;
}

ScenarioOverride nodes_override(const std::string& nodes) {
  // The text as a plain scalar: the cluster's node count check says what is wrong with it.
  return {"cluster.nodes", YAML::Node(nodes), "--nodes " + nodes};
}

namespace {

// `cluster: NAME` is short for `cluster: {preset: NAME}`, which a key below it needs. The scalar
// keeps its data (and so its line, for an unknown preset): the new map holds a handle to it, made
// before the document's node is turned into the map.
void expand_cluster_shorthand(YAML::Node document, const std::string& key_path) {
  if (!key_path.starts_with("cluster.") || !document.IsMap()) return;
  const YAML::Node cluster = std::as_const(document)["cluster"];  // const: looking adds no key
  if (!cluster.IsDefined() || !cluster.IsScalar()) return;
  YAML::Node preset(YAML::NodeType::Null);
  preset = cluster;  // shares the scalar's data, not its node
  YAML::Node map(YAML::NodeType::Map);
  map["preset"] = preset;
  document["cluster"] = map;
}

}  // namespace

std::string apply_override(YAML::Node document, const ScenarioOverride& o, const std::string& file) {
  expand_cluster_shorthand(document, o.key_path);
  YAML::Node value = YAML::Clone(o.value);
  YamlInput::mark_as_override(value);
  std::vector<std::string> keys;
  std::stringstream parts(o.key_path);
  for (std::string key; std::getline(parts, key, '.');) {
    if (key.empty()) throw InputError(file + ": " + o.origin + ": empty key in path '" + o.key_path + "'");
    keys.push_back(key);
  }
  if (keys.empty() || o.key_path.back() == '.')
    throw InputError(file + ": " + o.origin + ": empty key in path '" + o.key_path + "'");
  // yaml-cpp nodes are handles: walking with operator[] on copies edits the same tree.
  std::vector<YAML::Node> chain{document};
  std::string path, created;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    path += (i > 0 ? "." : "") + keys[i];
    if (next.IsDefined() && !next.IsMap() && !next.IsNull())
      throw InputError(file + ": " + o.origin + ": '" + keys[i] + "' is not a map");
    if (!next.IsDefined() && created.empty()) created = path;
    chain.push_back(next);
  }
  chain.back()[keys.back()] = value;
  return created;
}

namespace {

Precision read_precision(const YamlInput& in, double& dispatch_bytes_per_element, const Device& device) {
  in.expect_map({"weights", "kv_cache", "dispatch"});
  auto bytes_of = [](const std::string& name) { return name == "fp8" ? 1.0 : 2.0; };
  Precision p;
  const std::string weights = in.get_string("weights", "bf16");
  if (const auto w = in.optional("weights")) {
    w->as_choice({"bf16", "fp8"});
    if (weights == "fp8" && device.fp8_flops <= 0) w->fail("device '" + device.name + "' has no FP8 support");
  }
  p.weight_bytes = bytes_of(weights);
  if (const auto kv = in.optional("kv_cache")) p.kv_bytes = bytes_of(kv->as_choice({"bf16", "fp8"}));
  if (const auto d = in.optional("dispatch"))
    dispatch_bytes_per_element = d->as_choice({"bf16", "fp8"}) == "fp8" ? 1.0 + 4.0 / 128 : 2.0;
  return p;
}

void read_parallelism(const YamlInput& in, Scenario& s) {
  in.expect_map({"ep", "attention", "dp", "tp"});
  s.ep = static_cast<int>(in.required("ep").as_int_in(1, 1 << 16));
  const YamlInput attention = in.required("attention");
  s.attention = attention.as_choice({"dp", "tp"}) == "dp" ? AttentionMode::kDataParallel
                                                          : AttentionMode::kTensorParallel;
  if (s.ep > s.cluster.devices())
    in.required("ep").fail("EP size " + std::to_string(s.ep) + " exceeds the " +
                           std::to_string(s.cluster.devices()) + " devices of cluster '" + s.cluster.name +
                           "'");
  if (s.attention == AttentionMode::kTensorParallel) {
    // One Attention-TP group spanning the EP group: one request queue, heads sharded over its ranks.
    s.dp = static_cast<int>(in.get_int_in("dp", 1, 1, 1 << 16));
    s.tp = static_cast<int>(in.get_int_in("tp", s.ep, 1, 1 << 16));
    if (s.tp != s.ep) in.required("tp").fail("with attention: tp, the TP size must equal the EP size");
    if (s.dp != 1) in.required("dp").fail("with attention: tp, dp must be 1 (one TP group)");
    return;
  }
  s.dp = static_cast<int>(in.get_int_in("dp", s.ep, 1, 1 << 16));
  s.tp = static_cast<int>(in.get_int_in("tp", 1, 1, 1 << 16));
  if (s.dp != s.ep)
    in.required("dp").fail("with attention: dp, the DP size must equal the EP size (one rank per device)");
  if (s.tp != 1) in.required("tp").fail("with attention: dp, tp must be 1");
}

}  // namespace

const char* serving_pool_name(ServingPool pool) {
  switch (pool) {
    case ServingPool::kPrefill:
      return "prefill";
    case ServingPool::kDecode:
      return "decode";
    case ServingPool::kColocated:
      break;
  }
  return "colocated";
}

namespace {

void read_serving(const YamlInput& in, const Device& device, ServingLimits& limits) {
  in.expect_map({"max_batch_tokens", "max_running_requests", "memory_fraction", "time_limit", "overlap",
                 "ep_kernel", "pool"});
  if (const auto pool = in.optional("pool")) {
    const std::string name = pool->as_choice({"colocated", "prefill", "decode"});
    for (const ServingPool p : {ServingPool::kColocated, ServingPool::kPrefill, ServingPool::kDecode})
      if (name == serving_pool_name(p)) limits.pool = p;
  }
  if (const auto kernel = in.optional("ep_kernel")) {
    const std::string name = kernel->as_choice(ep_kernel_names());
    limits.ep_kernel = static_cast<EpKernel>(
        std::find(ep_kernel_names().begin(), ep_kernel_names().end(), name) - ep_kernel_names().begin());
  }
  limits.max_batch_tokens =
      static_cast<int>(in.get_int_in("max_batch_tokens", limits.max_batch_tokens, 1, 1 << 24));
  limits.max_running_requests =
      static_cast<int>(in.get_int_in("max_running_requests", limits.max_running_requests, 1, 1 << 20));
  if (const auto f = in.optional("memory_fraction")) limits.memory_fraction = f->as_double_in(0.05, 1.0);
  if (const auto t = in.optional("time_limit")) limits.time_limit = t->as_double_in(0, 1e9);
  if (const auto overlap = in.optional("overlap")) {
    limits.overlap =
        overlap->as_choice({"none", "two_batch"}) == "two_batch" ? Overlap::kTwoBatch : Overlap::kNone;
    // Overlapped compute slows by the units the communication kernels hold: the device must say how many.
    if (limits.overlap == Overlap::kTwoBatch &&
        (device.compute_units == 0 || device.communication_units == 0))
      overlap->fail(
          fmt::format("two_batch needs the device's compute_units and communication_units, which "
                      "device '{}' does not give",
                      device.name));
  }
}

// A path value, relative to the scenario's folder unless absolute; it must exist.
std::string existing_path(const YamlInput& value, const std::string& base_dir, const std::string& what) {
  std::filesystem::path path(value.as_string());
  if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
  if (!path_exists(path)) value.fail(fmt::format("{} '{}' does not exist", what, path.string()));
  return path.string();
}

// An existing_path that must be a file.
std::string existing_file(const YamlInput& value, const std::string& base_dir, const std::string& what) {
  const std::string path = existing_path(value, base_dir, what);
  if (is_folder(path)) value.fail(fmt::format("{} '{}' is a folder, not a file", what, path));
  return path;
}

void read_policies(const YamlInput& in, const std::string& base_dir, Scenario& s) {
  std::vector<std::string> keys;
  for (const PolicyKindInfo& kind : policy_kinds()) keys.push_back(kind.key);
  in.expect_map(keys);
  auto choice = [&](PolicyKind kind) {
    const PolicyKindInfo& info = policy_kind(kind);
    if (const auto node = in.optional(info.key)) return read_policy_choice(*node, kind);
    return default_policy_choice(kind, info.default_name);
  };
  // `placement: {file: PATH}` reads a placement file instead of running a policy.
  const auto placement = in.optional("placement");
  if (placement && placement->is_map() && placement->has("file")) {
    placement->expect_map({"file"});
    s.placement_file = existing_file(placement->required("file"), base_dir, "placement file");
    s.placement_file_as_written = placement->required("file").as_string();
  } else {
    s.placement = choice(PolicyKind::kPlacement);
  }
  s.request_scheduling = choice(PolicyKind::kRequestScheduling);
  s.token_scheduling = choice(PolicyKind::kTokenScheduling);
  const PolicyChoice dispatch = choice(PolicyKind::kDispatch);
  s.dispatch_name = dispatch.name;
  s.dispatch = dispatch_mode_of(dispatch);
  if (s.dispatch == DispatchMode::kLowLatency || s.dispatch == DispatchMode::kDeepepAuto)
    s.low_latency_buffer_tokens =
        static_cast<int>(dispatch.whole_param("max_dispatch_tokens_per_rank", 1, 1 << 16));
  const PolicyChoice replica_choice = choice(PolicyKind::kReplicaChoice);
  s.replica_choice_name = replica_choice.name;
  s.replica_choice = replica_choice_of(replica_choice);
}

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
  check(p.devices, s.ep, "devices (the EP size)");
  check(p.devices_per_node, devices_per_node, "devices per node");
  return plan;
}

// Where errors about a policy kind are reported: its key under `policies`, or where it would be.
YamlInput policy_key(const YamlInput& root, PolicyKind kind) {
  const auto policies = root.optional("policies");
  const auto node = policies ? policies->optional(policy_kind(kind).key) : std::nullopt;
  return node ? *node : policies ? *policies : root;
}

// The EP devices must split the placement policy's physical slots evenly (policies/placement_policies.hpp):
// checked at its `redundant` key when the scenario gives one, else at parallelism.ep, and told how to
// write the redundant experts that fit. A placement file's slots are its own.
void check_expert_slots(const YamlInput& root, const Scenario& s) {
  const YamlInput placement = policy_key(root, PolicyKind::kPlacement);
  PhysicalSlotsCheck slots;
  try {
    slots = check_physical_slots(s.placement, s.model.routed_experts, s.ep, s.model.name);
  } catch (const InputError& e) {
    placement.fail(e.what());  // a redundant count that is no whole number
  }
  if (slots.problem.empty()) return;
  const YamlInput at = placement.is_map() && placement.has("redundant")
                           ? placement.required("redundant")
                           : root.required("parallelism").required("ep");
  if (slots.redundant_that_fits < 0) at.fail(slots.problem);
  // A policy that cannot place them is told of one that can and reads what the scenario has.
  const bool replicates = s.placement.params.contains("redundant") && !slots.another_policy;
  const std::string suggested = replicates ? s.placement.name : s.profile.empty() ? "contiguous" : "eplb";
  at.fail(fmt::format("{}, {} policies.placement: {{name: {}, redundant: {}}}", slots.problem,
                      replicates ? "as" : "e.g.", suggested, slots.redundant_that_fits));
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
  const bool every_step = s.dispatch == DispatchMode::kLowLatency;
  const int most = every_step ? s.serving.max_batch_tokens : s.serving.max_running_requests;
  if (most > s.low_latency_buffer_tokens) {
    const char* key = every_step ? "max_batch_tokens" : "max_running_requests";
    const YamlInput serving = root.optional("serving") ? root.required("serving") : root;
    (serving.has(key) ? serving.required(key) : policy_key(root, PolicyKind::kDispatch))
        .fail(fmt::format("serving.{} {} exceeds the {} tokens per rank DeepEP's low-latency buffers hold "
                          "(policies.dispatch '{}', max_dispatch_tokens_per_rank): lower it, or raise "
                          "max_dispatch_tokens_per_rank (buffer memory grows with it)",
                          key, most, s.low_latency_buffer_tokens, s.dispatch_name));
  }
}

// Placements give every node an EP group spans the same number of devices (after the DeepEP check,
// which says why its kernels need that).
void check_whole_nodes(const YamlInput& root, const Scenario& s) {
  const int per_node = s.cluster.gpus_per_node;
  if (s.ep > per_node && s.ep % per_node != 0)
    root.required("parallelism")
        .required("ep")
        .fail(fmt::format("EP size {} spans {} nodes of {} devices of cluster '{}', the last one partly: an "
                          "EP group larger than a node fills whole nodes (a multiple of {})",
                          s.ep, (s.ep + per_node - 1) / per_node, per_node, s.cluster.name, per_node));
}

PolicyContext policy_context(const Scenario& s, const PlacementPlan* plan) {
  return {s.attention, !s.profile.empty(), plan != nullptr && plan->profiled()};
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
  return std::min(s.cluster.gpus_per_node, s.ep);
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

// The scenario's routing profile (`profile: DIR`), checked against the model; none without the key.
std::optional<RoutingProfile> load_profile(const YamlInput& root, const Scenario& s) {
  if (s.profile.empty()) return std::nullopt;
  RoutingProfile profile = RoutingProfile::load(s.profile);
  if (profile.moe_layers() != s.model.moe_layers() || profile.experts() != s.model.routed_experts)
    root.required("profile").fail(fmt::format(
        "the routing profile has {} MoE layers of {} experts, model '{}' {} of {}", profile.moe_layers(),
        profile.experts(), s.model.name, s.model.moe_layers(), s.model.routed_experts));
  return profile;
}

// The vocabulary the run's tokens are identified by: the replayed trace's, or the synthetic
// generator's token types (texts "": keyed by id).
std::vector<std::string> routed_vocabulary(const Scenario& s) {
  if (s.workload.trace) return s.workload.trace->vocabulary();
  return std::vector<std::string>(
      static_cast<std::size_t>(make_synthetic_routing(s.workload, s.model).vocabulary()));
}

// Which requests of the trace file a run replays: the held-out ones (or all), the first
// workload.requests of them (request i replays the i-th, mod their count).
std::vector<bool> replayed_requests(const WorkloadSpec& w) {
  std::vector<bool> replayed(w.trace_requests, false);
  long long left = w.requests;
  for (std::size_t r = 0; r < w.trace_requests && left > 0; ++r)
    if (w.replayed.empty() || w.replayed[r]) replayed[r] = true, --left;
  return replayed;
}

// Runs the placement policy (the plan of a placement file is the scenario's own).
std::shared_ptr<const PlacementPlan> place(const YamlInput& root, const Scenario& s,
                                           const std::optional<RoutingProfile>& profile) {
  if (s.placement_from_file) return s.placement_from_file;
  const PlacementInput input{
      s.model.moe_layers(),          s.model.routed_experts, s.ep,
      placement_devices_per_node(s), s.model.expert_groups,  profile ? &*profile : nullptr};
  std::shared_ptr<const PlacementPlan> plan;
  try {
    plan = std::make_shared<const PlacementPlan>(make_placement_plan(input, s.placement));
  } catch (const InputError& e) {
    policy_key(root, PolicyKind::kPlacement).fail(e.what());
  }
  check_policies_on_plan(root, s, *plan);
  return plan;
}

// Under Attention-TP every rank holds its shard of the attention, dense FFN and vocabulary weights
// and of every token's KV cache (attention_tp_shard: GQA/MHA KV split by min(tp, kv_heads), MLA's
// latent KV replicated), so the group's token capacity is what one rank's share allows.
MemoryPlan plan_memory(const YamlInput& root, const Scenario& s, const Placement& placement) {
  const MoeModel rank_model =
      s.attention == AttentionMode::kTensorParallel ? attention_tp_shard(s.model, s.tp) : s.model;
  MemoryPlan m;
  m.weight_bytes_per_device =
      weight_bytes_per_device(rank_model, placement.max_slots_per_device(), s.precision);
  m.physical_slots_per_layer = placement.most_slots_per_layer();
  m.redundant_experts = m.physical_slots_per_layer - placement.experts;
  for (const auto& layer : placement.slots)
    for (const auto& device : layer)
      m.most_slots_per_device = std::max(m.most_slots_per_device, static_cast<int>(device.size()));
  const double usable = s.cluster.device.hbm_bytes * s.serving.memory_fraction;
  const double kv_per_token = kv_bytes_per_token(rank_model, s.precision);
  const long long longest =
      kv_reservation(s.serving.pool, s.workload.input_len.upper_bound(), s.workload.output_len.upper_bound());
  if (s.low_latency_buffer_tokens > 0)  // DeepEP's experts are the group's slots, replicas included
    m.dispatch_buffer_bytes_per_device = low_latency_buffer_bytes(s.low_latency_buffer_tokens, s.model.hidden,
                                                                  m.physical_slots_per_layer, s.ep);
  const double fixed = m.weight_bytes_per_device + m.dispatch_buffer_bytes_per_device;
  m.kv_capacity_tokens = static_cast<long long>((usable - fixed) / kv_per_token);
  if (m.kv_capacity_tokens < longest) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "model '" << s.model.name << "' does not fit: " << m.weight_bytes_per_device / 1e9
        << " GB of weights per device at EP" << s.ep
        << (m.dispatch_buffer_bytes_per_device > 0
                ? fmt::format(" and {:.3g} GB of DeepEP low-latency buffers",
                              m.dispatch_buffer_bytes_per_device / 1e9)
                : "")
        << " plus the KV cache of one longest request (" << longest << " tokens, "
        << longest * kv_per_token / 1e9 << " GB) exceed " << usable / 1e9 << " GB usable ("
        << s.serving.memory_fraction << " of " << s.cluster.device.hbm_bytes / 1e9 << " GB on "
        << s.cluster.device.name << ")";
    (root.has("model") ? root.required("model") : root).fail(msg.str());
  }
  return m;
}

// The least a run holds in memory: per request its arrival, its record and its latencies (with the
// copy a percentile sorts); per step its record and inter-token gap, with every rank's batch as full
// as serving.max_running_requests allows (fewer steps than any run of these requests can take).
// Refused at workload.requests when even that exceeds the machine's memory.
void check_run_memory(const YamlInput& root, const Scenario& s) {
  const auto requests = static_cast<double>(s.workload.requests);
  const double output_tokens = requests * s.workload.output_len.mean();
  const double steps = output_tokens / (static_cast<double>(s.dp) * s.serving.max_running_requests);
  const double bytes =
      requests * static_cast<double>(sizeof(Request) + sizeof(RequestRecord) + 8 * sizeof(double)) +
      steps * static_cast<double>(sizeof(StepRecord) + 3 * sizeof(long long));
  const YamlInput workload = root.required("workload");
  try {
    check_memory_need(bytes,
                      fmt::format("a run of {} requests (~{:.3g} output tokens, at least {:.3g} steps)",
                                  s.workload.requests, output_tokens, steps));
  } catch (const InputError& e) {
    (workload.has("requests") ? workload.required("requests") : workload).fail(e.what());
  }
}

// Values that came from --set have no line in the file: say where they came from. An error may be
// about the overridden key, a key below it, a map the override created on the way (a misspelt
// path), or one of its parent keys with at least two segments. Of several related overrides the
// last applied is named: the document holds its value (--nodes 4 after --set cluster=NAME).
[[noreturn]] void rethrow_with_origin(const InputError& e, const std::vector<ScenarioOverride>& overrides,
                                      const std::vector<std::string>& created = {}) {
  const std::string& path = e.key_path();
  auto within = [](const std::string& key, const std::string& prefix) {
    return key == prefix || key.starts_with(prefix + ".");
  };
  for (std::size_t i = overrides.size(); i-- > 0;) {
    const std::string& key = overrides[i].key_path;
    bool related = !path.empty() && (within(path, key) || (i < created.size() && path == created[i]));
    for (std::size_t dot = key.find('.', key.find('.') + 1); dot != std::string::npos;
         dot = key.find('.', dot + 1))
      related = related || path == key.substr(0, dot);  // parents with at least two segments
    if (related) throw e.set_by(overrides[i].origin);
  }
  throw e;
}

}  // namespace

Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<std::string>& assignments, long long seed) {
  std::vector<ScenarioOverride> overrides;
  for (const auto& assignment : assignments) overrides.push_back(parse_override(assignment, file));
  return load_scenario(text, file, base_dir, overrides, seed);
}

namespace {

std::shared_ptr<const Disaggregation> read_disaggregation(const YamlInput& in, const Scenario& whole,
                                                          const std::string& text,
                                                          const std::vector<ScenarioOverride>& overrides,
                                                          long long seed);

// A pool's scenario (see Disaggregation) leaves the `disaggregation` key out.
Scenario load_scenario_document(const std::string& text, const std::string& file, const std::string& base_dir,
                                const std::vector<ScenarioOverride>& overrides, long long seed, bool pool) {
  YamlInput root = YamlInput::parse(text, file);
  if (root.node().IsNull()) throw InputError(file + ": the scenario is empty");
  if (!root.is_map()) root.fail("a scenario must be a map");
  std::vector<std::string> created;  // per override, the first map it created ("" for none)
  for (const auto& o : overrides) created.push_back(apply_override(root.node(), o, file));
  if (pool) YAML::Node(root.node()).remove("disaggregation");  // a handle to the same map
  try {
    root.expect_map({"schema", "name", "model", "cluster", "precision", "parallelism", "serving", "workload",
                     "profile", "policies", "network", "calibration", "outputs", "disaggregation"});
    if (root.required("schema").as_int() != 1)
      root.required("schema").fail("unsupported schema version (this semsim reads 1)");
    Scenario s;
    s.file = file;
    s.name = root.get_string("name", std::filesystem::path(file).stem().string());
    s.model = load_model(root.required("model"), base_dir);
    s.cluster = load_cluster(root.required("cluster"), base_dir);
    if (const auto precision = root.optional("precision"))
      s.precision = read_precision(*precision, s.dispatch_bytes_per_element, s.cluster.device);
    read_parallelism(root.required("parallelism"), s);
    if (const auto serving = root.optional("serving")) read_serving(*serving, s.cluster.device, s.serving);
    s.workload = WorkloadSpec::from_yaml(root.required("workload"), base_dir);
    check_routing_matches(s.workload, s.model, root.required("workload"));
    if (seed >= 0) s.workload.seed = static_cast<std::uint64_t>(seed);
    if (const auto profile = root.optional("profile"))
      s.profile = existing_path(*profile, base_dir, "routing profile folder");
    if (const auto policies = root.optional("policies"))
      read_policies(*policies, base_dir, s);
    else
      read_policies(
          YamlInput(YAML::Node(YAML::NodeType::Map), std::make_shared<const std::string>(file), "policies"),
          base_dir, s);
    if (s.placement_file.empty()) check_expert_slots(root, s);
    check_deepep_dispatch(root, s);
    check_whole_nodes(root, s);
    if (const auto network = root.optional("network")) {
      network->expect_map({"fidelity"});
      s.fidelity = network->required("fidelity").as_choice({"flow", "bottleneck"}) == "flow"
                       ? NetworkFidelity::kFlow
                       : NetworkFidelity::kBottleneck;
    }
    // `calibration: PROFILE` or `{profile: PROFILE, extrapolate: false}`; PROFILE is `measured` (the
    // embedded measured profile, the default where one exists), `datasheet`, or a profile file.
    auto calibration = root.optional("calibration");
    if (calibration && calibration->is_map()) {
      calibration->expect_map({"profile", "extrapolate"});
      s.calibration_extrapolation = calibration->get_bool("extrapolate", false);
      calibration = calibration->required("profile");
    }
    const std::string profile = calibration ? calibration->as_string() : "";
    if (profile.empty()) {
      s.calibration = CalibrationProfile::standard(s.cluster.device);
    } else if (profile == "datasheet") {
      s.calibration =
          std::make_shared<const CalibrationProfile>(CalibrationProfile::datasheet(s.cluster.device));
    } else if (profile == "measured") {
      auto measured = CalibrationProfile::measured(s.cluster.device);
      if (!measured)
        calibration->fail("no measured profile is embedded for '" + s.cluster.device.name +
                          "' (there are for h100-sxm and h200-sxm): give a profile file, or datasheet");
      s.calibration = std::move(measured);
    } else {
      s.calibration = std::make_shared<const CalibrationProfile>(CalibrationProfile::from_yaml(
          YamlInput::load_file(existing_file(*calibration, base_dir, "profile file")), s.cluster.device));
    }
    try {
      s.calibration_links = calibration_links(*s.calibration, s.cluster, s.ep);
    } catch (const InputError& e) {
      if (calibration) calibration->fail(e.what());
      throw;
    }
    if (const auto outputs = root.optional("outputs")) {
      outputs->expect_map({"requests_csv", "steps_csv", "layers_csv"});
      s.write_requests_csv = outputs->get_bool("requests_csv", true);
      s.write_steps_csv = outputs->get_bool("steps_csv", true);
      s.write_layers_csv = outputs->get_bool("layers_csv", false);
    }
    read_placement_input(root, s);
    s.document = root;
    s.overrides = overrides;
    s.base_dir = base_dir;
    if (const auto disaggregation = root.optional("disaggregation"))
      s.disaggregation = read_disaggregation(*disaggregation, s, text, overrides, seed);
    return s;
  } catch (const InputError& e) {
    rethrow_with_origin(e, overrides, created);
  }
}

// A pool's `set:` names keys of the sections a pool may have of its own.
void check_pool_keys(const YamlInput& set) {
  for (const std::string& key : set.keys()) {
    const std::string section = key.substr(0, key.find('.'));
    if (key == "serving.pool")
      set.required(key).fail("a pool's role is its own: disaggregation sets serving.pool");
    if (section != "parallelism" && section != "serving" && section != "policies" && section != "profile")
      set.required(key).fail(
          fmt::format("a pool sets only parallelism, serving, policies and profile keys; '{}' is shared by "
                      "both pools (the model, cluster, workload, precision, network and calibration)",
                      key));
  }
}

std::shared_ptr<const Scenario> load_pool(const YamlInput& in, const Scenario& whole, const std::string& text,
                                          std::vector<ScenarioOverride> overrides, long long seed,
                                          ServingPool role) {
  in.expect_map({"nodes", "set"});
  const YamlInput nodes = in.required("nodes");
  overrides.push_back({"cluster.nodes", nodes.node(), nodes.location()});
  overrides.push_back({"serving.pool", YAML::Node(serving_pool_name(role)), in.location()});
  if (const auto set = in.optional("set")) {
    set->expect_map(set->keys());  // any key path: this only rejects duplicates
    check_pool_keys(*set);
    for (const std::string& key : set->keys())
      overrides.push_back({key, set->required(key).node(), set->required(key).location()});
  }
  std::shared_ptr<Scenario> pool;
  try {
    pool = std::make_shared<Scenario>(
        load_scenario_document(text, whole.file, whole.base_dir, overrides, seed, /*pool=*/true));
  } catch (const InputError& e) {
    // A value the pool sets is in the scenario file, at its origin: that location comes first.
    if (!e.origin().empty()) throw InputError(e.origin() + ": " + e.what(), e.key_path(), e.origin());
    throw;
  }
  if (pool->attention != AttentionMode::kDataParallel)
    in.fail(
        fmt::format("the {} pool runs Attention-TP: a disaggregated pool runs Attention-DP (each "
                    "request's KV cache on one rank, which its transfer moves)",
                    serving_pool_name(role)));
  return pool;
}

std::shared_ptr<const Disaggregation> read_disaggregation(const YamlInput& in, const Scenario& whole,
                                                          const std::string& text,
                                                          const std::vector<ScenarioOverride>& overrides,
                                                          long long seed) {
  in.expect_map({"prefill", "decode", "kv_transfer"});
  if (whole.serving.pool != ServingPool::kColocated)
    in.fail("a disaggregated scenario gives each pool its role: leave serving.pool out");
  auto d = std::make_shared<Disaggregation>();
  if (const auto mode = in.optional("kv_transfer"))
    d->kv_transfer = mode->as_choice({"layerwise", "whole"}) == "whole" ? KvTransferMode::kWhole
                                                                        : KvTransferMode::kLayerwise;
  d->prefill = load_pool(in.required("prefill"), whole, text, overrides, seed, ServingPool::kPrefill);
  d->decode = load_pool(in.required("decode"), whole, text, overrides, seed, ServingPool::kDecode);
  const int nodes = d->prefill->cluster.nodes + d->decode->cluster.nodes;
  if (nodes > whole.cluster.nodes)
    in.fail(fmt::format("the pools take {} + {} nodes, more than the {} of cluster '{}'",
                        d->prefill->cluster.nodes, d->decode->cluster.nodes, whole.cluster.nodes,
                        whole.cluster.name));
  return d;
}

}  // namespace

Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<ScenarioOverride>& overrides, long long seed) {
  return load_scenario_document(text, file, base_dir, overrides, seed, /*pool=*/false);
}

ScenarioPlan plan_scenario(const Scenario& s) {
  try {
    ScenarioPlan plan;
    const std::optional<RoutingProfile> profile = load_profile(*s.document, s);
    plan.placement = place(*s.document, s, profile);
    if (!plan.placement->token_devices.empty()) {
      TokenTableMatch match;
      plan.placement = plan_for_vocabulary(plan.placement, routed_vocabulary(s), match);
      plan.token_table = match;
    }
    plan.memory = plan_memory(*s.document, s, plan.placement->placement);
    check_run_memory(*s.document, s);
    if (plan.placement->profiled_on && s.workload.trace)
      plan.profile_overlap = profile_overlap(*plan.placement->profiled_on, s.workload.trace_hash,
                                             replayed_requests(s.workload), s.workload.trace_requests);
    // A replayed trace against the profile the placement came from: is the placement stale?
    if (profile && s.workload.trace)
      plan.routing_drift = routing_drift(RoutingCounts::of(*profile), *s.workload.trace);
    if (s.workload.trace && s.model.group_limited())
      plan.group_limit = check_group_limit(*s.workload.trace, ExpertGroupLimit::of(s.model));
    return plan;
  } catch (const InputError& e) {
    rethrow_with_origin(e, s.overrides);
  }
}

namespace {

// The scalar at `keys` below `node`, when it is a relative path naming a file or folder under
// `base_dir`, made absolute. Nodes are handles: the map's entries are the document's own.
void make_absolute(const YAML::Node& node, std::span<const char* const> keys, const std::string& base_dir) {
  if (keys.empty()) {
    const std::filesystem::path path = node.IsScalar() ? node.Scalar() : "";
    if (!path.empty() && path.is_relative() && path_exists(std::filesystem::path(base_dir) / path)) {
      YAML::Node value = node;
      value = std::filesystem::absolute(std::filesystem::path(base_dir) / path).lexically_normal().string();
    }
    return;
  }
  if (!node.IsMap()) return;
  for (const auto& entry : node)
    if (entry.first.Scalar() == keys.front()) make_absolute(entry.second, keys.subspan(1), base_dir);
}

}  // namespace

std::string resolved_scenario_yaml(const Scenario& s) {
  YAML::Node document = YAML::Clone(s.document->node());
  YamlInput::unmark_overrides(document);
  document["workload"]["seed"] = s.workload.seed;
  // Every key a file or folder may be given at (model and cluster files, a calibration profile).
  const std::vector<std::vector<const char*>> path_keys = {{"model"},
                                                           {"cluster"},
                                                           {"cluster", "preset"},
                                                           {"profile"},
                                                           {"calibration"},
                                                           {"calibration", "profile"},
                                                           {"policies", "placement", "file"},
                                                           {"workload", "routing", "file"},
                                                           {"workload", "arrival", "file"},
                                                           {"workload", "input_len", "file"},
                                                           {"workload", "output_len", "file"},
                                                           {"workload", "requests_from", "file"}};
  if (!s.base_dir.empty())
    for (const auto& keys : path_keys) make_absolute(document, keys, s.base_dir);
  YAML::Emitter out;
  out << document;
  return std::string(out.c_str()) + "\n";
}

ScenarioSource read_scenario_source(const std::string& path_or_default) {
  if (path_or_default == "default") return {default_scenario_text(), "<default>", ""};
  if (!path_exists(path_or_default))
    throw InputError(path_or_default + ": cannot open scenario file (no such file)");
  return {read_text_file(path_or_default, limits::kYamlFileBytes), path_or_default,
          std::filesystem::path(path_or_default).parent_path().string()};
}

Scenario load_scenario_file(const std::string& path_or_default, const std::vector<std::string>& overrides,
                            long long seed, const std::optional<std::string>& nodes) {
  const ScenarioSource source = read_scenario_source(path_or_default);
  std::vector<ScenarioOverride> all;
  for (const auto& assignment : overrides) all.push_back(parse_override(assignment, source.file));
  if (nodes) all.push_back(nodes_override(*nodes));
  return load_scenario(source.text, source.file, source.base_dir, all, seed);
}

}  // namespace semsim
