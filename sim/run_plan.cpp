#include "sim/run_plan.hpp"

#include <fmt/format.h>

#include "policies/policy_registry.hpp"
#include "sim/placement_scoring.hpp"
#include "sim/scenario_checks.hpp"
#include "sim/scenario_overrides.hpp"
#include "workloads/synthetic_routing.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

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
// A dense model's plan is empty: no MoE layer, no expert slot.
std::shared_ptr<const PlacementPlan> place(const YamlInput& root, const Scenario& s,
                                           const std::optional<RoutingProfile>& profile) {
  if (s.placement_from_file) return s.placement_from_file;
  if (s.model.dense()) {
    PlacementPlan empty;
    empty.policy = s.placement;
    empty.placement.devices = s.ep;
    empty.placement.devices_per_node = placement_devices_per_node(s);
    empty.placement.seal();
    return std::make_shared<const PlacementPlan>(std::move(empty));
  }
  PlacementInput input{s.model.moe_layers(),          s.model.routed_experts, s.expert_ranks(),
                       placement_devices_per_node(s), s.model.expert_groups,  profile ? &*profile : nullptr};
  std::shared_ptr<const PlacementPlan> plan;
  try {
    // A cost-scored policy prices its candidates as this run will price its steps.
    std::optional<ScenarioPlacementScoring> scoring;
    if (policy_entry(PolicyKind::kPlacement, s.placement.name).requirements.needs_scoring) {
      scoring = placement_scoring(s);
      input.scoring = &scoring->scoring;
    }
    plan = std::make_shared<const PlacementPlan>(make_placement_plan(input, s.placement));
  } catch (const InputError& e) {
    policy_key(root, PolicyKind::kPlacement).fail(e.what());
  }
  check_policies_on_plan(root, s, *plan);
  return plan;
}

// The planning stage: the placement (with its token table matched to the routed vocabulary), the
// memory it leaves, and what the run's notes say of the plan against the replayed trace.
void plan_placement_and_memory(const Scenario& s, RunPlan& run) {
  const YamlInput& root = *s.document;
  check_run_memory(root, s);  // before anything of the size it checks is made
  check_run_work(root, s);
  const std::optional<RoutingProfile> profile = load_profile(root, s);
  run.placement = place(root, s, profile);
  if (!run.placement->token_devices.empty()) {
    TokenTableMatch match;
    run.placement = plan_for_vocabulary(run.placement, routed_vocabulary(s), match);
    run.notes.token_table = match;
  }
  run.memory = plan_memory(root, s, run.placement->placement);
  if (run.placement->profiled_on && s.workload.trace)
    run.notes.profile_overlap = profile_overlap(*run.placement->profiled_on, s.workload.trace_hash,
                                                replayed_requests(s.workload), s.workload.trace_requests);
  // A replayed trace against the profile the placement came from: is the placement stale?
  if (profile && s.workload.trace)
    run.notes.routing_drift = routing_drift(RoutingCounts::of(*profile), *s.workload.trace);
  if (s.workload.trace && s.model.group_limited())
    run.notes.group_limit = check_group_limit(*s.workload.trace, ExpertGroupLimit::of(s.model));
}

}  // namespace

Topology effective_topology(const Cluster& cluster, int devices, const CalibrationProfile& calibration) {
  Topology topology = Topology::build(cluster, devices);
  for (TopologyLink& link : topology.links)
    link.bandwidth *=
        link.level == LinkLevel::kScaleUp ? calibration.scaleup_efficiency : calibration.scaleout_efficiency;
  return topology;
}

MoeModel expert_model(const Scenario& scenario) {
  return experts_tp_shard(scenario.model, scenario.moe_tp);
}

std::unique_ptr<CalibratedCostModel> cost_model(const Scenario& scenario, const MoeModel& model) {
  // Split by tensor parallelism, every device's slices of the experts are given every token.
  const bool experts_see_whole_batch =
      scenario.dispatch == DispatchMode::kAllGather || scenario.experts_tensor_parallel();
  return std::make_unique<CalibratedCostModel>(model, scenario.cluster.device, *scenario.calibration,
                                               scenario.precision, scenario.calibration_extrapolation,
                                               experts_see_whole_batch);
}

