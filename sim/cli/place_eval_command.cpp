// `semsim place eval` (LAR, imbalance, A2A bytes, replica memory and the LAR upper bounds of a
// placement file on a trace's requests) and `semsim place bound` (the bounds alone). The logic is in
// policies/analysis/; this is the command line and what it prints.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "models/input_error.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"
#include "policies/analysis/lar_upper_bound.hpp"
#include "policies/analysis/placement_evaluation.hpp"
#include "policies/placement_file.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/run_notes.hpp"
#include "workloads/routing_drift.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

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

// How far the evaluated requests route from those the placement was profiled on: those of
// `profile`, else (with --split) the trace's other requests; not measured without either.
std::optional<RoutingDrift> evaluated_drift(const std::string& profile, const RoutingTrace& trace,
                                            const std::vector<bool>& evaluate) {
  if (!profile.empty())
    return routing_drift(RoutingCounts::of(RoutingProfile::load(profile)), trace, evaluate);
  if (evaluate.empty()) return std::nullopt;
  std::vector<bool> profiled(evaluate.size());
  for (std::size_t r = 0; r < evaluate.size(); ++r) profiled[r] = !evaluate[r];
  return routing_drift(RoutingCounts::of(trace, profiled), trace, evaluate);
}

// Everything `place eval` prints, as JSON or as a table.
struct PlaceEvalReport {
  PlacementPlan plan;
  PolicyChoice scheduler;
  PlacementEvaluation evaluation;
  std::string fallback;  // how the DP style schedules without token identities; "" when it has them
  std::optional<ProfileOverlap> overlap;
  std::optional<RoutingDrift> drift;
  std::optional<LarUpperBound> bound;
  double a2a_tp = 0, a2a_dp = 0;  // remote all-to-all bytes
  long long extra_slots = 0;      // of replicas, on the fullest device
  double replica_bytes = 0;
};

PlaceEvalReport evaluate_plan(const PlaceEvalOptions& options) {
  PlaceEvalReport r;
  r.plan = read_placement_file(options.plan);
  const PlacementPlan& plan = r.plan;
  // The bound is over placements of N/D experts per device: a plan of redundant slots at an EP size
  // that does not divide the experts has none to be read against.
  if (options.bound && plan.placement.experts % plan.placement.devices != 0)
    throw InputError(fmt::format(
        "{}: {} devices do not divide the {} experts, and the LAR upper bound is over placements of N/D "
        "experts per device: evaluate with --no-bound",
        options.plan, plan.placement.devices, plan.placement.experts));
  const EvaluatedRequests& requests = options.requests;
  const RoutingTrace trace = moe_trace(requests.trace, "place eval");
  const std::vector<bool> evaluate = evaluated_mask(requests, trace);
  r.scheduler = policy_option("--scheduler", PolicyKind::kRequestScheduling, options.scheduler,
                              "--scheduler-param", options.scheduler_params);
  ProgressLine progress("place eval", options.progress);
  try {
    r.evaluation =
        evaluate_placement(plan, trace, evaluate,
                           {requests.balance, requests.tp_batch_tokens, r.scheduler, progress.callback()});
  } catch (const InputError& e) {
    // A plan and a trace that do not fit each other (another model's): the error names both.
    throw InputError(fmt::format("{} with trace {} (model {}): {}", options.plan, requests.trace,
                                 trace.header().model, e.what()),
                     e.key_path());
  }
  r.fallback = token_identity_fallback(r.scheduler, plan, !trace.vocabulary().empty());
  if (plan.profiled_on)
    r.overlap = profile_overlap(*plan.profiled_on, trace_content_hash(trace), evaluate, trace.requests());
  r.drift = evaluated_drift(options.profile, trace, evaluate);
  if (options.bound)
    r.bound =
        bound_for(requests, options.effort, trace, evaluate, plan.placement.devices, progress.callback());
  progress.finish();

  // Bytes need the model: the preset the trace was checked against.
  const MoeModel model = model_preset(trace.header().model);
  const Precision precision;
  const double dispatch_bytes = model.hidden * kFp8BlockScaledBytes;
  const double combine_bytes = model.hidden * precision.activation_bytes;
  r.a2a_tp = static_cast<double>(r.evaluation.remote_copies_tp) * (dispatch_bytes + combine_bytes);
  r.a2a_dp = static_cast<double>(r.evaluation.remote_copies_dp) * (dispatch_bytes + combine_bytes);
  r.extra_slots = extra_slots_on_fullest_device(plan.placement);
  r.replica_bytes = static_cast<double>(r.extra_slots) * static_cast<double>(expert_params(model)) *
                    precision.expert_weight_bytes();
  return r;
}

