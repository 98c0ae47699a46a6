// `semsim place` (run a placement policy on a routing profile, write a placement file),
// `semsim place eval` (LAR, imbalance, A2A bytes, replica memory and the LAR upper bounds of a
// placement file on a trace's requests), `semsim place bound` (the bounds alone) and `semsim place
// export|import` (a placement file as a serving engine's expert-location file and back). The logic is
// in policies/ and policies/analysis/; this is the command line.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"
#include "policies/analysis/lar_upper_bound.hpp"
#include "policies/analysis/placement_evaluation.hpp"
#include "policies/placement_file.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "policies/sglang_expert_location.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/outputs/run_notes.hpp"
#include "sim/runs/progress.hpp"
#include "workloads/routing_drift.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// The options of `semsim place`.
struct PlaceOptions {
  std::string policy;
  std::string profile;  // routing profile folder (semsim profile)
  int ep = 0;
  int devices_per_node = 0;         // 0: one node
  std::string model;                // optional preset: the model's expert groups (EPLB)
  std::vector<std::string> params;  // key=value
  int lookback = 2;
  double balance = 1.10;  // token load tolerance of the T table
  std::string out;
  ProgressMode progress = ProgressMode::kAuto;
};

// `semsim place export`: a placement file as an engine's expert-location file.
struct PlaceExportOptions {
  std::string plan;  // placement file
  std::string format;
  std::string model;  // preset: where the dense layers are, which the engine's file has rows for
  std::string out;
};

// `semsim place import`: an engine's expert-location file as a placement file.
struct PlaceImportOptions {
  std::string file;
  std::string format;
  std::string model;
  int ep = 0;
  int devices_per_node = 0;  // 0: one node
  std::string out;           // "": check and describe only
};

// Which requests of a trace are evaluated, and the load rules both styles keep.
struct EvaluatedRequests {
  std::string trace;  // semsim trace
  double split = 0;   // only the requests `semsim profile --split F --seed S` held out; 0: all
  long long seed = 1;
  double balance = 1.10;       // DP-style hindsight and bound: request token load tolerance
  int tp_batch_tokens = 4096;  // TP style: tokens aligned to equal slices together
};

// The LAR upper bound's effort (policies/analysis/lar_upper_bound.hpp).
struct BoundEffort {
  int triangle_rounds = 2;  // triangle-cut rounds of the TP bound (0: faster, looser)
  int threads = 0;          // layers bounded in parallel; 0: every core
};

struct PlaceEvalOptions {
  std::string plan;  // placement file
  EvaluatedRequests requests;
  BoundEffort effort;
  std::string scheduler = "semmoe_dp";        // DP style: the engine's request scheduler
  std::vector<std::string> scheduler_params;  // key=value
  bool bound = true;                          // false: no upper bound (its keys are left out)
  bool json = false;
  std::string profile;  // the routing drift's reference; "" with --split: the trace's other requests
  ProgressMode progress = ProgressMode::kAuto;
};

// `semsim place bound`: the LAR upper bounds alone, for any placement on `ep` devices.
struct PlaceBoundOptions {
  EvaluatedRequests requests;
  BoundEffort effort;
  int ep = 0;
  bool json = false;
  ProgressMode progress = ProgressMode::kAuto;
};

// The policy named by `option` (one of `known`, a `kind` policy) with its defaults, then each key=value
// of `param_option` checked against its parameters.
PolicyChoice policy_choice(const std::string& option, PolicyKind kind, const std::string& name,
                           const std::string& param_option, const std::vector<std::string>& params) {
  PolicyChoice choice;
  try {
    choice = default_policy_choice(kind, name);
  } catch (const InputError& e) {
    throw InputError(option + ": " + e.what());
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : choice.params) keys.push_back(key);
  for (const std::string& param : params) {
    const auto eq = param.find('=');
    const std::string key = param.substr(0, eq);
    if (eq == std::string::npos)
      throw InputError(fmt::format("{} {}: expected key=value", param_option, param));
    if (!choice.params.contains(key))
      throw InputError(
          fmt::format("{} {}: policy '{}' has no parameter '{}'{}{}", param_option, param, name, key,
                      did_you_mean(key, keys),
                      keys.empty() ? "" : fmt::format("; its parameters: {}", fmt::join(keys, ", "))));
    const auto value = parse_number(param.substr(eq + 1));
    if (!value)
      throw InputError(fmt::format("{} {}: '{}' is not a number", param_option, param, param.substr(eq + 1)));
    choice.params[key] = *value;
  }
  return choice;
}

