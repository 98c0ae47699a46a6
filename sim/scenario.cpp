#include "sim/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "models/compressed_file.hpp"
#include "models/presets.hpp"
#include "sim/scenario_checks.hpp"
#include "sim/scenario_deployment.hpp"
#include "sim/scenario_disaggregation.hpp"
#include "sim/scenario_overrides.hpp"
#include "sim/scenario_speculative.hpp"
#include "sim/sglang_server_args.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

// A weight format: FP8 needs the device's FP8 tensor cores; FP4 is checked against the profile's
// tables once the calibration is known (check_fp4_tables).
WeightFormat read_weight_format(const YamlInput& in, const Device& device) {
  const WeightFormat format = read_choice(in, kWeightFormatNames);
  if (format == WeightFormat::kFp8 && device.fp8_flops <= 0)
    in.fail("device '" + device.name + "' has no FP8 support");
  return format;
}

Precision read_precision(const YamlInput& in, double& dispatch_bytes_per_element, const Device& device) {
  in.expect_map({"weights", "experts", "kv_cache", "dispatch"});
  Precision p;
  if (const auto w = in.optional("weights")) p.weights = read_weight_format(*w, device);
  p.experts = p.weights;
  if (const auto e = in.optional("experts")) p.experts = read_weight_format(*e, device);
  if (const auto kv = in.optional("kv_cache"))
    p.kv_bytes = kv->as_choice({"bf16", "fp8"}) == "fp8" ? kFp8Bytes : kBf16Bytes;
  if (const auto d = in.optional("dispatch")) {
    const DispatchFormat format = read_choice(*d, kDispatchFormatNames);
    // DeepEP quantizes to NVFP4 what NVFP4 experts multiply; other experts take FP8 or BF16 tokens.
    if (format == DispatchFormat::kNvfp4 && p.experts != WeightFormat::kNvfp4)
      d->fail("an nvfp4 dispatch feeds NVFP4 experts: it needs precision.experts (or weights) nvfp4");
    dispatch_bytes_per_element = dispatch_format_bytes(format);
  }
  return p;
}

// FP4 weights are priced from the profile's FP4 tables: a profile with tables of the family (GEMMs for
// `weights`, the MoE kernel for `experts`) in other dtypes but none in this one is refused, naming
// those it has, rather than priced by another dtype's or by the roofline. Measured FP4 tables serve on
// any device (Hopper runs MXFP4 weight-only kernels); without tables (a datasheet profile) FP4 is the
// roofline at the device's fp4_flops, which Blackwell alone has.
void check_fp4_tables(const YamlInput& precision, const Scenario& s) {
  const auto check = [&](const char* key, WeightFormat format, const char* kernel) {
    if (!is_fp4(format)) return;
    const std::string dtype = name_of(kWeightFormatNames, format);
    std::set<std::string> available;
    for (const KernelTable& table : s.calibration->kernels)
      if (table.kernel == kernel) available.insert(table.dtype);
    if (available.contains(dtype) || (available.empty() && s.cluster.device.fp4_flops > 0)) return;
    // `experts` left out takes the weights' format: the error points at `weights` then.
    const YamlInput at = precision.optional(key) ? *precision.optional(key) : precision.required("weights");
    if (available.empty())
      at.fail(
          fmt::format("device '{}' has no FP4 support (no fp4_flops in its preset) and profile '{}' no {} "
                      "tables of {}",
                      s.cluster.device.name, s.calibration->name, dtype, kernel));
    at.fail(fmt::format("profile '{}' has no {} tables of {} (it has: {})", s.calibration->name, dtype,
                        kernel, fmt::join(available, ", ")));
  };
  check("weights", s.precision.weights, "gemm");
  check("experts", s.precision.experts, "moe_experts");
}