void print_report_json(const PlaceEvalOptions& options, const PlaceEvalReport& r) {
  const PlacementPlan& plan = r.plan;
  const PlacementEvaluation& e = r.evaluation;
  nlohmann::ordered_json j;
  j["lar_dp"] = e.lar_dp;
  j["lar_tp"] = e.lar_tp;
  j["imbalance_dp"] = e.imbalance_dp;
  j["imbalance_tp"] = e.imbalance_tp;
  j["solver_seconds"] = plan.solver_seconds;
  if (r.bound) add_bound(j, *r.bound, options.effort);
  j["lar_tp_hindsight"] = e.lar_tp_hindsight;
  j["lar_dp_hindsight"] = e.lar_dp_hindsight;
  j["policy"] = plan.policy.name;
  j["request_scheduling"] = r.scheduler.name;
  j["devices"] = plan.placement.devices;
  j["requests"] = e.requests;
  j["tokens"] = e.tokens;
  j["activations"] = e.activations;
  j["lar_tp_unaligned"] = e.lar_tp_unaligned;
  j["lar_tp_positional"] = e.lar_tp_positional;
  j["imbalance_tp_unaligned"] = e.imbalance_tp_unaligned;
  j["imbalance_tp_max"] = e.imbalance_tp_max;
  j["expert_imbalance"] = e.expert_imbalance;
  j["a2a_bytes_tp"] = r.a2a_tp;
  j["a2a_bytes_dp"] = r.a2a_dp;
  j["replica_slots_extra"] = r.extra_slots;
  j["replica_bytes_extra"] = r.replica_bytes;
  j["tp_by_token_table"] = e.tp_by_token_table;
  j["tp_by_inter_layer"] = e.tp_by_inter_layer;
  j["tp_unpredicted"] = e.tp_unpredicted;
  j["dp_scheduling_fallback"] = r.fallback;
  j["routing_drift"] = routing_drift_json(r.drift);
  j["token_table"] = token_table_json(e.token_table);
  j["profile_overlap"] = profile_overlap_json(r.overlap);
  std::cout << j.dump(2) << "\n";
}

void print_report_table(const PlaceEvalOptions& options, const PlaceEvalReport& r) {
  const EvaluatedRequests& requests = options.requests;
  const PlacementPlan& plan = r.plan;
  const PlacementEvaluation& e = r.evaluation;
  std::cout << fmt::format("{}: policy {}, {} devices, solver {:.3f} s\n", options.plan, plan.policy.name,
                           plan.placement.devices, plan.solver_seconds);
  std::cout << fmt::format(
      "{}: {} requests{}, {} tokens, {} routed activations\n", requests.trace, e.requests,
      requests.split > 0 ? fmt::format(" held out (split {}, seed {})", requests.split, requests.seed)
                         : std::string(),
      e.tokens, e.activations);
  std::cout << fmt::format(
      "                         TP style (per token, layer)   DP style (per request, {})\n",
      r.scheduler.name);
  std::cout << fmt::format("LAR                      {:<29.4f} {:.4f}\n", e.lar_tp, e.lar_dp);
  std::cout << fmt::format("LAR with hindsight       {:<29.4f} {:.4f}\n", e.lar_tp_hindsight,
                           e.lar_dp_hindsight);
  if (r.bound) {
    std::cout << fmt::format("upper bound on LAR       {:<29.4f} {:.4f}\n", r.bound->tp, r.bound->dp);
    std::cout << fmt::format("fraction of the bound    {:<29.3f} {:.3f}\n", e.lar_tp / r.bound->tp,
                             e.lar_dp / r.bound->dp);
  }
  std::cout << fmt::format("token load imbalance     {:<29.3f} {:.3f}\n", e.imbalance_tp, e.imbalance_dp);
  std::cout << fmt::format("remote A2A bytes         {:<29.4g} {:.4g}\n", r.a2a_tp, r.a2a_dp);
  std::cout << fmt::format(
      "TP before alignment: LAR {:.4f}, imbalance {:.3f}; devices from T {:.1f}%, A {:.1f}%, "
      "none {:.1f}%\n",
      e.lar_tp_unaligned, e.imbalance_tp_unaligned, 100 * e.tp_by_token_table, 100 * e.tp_by_inter_layer,
      100 * e.tp_unpredicted);
  std::cout << fmt::format(
      "expert-side load imbalance {:.3f}; replica memory +{} expert slots on the fullest device "
      "({:.3g} GB)\n",
      e.expert_imbalance, r.extra_slots, r.replica_bytes / 1e9);
  if (!r.fallback.empty()) std::cout << "DP style without token identities: " << r.fallback << "\n";
  std::cout << routing_drift_text(routing_drift_json(r.drift));
  std::cout << token_table_text(token_table_json(e.token_table));
  std::cout << profile_overlap_text(profile_overlap_json(r.overlap));
}

int place_eval_command(const PlaceEvalOptions& options) {
  const PlaceEvalReport report = evaluate_plan(options);
  if (options.json)
    print_report_json(options, report);
  else
    print_report_table(options, report);
  return 0;
}

int place_bound_command(const PlaceBoundOptions& options) {
  const RoutingTrace trace = moe_trace(options.requests.trace, "place bound");
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

void add_place_eval_commands(CommandLine& cli, CLI::App* place_app) {
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
}

}  // namespace semsim