// Physical expert slots on the fullest device, summed over layers, beyond the least a placement
// without replicas puts there (L·N/D, rounded up where D does not divide N).
long long extra_slots_on_fullest_device(const Placement& placement) {
  const long long logical = static_cast<long long>(placement.moe_layers) * placement.experts;
  return placement.max_slots_per_device() - (logical + placement.devices - 1) / placement.devices;
}

std::vector<bool> evaluated_mask(const EvaluatedRequests& requests, const RoutingTrace& trace) {
  return requests.split > 0
             ? held_out_requests(trace.requests(), requests.split, static_cast<std::uint64_t>(requests.seed))
             : std::vector<bool>{};
}

// What any placement with N/D experts per device could reach on these requests under the
// evaluation's load rules: TP's equal slices, DP's balance.
LarUpperBound bound_for(const EvaluatedRequests& requests, const BoundEffort& effort,
                        const RoutingTrace& trace, const std::vector<bool>& evaluate, int devices,
                        const ProgressCallback& progress) {
  const int threads = effort.threads > 0 ? effort.threads
                                         : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const double tp_balance =
      equal_slice_balance(routed_tokens(trace, evaluate), requests.tp_batch_tokens, devices);
  return lar_upper_bound(trace, evaluate, devices,
                         {tp_balance, requests.balance, 100, effort.triangle_rounds, threads, progress});
}

void add_bound(nlohmann::ordered_json& j, const LarUpperBound& bound, const BoundEffort& effort) {
  j["upper_bound_dp"] = bound.dp;
  j["upper_bound_tp"] = bound.tp;
  j["bound_triangle_rounds"] = effort.triangle_rounds;
}

// The rule a scenario keeps (policies/placement_policies.hpp), told as the options that fix it.
void check_expert_slots(const PlaceOptions& options, const PolicyChoice& choice, int experts) {
  const PhysicalSlotsCheck slots = check_physical_slots(choice, experts, options.ep, "");
  if (slots.problem.empty()) return;
  if (slots.redundant_that_fits < 0) throw InputError(fmt::format("--ep {}: {}", options.ep, slots.problem));
  throw InputError(fmt::format(
      "--ep {}: {}, {}--param redundant={}", options.ep, slots.problem,
      choice.params.contains("redundant") && !slots.another_policy ? "as " : "e.g. --policy contiguous ",
      slots.redundant_that_fits));
}

int place_command(const PlaceOptions& options) {
  for (const auto& [missing, option] :
       {std::pair{options.policy.empty(), "--policy"}, std::pair{options.profile.empty(), "--profile"},
        std::pair{options.ep == 0, "--ep"}, std::pair{options.out.empty(), "--out"}})
    if (missing) throw InputError(std::string("place: ") + option + " is required (see semsim place --help)");
  const PolicyChoice choice =
      policy_choice("--policy", PolicyKind::kPlacement, options.policy, "--param", options.params);
  const RoutingProfile profile = RoutingProfile::load(options.profile);
  check_expert_slots(options, choice, profile.experts());
  const int per_node = options.devices_per_node > 0 ? options.devices_per_node : options.ep;
  if (options.ep % per_node != 0)
    throw InputError(fmt::format("--devices-per-node {}: must divide --ep {}", per_node, options.ep));
  PlacementInput input{profile.moe_layers(), profile.experts(), options.ep, per_node, 1, &profile};
  if (!options.model.empty()) {
    const MoeModel model = model_option(options.model);
    if (model.moe_layers() != profile.moe_layers() || model.routed_experts != profile.experts())
      throw InputError(fmt::format("--model {}: {} MoE layers of {} experts, the profile {} of {}",
                                   options.model, model.moe_layers(), model.routed_experts,
                                   profile.moe_layers(), profile.experts()));
    input.expert_groups = model.expert_groups;
  }
  ProgressLine progress("place " + choice.name, options.progress);
  input.progress = progress.callback();
  const PlacementPlan plan = make_placement_plan(input, choice, {options.lookback, options.balance});
  write_placement_file(plan, options.out);
  progress.finish();
  std::cout << fmt::format(
      "{}: policy {} on {} devices ({} per node), {} MoE layers x {} experts; solver {:.3f} s\n", options.out,
      choice.name, options.ep, per_node, profile.moe_layers(), profile.experts(), plan.solver_seconds);
  for (const auto& [key, value] : plan.solver) std::cout << fmt::format("  {}: {:.6g}\n", key, value);
  return 0;
}