DispatchTiming dispatch_timing(const Scenario& scenario) {
  if (scenario.model.dense() || scenario.experts_tensor_parallel())  // nothing to dispatch
    return DispatchTiming(scenario.dispatch);
  const KernelLibrary library(*scenario.calibration, scenario.cluster.device,
                              scenario.calibration_extrapolation);
  return DispatchTiming::resolve(library, *scenario.calibration, scenario.model, scenario.cluster,
                                 scenario.ep, scenario.dispatch, {scenario.serving.ep_kernel});
}

Topology effective_topology(const Scenario& scenario) {
  return effective_topology(scenario.cluster, scenario.ep, *scenario.calibration);
}

DisaggregatedPlan build_disaggregated_run(const Scenario& scenario) {
  return {build_run(*scenario.disaggregation->prefill), build_run(*scenario.disaggregation->decode)};
}

DeploymentPlan build_deployment_run(const Scenario& scenario) {
  const Deployment& deployment = *scenario.deployment;
  DeploymentPlan plan;
  for (const auto& instance : deployment.instance) {
    if (!instance->disaggregation) {
      plan.instances.push_back(
          build_run(*instance, plan.instances.empty() ? nullptr : &plan.instances.front()));
      continue;
    }
    const Disaggregation& pools = *instance->disaggregation;
    plan.instances.push_back(
        build_run(*pools.prefill, plan.instances.empty() ? nullptr : &plan.instances.front()));
    plan.decode.push_back(build_run(*pools.decode, plan.decode.empty() ? nullptr : &plan.decode.front()));
  }
  if (router_of(deployment.router).affinity != AffinityInput::kPromptEstimate) return plan;
  for (std::size_t i = 0; i < plan.instances.size(); ++i)
    if (plan.instances[i].placement->token_devices.empty())
      throw InputError(
          fmt::format("{}: {}: router '{}' estimates affinity from each instance's token→device "
                      "table; instance {}'s placement has none (give it a placement made from a "
                      "routing profile with token identities)",
                      deployment.router.location, deployment.router.key_path, deployment.router.name, i),
          deployment.router.key_path);
  return plan;
}

RunPlan build_run(const Scenario& scenario, const RunPlan* like) {
  RunPlan run;
  try {
    plan_placement_and_memory(scenario, run);
  } catch (const InputError& e) {
    rethrow_with_origin(e, scenario.overrides);
  }
  run.topology = effective_topology(scenario);
  if (like)
    run.routing = like->routing;
  else
    run.routing = make_routing_source(scenario.workload, scenario.model);
  run.request_scheduler = make_request_scheduler(scenario.request_scheduling, *run.placement);
  run.token_scheduler = make_token_scheduler(scenario.token_scheduling, *run.placement, scenario.ep);
  run.notes.scheduling_fallback = token_identity_fallback(scenario.attention == AttentionMode::kTensorParallel
                                                              ? scenario.token_scheduling
                                                              : scenario.request_scheduling,
                                                          *run.placement, run.routing->has_token_ids());
  if (like) {
    run.rank_model = like->rank_model;
    run.expert_model = like->expert_model;
    run.cost = like->cost;
    run.rank_cost = like->rank_cost;
    run.draft_cost = like->draft_cost;
  } else {
    run.rank_model = std::make_unique<const MoeModel>(scenario.attention == AttentionMode::kTensorParallel
                                                          ? attention_tp_shard(scenario.model, scenario.tp)
                                                          : scenario.model);
    run.expert_model = std::make_unique<const MoeModel>(expert_model(scenario));
    run.cost = cost_model(scenario, *run.expert_model);
    run.rank_cost = cost_model(scenario, *run.rank_model);
    if (const auto& draft = scenario.serving.speculative.draft_model)
      run.draft_cost = std::make_unique<CalibratedCostModel>(*draft, scenario.cluster.device,
                                                             *scenario.calibration, scenario.precision,
                                                             scenario.calibration_extrapolation, false);
  }
  run.dispatch = dispatch_timing(scenario);
  run.notes.dispatch_kernel = scenario.model.dense()               ? "none (dense model)"
                              : scenario.experts_tensor_parallel() ? "none (experts split over every device)"
                                                                   : run.dispatch.description();
  const bool shard_collectives =
      scenario.attention == AttentionMode::kTensorParallel || scenario.experts_tensor_parallel();
  if (shard_collectives && scenario.ep > 1) {
    run.nccl = NcclTimes::make(*scenario.calibration, scenario.ep, scenario.cluster.gpus_per_node,
                               run.notes.tp_collectives);
    if (run.nccl) run.notes.tp_collectives = run.nccl->description();
  }
  return run;
}

}  // namespace semsim