// The shorthand `{ep: N, attention: dp | tp}`: N devices, experts spread over all of them, attention
// one rank per device (dp) or one TP group of them all (tp).
void read_ep_shorthand(const YamlInput& in, Scenario& s) {
  in.expect_map({"ep", "attention", "dp", "tp"});
  s.ep = static_cast<int>(in.required("ep").as_int_in(1, 1 << 16));
  s.attention = read_choice(in.required("attention"), kAttentionModeNames);
  if (s.ep > s.cluster.devices())
    in.required("ep").fail("EP size " + std::to_string(s.ep) + " exceeds the " +
                           std::to_string(s.cluster.devices()) + " devices of cluster '" + s.cluster.name +
                           "'");
  if (s.attention == AttentionMode::kTensorParallel) {
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

// `{attention: {tp: T, dp: D}, moe: {tp: MT, ep: ME}}`: T x D = MT x ME devices. Each of the D
// attention groups shards its batch's heads T ways; each routed expert's FFN splits MT ways and the
// experts spread ME ways. The simulated layouts give each split all devices or none of them.
void read_layout(const YamlInput& in, Scenario& s) {
  in.expect_map({"attention", "moe"});
  const YamlInput attention = in.required("attention");
  attention.expect_map({"tp", "dp"});
  s.tp = static_cast<int>(attention.get_int_in("tp", 1, 1, 1 << 16));
  s.dp = static_cast<int>(attention.get_int_in("dp", 1, 1, 1 << 16));
  const long long devices = static_cast<long long>(s.tp) * s.dp;
  if (devices > (1 << 16)) attention.fail(fmt::format("tp x dp = {} devices is beyond any cluster", devices));
  s.ep = static_cast<int>(devices);
  if (s.ep > s.cluster.devices())
    attention.fail(fmt::format("tp {} x dp {} = {} devices exceed the {} of cluster '{}'", s.tp, s.dp, s.ep,
                               s.cluster.devices(), s.cluster.name));
  if (s.tp > 1 && s.dp > 1)
    attention.required("tp").fail(fmt::format(
        "tp {} x dp {}: attention groups of some but not all of the {} devices are not simulated; use tp: {} "
        "(one group) or dp: {} (one rank per device)",
        s.tp, s.dp, s.ep, s.ep, s.ep));
  s.attention = s.tp > 1 ? AttentionMode::kTensorParallel : AttentionMode::kDataParallel;
  const auto moe = in.optional("moe");
  if (!moe) return;  // the experts spread over every device, as the shorthand's
  if (s.model.routed_experts == 0)
    moe->fail(fmt::format("model '{}' is dense: it has no experts to split", s.model.name));
  moe->expect_map({"tp", "ep"});
  s.moe_tp = static_cast<int>(moe->get_int_in("tp", 1, 1, 1 << 16));
  const int moe_ep = static_cast<int>(moe->get_int_in("ep", s.ep / s.moe_tp, 1, 1 << 16));
  if (static_cast<long long>(s.moe_tp) * moe_ep != devices)
    moe->fail(
        fmt::format("moe tp {} x ep {} = {} devices, attention tp {} x dp {} = {}: both must cover the "
                    "same devices",
                    s.moe_tp, moe_ep, static_cast<long long>(s.moe_tp) * moe_ep, s.tp, s.dp, devices));
  if (s.moe_tp > 1 && moe_ep > 1)
    moe->required("tp").fail(fmt::format(
        "tp {} x ep {}: experts split over some but not all of the {} devices are not simulated; use tp: {} "
        "(every expert on every device) or ep: {} (whole experts spread)",
        s.moe_tp, moe_ep, s.ep, s.ep, s.ep));
  if (s.moe_tp > 1 && s.model.expert_ffn % s.moe_tp != 0)
    moe->required("tp").fail(fmt::format("model '{}''s expert FFN of {} does not split {} ways", s.model.name,
                                         s.model.expert_ffn, s.moe_tp));
}

void read_parallelism(const YamlInput& in, Scenario& s) {
  const auto attention = in.optional("attention");
  if (attention && attention->is_map())
    read_layout(in, s);
  else
    read_ep_shorthand(in, s);
}

void read_serving(const YamlInput& in, const Device& device, ServingLimits& limits) {
  in.expect_map({"max_batch_tokens", "max_running_requests", "memory_fraction", "time_limit", "overlap",
                 "ep_kernel", "pool", "batching", "speculative", "prefix_cache"});
  if (const auto pool = in.optional("pool")) limits.pool = read_choice(*pool, kServingPoolNames);
  if (const auto batching = in.optional("batching")) limits.batching = read_choice(*batching, kBatchingNames);
  if (const auto kernel = in.optional("ep_kernel")) limits.ep_kernel = read_choice(*kernel, kEpKernelNames);
  limits.max_batch_tokens =
      static_cast<int>(in.get_int_in("max_batch_tokens", limits.max_batch_tokens, 1, 1 << 24));
  limits.max_running_requests =
      static_cast<int>(in.get_int_in("max_running_requests", limits.max_running_requests, 1, 1 << 20));
  if (const auto f = in.optional("memory_fraction")) limits.memory_fraction = f->as_double_in(0.05, 1.0);
  if (const auto t = in.optional("time_limit")) limits.time_limit = t->as_double_in(0, 1e9);
  limits.prefix_cache = in.get_bool("prefix_cache", false);
  if (const auto overlap = in.optional("overlap")) {
    limits.overlap = read_choice(*overlap, kOverlapNames);
    // Overlapped compute slows by the units the communication kernels hold: the device must say how many.
    if (limits.overlap == Overlap::kTwoBatch &&
        (device.compute_units == 0 || device.communication_units == 0))
      overlap->fail(
          fmt::format("two_batch needs the device's compute_units and communication_units, which "
                      "device '{}' does not give",
                      device.name));
  }
}

// `engine: {name, cuda_graph_max_bs, overlap_schedule}`. With sglang, what the scenario leaves out
// takes SGLang's defaults: its CUDA graph sizes and overlap scheduling, and serving.max_batch_tokens
// its chunked prefill size (per DP rank under Attention-DP, as SGLang divides it by the DP size).
// serving.max_running_requests keeps semsim's default: SGLang derives its own from the KV pool.
void read_engine(const YamlInput& in, const std::optional<YamlInput>& serving, Scenario& s) {
  in.expect_map({"name", "cuda_graph_max_bs", "overlap_schedule"});
  EngineSettings& engine = s.engine;
  engine.name = read_choice(in.required("name"), kEngineNames);
  if (!engine.on()) {
    for (const char* key : {"cuda_graph_max_bs", "overlap_schedule"})
      if (const auto value = in.optional(key)) value->fail("applies only to an engine (name: sglang)");
    return;
  }
  const int tp_size = s.dp * s.tp;  // SGLang's --tp: every GPU of the serving group
  const SglangDefaults defaults = sglang_defaults(s.cluster.device.driver_memory_mib(), tp_size);
  auto origin = [](bool given) { return given ? SettingOrigin::kScenario : SettingOrigin::kEngineDefault; };
  engine.cuda_graph_max_bs =
      static_cast<int>(in.get_int_in("cuda_graph_max_bs", defaults.cuda_graph_max_bs, 1, 1 << 16));
  engine.cuda_graph_max_bs_from = origin(in.has("cuda_graph_max_bs"));
  engine.overlap_schedule = in.get_bool("overlap_schedule", true);
  engine.overlap_schedule_from = origin(in.has("overlap_schedule"));
  const bool batch_tokens_given = serving && serving->has("max_batch_tokens");
  if (!batch_tokens_given) s.serving.max_batch_tokens = std::max(1, defaults.chunked_prefill_size / s.dp);
  engine.max_batch_tokens_from = origin(batch_tokens_given);
  engine.max_running_requests_from = serving && serving->has("max_running_requests")
                                         ? SettingOrigin::kScenario
                                         : SettingOrigin::kSemsimDefault;
}

// With sglang and no serving.memory_fraction, SGLang's mem_fraction_static default: what it keeps
// outside weights + KV cache grows with the chunked prefill size (the TP group's: the per-rank budget
// times the DP ranks), the graph batch, the group's GPUs, DP attention and a draft (read after
// serving.speculative). Under sglang the fraction applies to the memory the driver reports.
void apply_sglang_memory_fraction(const YamlInput& engine_key, const std::optional<YamlInput>& serving,
                                  Scenario& s) {
  if (!s.engine.on()) return;
  if (serving && serving->has("memory_fraction")) {
    s.engine.memory_fraction_from = SettingOrigin::kScenario;
    return;
  }
  const SpeculativeDecoding& spec = s.serving.speculative;
  SglangMemoryInputs in;
  in.device_memory_mib = s.cluster.device.driver_memory_mib();
  in.chunked_prefill_size = s.serving.max_batch_tokens * s.dp;
  in.cuda_graph_max_bs = s.engine.cuda_graph_max_bs;
  in.tp_size = s.dp * s.tp;
  in.dp_attention_size = s.attention == AttentionMode::kDataParallel ? s.dp : 1;
  in.draft = !spec.on()                                 ? SglangDraft::kNone
             : spec.method == SpeculativeMethod::kDraft ? SglangDraft::kDraftModel
                                                        : SglangDraft::kDraftHeads;
  const double fraction = sglang_mem_fraction_static(in);
  if (fraction <= 0)
    engine_key.fail(
        fmt::format("SGLang keeps {:.0f} MiB outside its static pool, more than device '{}''s {:.0f} "
                    "MiB: give serving.memory_fraction (its --mem-fraction-static)",
                    sglang_reserved_mib(in), s.cluster.device.name, in.device_memory_mib));
  s.serving.memory_fraction = fraction;
  s.engine.memory_fraction_from = SettingOrigin::kEngineDefault;
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
  if (const auto why = why_not_a_regular_file(path)) value.fail(fmt::format("{} '{}' {}", what, path, *why));
  return path;
}

// Whether `node` or a value below it was given by --set (or a sweep's values).
bool holds_override(const YAML::Node& node) {
  if (node.Tag() == YamlInput::kOverrideTag) return true;
  if (node.IsMap())
    for (const auto& entry : node)
      if (holds_override(entry.second)) return true;
  if (node.IsSequence())
    for (const auto& item : node)
      if (holds_override(item)) return true;
  return false;
}

void read_policies(const YamlInput& in, const std::string& base_dir, Scenario& s) {
  std::vector<std::string> keys;
  for (const PolicyKindInfo& kind : policy_kinds())
    if (kind.kind != PolicyKind::kRouter) keys.push_back(kind.key);  // deployment.router
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
  // The default scenario's DeepEP dispatch is SGLang's default, not a choice the user made: with
  // the experts split over every device no token is dispatched, so such a layout takes the registry's
  // default instead of being refused (check_experts_tensor_parallel refuses a dispatch the user gave).
  const auto dispatch_node = in.optional(policy_kind(PolicyKind::kDispatch).key);
  const bool dispatch_from_default_scenario =
      dispatch_node && in.file() == kDefaultScenarioFile && !holds_override(dispatch_node->node());
  const PolicyChoice dispatch =
      s.experts_tensor_parallel() && dispatch_from_default_scenario
          ? default_policy_choice(PolicyKind::kDispatch, policy_kind(PolicyKind::kDispatch).default_name)
          : choice(PolicyKind::kDispatch);
  s.dispatch_name = dispatch.name;
  s.dispatch = dispatch_mode_of(dispatch);
  if (s.dispatch == DispatchMode::kLowLatency || s.dispatch == DispatchMode::kDeepepAuto)
    s.low_latency_buffer_tokens =
        static_cast<int>(dispatch.whole_param("max_dispatch_tokens_per_rank", 1, 1 << 16));
  const PolicyChoice replica_choice = choice(PolicyKind::kReplicaChoice);
  s.replica_choice_name = replica_choice.name;
  s.replica_choice = replica_choice_of(replica_choice);
}

void read_network(const YamlInput& in, Scenario& s) {
  in.expect_map({"fidelity"});
  s.fidelity = read_choice(in.required("fidelity"), kNetworkFidelityNames);
}

// `calibration: PROFILE` or `{profile: PROFILE, extrapolate: false}`; PROFILE is `measured` (the
// embedded measured profile, the default where one exists), `datasheet`, or a profile file.
void read_calibration(std::optional<YamlInput> calibration, const std::string& base_dir, Scenario& s) {
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
    s.calibration_file = existing_file(*calibration, base_dir, "profile file");
    s.calibration = std::make_shared<const CalibrationProfile>(
        CalibrationProfile::from_yaml(YamlInput::load_file(s.calibration_file), s.cluster.device));
  }
  if (s.calibration_file.empty()) {  // embedded: a device without a datasheet file has the generic one
    if (s.calibration->name.starts_with("datasheet:"))
      s.calibration_note = "the generic datasheet assumptions, no file";
    else {
      s.calibration_file = s.calibration->source == "measured"
                               ? CalibrationProfile::measured_file(s.cluster.device)
                               : fmt::format("calibrate/profiles/{}.yaml", s.calibration->name);
      s.calibration_note = "embedded";
    }
  }
  try {
    s.calibration_links = calibration_links(*s.calibration, s.cluster, s.ep);
  } catch (const InputError& e) {
    if (calibration) calibration->fail(e.what());
    throw;
  }
}

void read_outputs(const YamlInput& in, Scenario& s) {
  in.expect_map({"requests_csv", "steps_csv", "layers_csv"});
  s.write_requests_csv = in.get_bool("requests_csv", true);
  s.write_steps_csv = in.get_bool("steps_csv", true);
  s.write_layers_csv = in.get_bool("layers_csv", false);
}

// The sections of a scenario, each read on its own, then the checks across them.
void read_sections(const YamlInput& root, const std::string& base_dir, long long seed, Scenario& s) {
  s.model = load_model(root.required("model"), base_dir);
  s.cluster = load_cluster(root.required("cluster"), base_dir);
  if (const auto precision = root.optional("precision"))
    s.precision = read_precision(*precision, s.dispatch_bytes_per_element, s.cluster.device);
  read_parallelism(root.required("parallelism"), s);
  const auto serving = root.optional("serving");
  if (serving) read_serving(*serving, s.cluster.device, s.serving);
  if (const auto engine = root.optional("engine")) read_engine(*engine, serving, s);
  if (serving && serving->has("speculative")) read_speculative(serving->required("speculative"), base_dir, s);
  if (const auto engine = root.optional("engine"))
    apply_sglang_memory_fraction(engine->required("name"), serving, s);
  s.workload = WorkloadSpec::from_yaml(root.required("workload"), base_dir);
  check_routing_matches(s.workload, s.model, root.required("workload"));
  if (s.serving.prefix_cache && s.workload.prefix_block_tokens() == 0)
    serving->required("prefix_cache")
        .fail(
            "the requests carry no prefix identity to cache by: give workload.prefix, or a mooncake "
            "request log with hash_ids");
  if (seed >= 0) s.workload.seed = static_cast<std::uint64_t>(seed);
  if (const auto profile = root.optional("profile"))
    s.profile = existing_path(*profile, base_dir, "routing profile folder");
  if (const auto policies = root.optional("policies"))
    read_policies(*policies, base_dir, s);
  else
    read_policies(
        YamlInput(YAML::Node(YAML::NodeType::Map), std::make_shared<const std::string>(s.file), "policies"),
        base_dir, s);
  check_experts_tensor_parallel(root, s);
  if (s.model.dense())
    check_dense_model(root, s);
  else if (s.placement_file.empty())
    check_expert_slots(root, s);
  check_deepep_dispatch(root, s);
  check_whole_nodes(root, s);
  if (const auto network = root.optional("network")) read_network(*network, s);
  read_calibration(root.optional("calibration"), base_dir, s);
  if (const auto precision = root.optional("precision")) check_fp4_tables(*precision, s);
  if (const auto outputs = root.optional("outputs")) read_outputs(*outputs, s);
  read_placement_input(root, s);
}

// A pool's or an instance's scenario (see Disaggregation, Deployment) leaves the `disaggregation` and
// `deployment` keys out.
Scenario load_scenario_document(const std::string& text, const std::string& file, const std::string& base_dir,
                                const std::vector<ScenarioOverride>& overrides, long long seed, bool pool) {
  YamlInput root = YamlInput::parse(text, file);
  if (root.node().IsNull()) throw InputError(file + ": the scenario is empty");
  if (!root.is_map()) root.fail("a scenario must be a map");
  std::vector<std::string> created;  // per override, the first map it created ("" for none)
  for (const auto& o : overrides) created.push_back(apply_override(root.node(), o, file));
  if (pool) {  // a handle to the same map
    YAML::Node(root.node()).remove("disaggregation");
    YAML::Node(root.node()).remove("deployment");
  }
  try {
    root.expect_map({"schema", "name", "model", "cluster", "precision", "parallelism", "serving", "engine",
                     "workload", "profile", "policies", "network", "calibration", "outputs", "disaggregation",
                     "deployment"});
    if (root.required("schema").as_int() != 1)
      root.required("schema").fail("unsupported schema version (this semsim reads 1)");
    Scenario s;
    s.file = file;
    s.name = root.get_string("name", std::filesystem::path(file).stem().string());
    read_sections(root, base_dir, seed, s);
    s.document = root;
    s.overrides = overrides;
    s.base_dir = base_dir;
    if (const auto disaggregation = root.optional("disaggregation"))
      s.disaggregation = read_disaggregation(
          *disaggregation, s, overrides, [&](const std::vector<ScenarioOverride>& pool_overrides) {
            return load_scenario_document(text, file, base_dir, pool_overrides, seed, /*pool=*/true);
          });
    if (const auto deployment = root.optional("deployment"))
      s.deployment = read_deployment(
          *deployment, s, overrides,
          [&](const std::vector<ScenarioOverride>& instance_overrides) {
            return load_scenario_document(text, file, base_dir, instance_overrides, seed, /*pool=*/true);
          },
          root.optional("disaggregation"));
    return s;
  } catch (const InputError& e) {
    rethrow_with_origin(e, overrides, created);
  }
}

}  // namespace

Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<ScenarioOverride>& overrides, long long seed) {
  return load_scenario_document(text, file, base_dir, overrides, seed, /*pool=*/false);
}

}  // namespace semsim