int place_eval_command(const PlaceEvalOptions& options) {
  const PlacementPlan plan = read_placement_file(options.plan);
  // The bound is over placements of N/D experts per device: a plan of redundant slots at an EP size
  // that does not divide the experts has none to be read against.
  if (options.bound && plan.placement.experts % plan.placement.devices != 0)
    throw InputError(fmt::format(
        "{}: {} devices do not divide the {} experts, and the LAR upper bound is over placements of N/D "
        "experts per device: evaluate with --no-bound",
        options.plan, plan.placement.devices, plan.placement.experts));
  const EvaluatedRequests& requests = options.requests;
  const RoutingTrace trace = load_trace(requests.trace);
  const std::vector<bool> evaluate = evaluated_mask(requests, trace);
  const PolicyChoice scheduler =
      policy_choice("--scheduler", PolicyKind::kRequestScheduling, options.scheduler, "--scheduler-param",
                    options.scheduler_params);
  ProgressLine progress("place eval", options.progress);
  const PlacementEvaluation e = evaluate_placement(
      plan, trace, evaluate, {requests.balance, requests.tp_batch_tokens, scheduler, progress.callback()});
  const std::string fallback = token_identity_fallback(scheduler, plan, !trace.vocabulary().empty());
  const std::optional<ProfileOverlap> overlap =
      plan.profiled_on ? std::optional(profile_overlap(*plan.profiled_on, trace_content_hash(trace), evaluate,
                                                       trace.requests()))
                       : std::nullopt;
  // How far the evaluated requests route from those the placement was profiled on.
  std::optional<RoutingDrift> drift;
  if (!options.profile.empty()) {
    drift = routing_drift(RoutingCounts::of(RoutingProfile::load(options.profile)), trace, evaluate);
  } else if (!evaluate.empty()) {
    std::vector<bool> profiled(evaluate.size());
    for (std::size_t r = 0; r < evaluate.size(); ++r) profiled[r] = !evaluate[r];
    drift = routing_drift(RoutingCounts::of(trace, profiled), trace, evaluate);
  }
  const std::optional<LarUpperBound> bound =
      options.bound ? std::optional(bound_for(requests, options.effort, trace, evaluate,
                                              plan.placement.devices, progress.callback()))
                    : std::nullopt;
  progress.finish();

  // Bytes need the model: the preset the trace was checked against.
  const MoeModel model = model_preset(trace.header().model);
  const Precision precision;
  const double dispatch_bytes = model.hidden * (1.0 + 4.0 / 128);  // FP8 + a 4-byte scale per 128 elements
  const double combine_bytes = model.hidden * precision.activation_bytes;
  const double a2a_tp = static_cast<double>(e.remote_copies_tp) * (dispatch_bytes + combine_bytes);
  const double a2a_dp = static_cast<double>(e.remote_copies_dp) * (dispatch_bytes + combine_bytes);
  const long long extra_slots = extra_slots_on_fullest_device(plan.placement);
  const double replica_bytes =
      static_cast<double>(extra_slots) * static_cast<double>(expert_params(model)) * precision.weight_bytes;

  if (options.json) {
    nlohmann::ordered_json j;
    j["lar_dp"] = e.lar_dp;
    j["lar_tp"] = e.lar_tp;
    j["imbalance_dp"] = e.imbalance_dp;
    j["imbalance_tp"] = e.imbalance_tp;
    j["solver_seconds"] = plan.solver_seconds;
    if (bound) add_bound(j, *bound, options.effort);
    j["lar_tp_hindsight"] = e.lar_tp_hindsight;
    j["lar_dp_hindsight"] = e.lar_dp_hindsight;
    j["policy"] = plan.policy.name;
    j["request_scheduling"] = scheduler.name;
    j["devices"] = plan.placement.devices;
    j["requests"] = e.requests;
    j["tokens"] = e.tokens;
    j["activations"] = e.activations;
    j["lar_tp_unaligned"] = e.lar_tp_unaligned;
    j["lar_tp_positional"] = e.lar_tp_positional;
    j["imbalance_tp_unaligned"] = e.imbalance_tp_unaligned;
    j["imbalance_tp_max"] = e.imbalance_tp_max;
    j["expert_imbalance"] = e.expert_imbalance;
    j["a2a_bytes_tp"] = a2a_tp;
    j["a2a_bytes_dp"] = a2a_dp;
    j["replica_slots_extra"] = extra_slots;
    j["replica_bytes_extra"] = replica_bytes;
    j["tp_by_token_table"] = e.tp_by_token_table;
    j["tp_by_inter_layer"] = e.tp_by_inter_layer;
    j["tp_unpredicted"] = e.tp_unpredicted;
    j["dp_scheduling_fallback"] = fallback;
    j["routing_drift"] = routing_drift_json(drift);
    j["token_table"] = token_table_json(e.token_table);
    j["profile_overlap"] = profile_overlap_json(overlap);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: policy {}, {} devices, solver {:.3f} s\n", options.plan, plan.policy.name,
                           plan.placement.devices, plan.solver_seconds);
  std::cout << fmt::format(
      "{}: {} requests{}, {} tokens, {} routed activations\n", requests.trace, e.requests,
      requests.split > 0 ? fmt::format(" held out (split {}, seed {})", requests.split, requests.seed)
                         : std::string(),
      e.tokens, e.activations);
  std::cout << fmt::format(
      "                         TP style (per token, layer)   DP style (per request, {})\n", scheduler.name);
  std::cout << fmt::format("LAR                      {:<29.4f} {:.4f}\n", e.lar_tp, e.lar_dp);
  std::cout << fmt::format("LAR with hindsight       {:<29.4f} {:.4f}\n", e.lar_tp_hindsight,
                           e.lar_dp_hindsight);
  if (bound) {
    std::cout << fmt::format("upper bound on LAR       {:<29.4f} {:.4f}\n", bound->tp, bound->dp);
    std::cout << fmt::format("fraction of the bound    {:<29.3f} {:.3f}\n", e.lar_tp / bound->tp,
                             e.lar_dp / bound->dp);
  }
  std::cout << fmt::format("token load imbalance     {:<29.3f} {:.3f}\n", e.imbalance_tp, e.imbalance_dp);
  std::cout << fmt::format("remote A2A bytes         {:<29.4g} {:.4g}\n", a2a_tp, a2a_dp);
  std::cout << fmt::format(
      "TP before alignment: LAR {:.4f}, imbalance {:.3f}; devices from T {:.1f}%, A {:.1f}%, "
      "none {:.1f}%\n",
      e.lar_tp_unaligned, e.imbalance_tp_unaligned, 100 * e.tp_by_token_table, 100 * e.tp_by_inter_layer,
      100 * e.tp_unpredicted);
  std::cout << fmt::format(
      "expert-side load imbalance {:.3f}; replica memory +{} expert slots on the fullest device "
      "({:.3g} GB)\n",
      e.expert_imbalance, extra_slots, replica_bytes / 1e9);
  if (!fallback.empty()) std::cout << "DP style without token identities: " << fallback << "\n";
  std::cout << routing_drift_text(routing_drift_json(drift));
  std::cout << token_table_text(token_table_json(e.token_table));
  std::cout << profile_overlap_text(profile_overlap_json(overlap));
  return 0;
}

int place_bound_command(const PlaceBoundOptions& options) {
  const RoutingTrace trace = load_trace(options.requests.trace);
  if (options.ep <= 0 || trace.header().experts % options.ep != 0)
    throw InputError(
        fmt::format("--ep {}: must divide the trace's {} experts", options.ep, trace.header().experts));
  const std::vector<bool> evaluate = evaluated_mask(options.requests, trace);
  ProgressLine progress("place bound", options.progress);
  const LarUpperBound bound =
      bound_for(options.requests, options.effort, trace, evaluate, options.ep, progress.callback());
  progress.finish();
  if (options.json) {
    nlohmann::ordered_json j;
    add_bound(j, bound, options.effort);
    j["devices"] = options.ep;
    j["tokens"] = routed_tokens(trace, evaluate);
    j["upper_bound_tp_layer"] = bound.tp_layer;
    j["upper_bound_dp_layer"] = bound.dp_layer;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: upper bound on LAR with {} devices: TP style {:.4f}, DP style {:.4f}\n",
                           options.requests.trace, options.ep, bound.tp, bound.dp);
  for (std::size_t layer = 0; layer < bound.tp_layer.size(); ++layer)
    std::cout << fmt::format("  MoE layer {:>3}: TP {:.4f}  DP {:.4f}\n", layer, bound.tp_layer[layer],
                             bound.dp_layer[layer]);
  return 0;
}

// The engine formats `place export` and `place import` know.
void check_exchange_format(const std::string& format) {
  static const std::vector<std::string> formats{"sglang"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    throw InputError(fmt::format("--format '{}': unknown expert-location format{}; formats: {}", format,
                                 did_you_mean(format, formats), fmt::join(formats, ", ")));
}

int place_export_command(const PlaceExportOptions& options) {
  check_exchange_format(options.format);
  // SGLang reads --init-expert-location as a JSON file only when its name ends in .json (.pt is
  // torch.load, anything else is parsed as inline JSON).
  if (!options.out.ends_with(".json"))
    throw InputError(
        fmt::format("--out {}: SGLang reads an expert-location file as JSON only when its name "
                    "ends in .json",
                    options.out));
  const PlacementPlan plan = read_placement_file(options.plan);
  const MoeModel model = model_option(options.model);
  SglangExpertLocation location;
  try {
    location = sglang_expert_location(plan.placement, model);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", options.plan, e.what()));
  }
  write_atomically(options.out, [&](const std::string& path) { write_text_file(path, location.json); });

  const Placement& p = plan.placement;
  const int dense = model.layers - model.moe_layers();
  std::cout << fmt::format(
      "{}: {} as SGLang expert locations for {}: {} layers ({} MoE{}) x {} physical experts ({} GPUs x {} "
      "slots, {} redundant)\n",
      options.out, options.plan, model.name, model.layers, p.moe_layers,
      dense > 0 ? fmt::format(", {} dense with SGLang's trivial map", dense) : "",
      p.devices * location.slots_per_gpu, p.devices, location.slots_per_gpu, location.redundant_experts);
  std::cout << fmt::format(
      "start SGLang with: --ep-size {} --ep-num-redundant-experts {}{} --init-expert-location {}\n",
      p.devices, location.redundant_experts,
      p.devices_per_node < p.devices ? fmt::format(" --nnodes {}", p.devices / p.devices_per_node) : "",
      options.out);
  std::vector<std::string> left_out;
  if (!plan.token_devices.empty()) left_out.push_back("the token->device table T/T_p");
  if (!plan.inter_layer.empty()) left_out.push_back("the inter-layer table A/A_p");
  if (!left_out.empty())
    std::cout << fmt::format(
        "not exported: {} (Sem-MoE's online scheduling; SGLang's format holds the expert slots only, and "
        "SGLang picks among replicas by its --ep-dispatch-algorithm)\n",
        fmt::join(left_out, " and "));
  return 0;
}

int place_import_command(const PlaceImportOptions& options) {
  check_exchange_format(options.format);
  if (options.file.ends_with(".pt"))
    throw InputError(options.file + ": SGLang's .pt form (torch.save) is not read; save the map as JSON");
  const MoeModel model = model_option(options.model);
  const int per_node = options.devices_per_node > 0 ? options.devices_per_node : options.ep;
  if (options.ep % per_node != 0)
    throw InputError(fmt::format("--devices-per-node {}: must divide --ep {}", per_node, options.ep));
  PlacementPlan plan;
  plan.policy.name = "sglang_import";
  plan.placement =
      placement_from_sglang(read_text_file(options.file), options.file, model, options.ep, per_node);
  if (!options.out.empty()) write_placement_file(plan, options.out);

  const Placement& p = plan.placement;
  const auto slots = static_cast<int>(p.slots[0][0].size());
  const int dense = model.layers - model.moe_layers();
  std::cout << fmt::format(
      "{}: SGLang expert locations for {}: {} MoE layers x {} experts on {} GPUs ({} slots each, {} "
      "redundant){}\n",
      options.file, model.name, p.moe_layers, p.experts, p.devices, slots, p.devices * slots - p.experts,
      dense == 0 ? ""
      : dense == 1
          ? "; the row of its dense layer is no placement and was only checked"
          : fmt::format("; the rows of its {} dense layers are no placements and were only checked", dense));
  std::cout << (options.out.empty() ? "checked only: --out writes it as a placement file\n"
                                    : fmt::format("wrote {} (policy sglang_import)\n", options.out));
  return 0;
}

// The evaluated requests and the bound's effort: the same options on `place eval` and `place bound`.
void add_evaluated_requests(CLI::App& command, EvaluatedRequests& requests, BoundEffort& effort) {
  command.add_option("--trace", requests.trace, "semsim trace whose requests are evaluated")->required();
  command
      .add_option("--split", requests.split,
                  "evaluate only the requests `semsim profile --split F --seed S` held out")
      ->check(real_range(0.01, 0.99));
  command.add_option("--seed", requests.seed, "seed of that split (default 1)")
      ->check(CLI::Range(0LL, 1LL << 62));
  command
      .add_option("--balance", requests.balance,
                  "DP style with hindsight, and the bound: request token load per device within this x mean "
                  "(default 1.10)")
      ->check(real_range(1.0, 100.0));
  command
      .add_option("--tp-batch", requests.tp_batch_tokens,
                  "TP style: tokens aligned to equal slices together (default 4096; 0: all at once)")
      ->check(CLI::Range(0, 1 << 30));
  command
      .add_option("--bound-rounds", effort.triangle_rounds,
                  "triangle-cut rounds of the LAR upper bound (default 2; 0: looser, much faster)")
      ->check(CLI::Range(0, 20));
  command.add_option("--threads", effort.threads, "layers bounded in parallel (default: every core)")
      ->check(CLI::Range(1, 1024));
}

}  // namespace

void add_place_commands(CommandLine& cli) {
  auto place = std::make_shared<PlaceOptions>();
  CLI::App* place_app =
      cli.add("place", "run a placement policy on a routing profile; write a placement file",
              [place] { return place_command(*place); });
  // Not required by CLI11: `place eval` and `place bound` take none of them (checked by place_command).
  place_app->add_option("--policy", place->policy, "placement policy (semsim list policies)");
  place_app->add_option("--profile", place->profile, "routing profile folder (semsim profile)");
  place_app->add_option("--ep", place->ep, "devices (EP size)")->check(CLI::Range(1, 32768));
  place_app
      ->add_option("--devices-per-node", place->devices_per_node, "devices per node (default: all in one)")
      ->check(CLI::Range(1, 32768));
  place_app->add_option("--model", place->model, "model preset: its expert groups (EPLB) and shape check");
  place_app->add_option("--param", place->params, "policy parameter key=value (repeatable)");
  place_app
      ->add_option("--lookback", place->lookback, "inter-layer table: previous layers per key (default 2)")
      ->check(CLI::Range(1, 4));
  place_app->add_option("--balance", place->balance, "token load tolerance of the token table (default 1.10)")
      ->check(real_range(1.0, 100.0));
  place_app->add_option("--out", place->out, "placement file to write (.gz: compressed)");
  add_progress_option(*place_app, place->progress);

  auto eval = std::make_shared<PlaceEvalOptions>();
  CLI::App* eval_app = cli.add(
      "eval", "LAR, imbalance, A2A bytes and LAR bounds of a placement file",
      [eval] { return place_eval_command(*eval); }, place_app);
  eval_app->add_option("placement", eval->plan, "placement file (semsim place)")->required();
  add_evaluated_requests(*eval_app, eval->requests, eval->effort);
  eval_app->add_option("--scheduler", eval->scheduler,
                       "DP style: the engine's request scheduler placing the requests (default semmoe_dp)");
  eval_app->add_option("--scheduler-param", eval->scheduler_params,
                       "request scheduler parameter key=value (repeatable)");
  eval_app->add_flag("!--no-bound", eval->bound, "skip the upper bound (semsim place bound gives it)");
  eval_app->add_flag("--json", eval->json, "print one JSON object instead of the table");
  eval_app->add_option(
      "--profile", eval->profile,
      "routing profile the placement came from, for the routing drift of the evaluated requests "
      "(default with --split: the trace's profiled requests)");
  add_progress_option(*eval_app, eval->progress);

  auto bound = std::make_shared<PlaceBoundOptions>();
  CLI::App* bound_app = cli.add(
      "bound", "upper bounds on the LAR any placement on --ep devices reaches on a trace's requests",
      [bound] { return place_bound_command(*bound); }, place_app);
  add_evaluated_requests(*bound_app, bound->requests, bound->effort);
  bound_app->add_option("--ep", bound->ep, "devices (EP size)")->required()->check(CLI::Range(1, 32768));
  bound_app->add_flag("--json", bound->json, "print one JSON object (with per-layer bounds)");
  add_progress_option(*bound_app, bound->progress);

  auto exported = std::make_shared<PlaceExportOptions>();
  CLI::App* export_app = cli.add(
      "export",
      "a placement file as a serving engine's expert-location file (SGLang's --init-expert-location)",
      [exported] { return place_export_command(*exported); }, place_app);
  export_app->add_option("placement", exported->plan, "placement file (semsim place)")->required();
  export_app->add_option("--format", exported->format, "expert-location format: sglang")->required();
  export_app->add_option("--model", exported->model, "model preset (the engine's file has a row per layer)")
      ->required();
  export_app->add_option("--out", exported->out, "expert-location file to write (.json)")->required();

  auto imported = std::make_shared<PlaceImportOptions>();
  CLI::App* import_app = cli.add(
      "import", "a serving engine's expert-location file as a placement file (checked against the model)",
      [imported] { return place_import_command(*imported); }, place_app);
  import_app->add_option("file", imported->file, "expert-location file (SGLang: .json)")->required();
  import_app->add_option("--format", imported->format, "expert-location format: sglang")->required();
  import_app->add_option("--model", imported->model, "model preset the file is for")->required();
  import_app->add_option("--ep", imported->ep, "GPUs (SGLang's --ep-size)")
      ->required()
      ->check(CLI::Range(1, 32768));
  import_app
      ->add_option("--devices-per-node", imported->devices_per_node, "GPUs per node (default: all in one)")
      ->check(CLI::Range(1, 32768));
  import_app->add_option("--out", imported->out,
                         "placement file to write (.gz: compressed); without it, only checks");
}

}  // namespace semsim
