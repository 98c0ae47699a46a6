#include "sim/run_plan.hpp"

#include "policies/policy_registry.hpp"
#include "workloads/workload.hpp"

namespace semsim {

Topology effective_topology(const Cluster& cluster, int devices, const CalibrationProfile& calibration) {
  Topology topology = Topology::build(cluster, devices);
  for (TopologyLink& link : topology.links)
    link.bandwidth *=
        link.level == LinkLevel::kScaleUp ? calibration.scaleup_efficiency : calibration.scaleout_efficiency;
  return topology;
}

Topology effective_topology(const Scenario& scenario) {
  return effective_topology(scenario.cluster, scenario.ep, *scenario.calibration);
}

DisaggregatedPlan build_disaggregated_run(const Scenario& scenario) {
  return {build_run(*scenario.disaggregation->prefill), build_run(*scenario.disaggregation->decode)};
}

RunPlan build_run(const Scenario& scenario) {
  ScenarioPlan planned = plan_scenario(scenario);
  RunPlan run;
  run.placement = std::move(planned.placement);
  run.memory = planned.memory;
  run.notes.routing_drift = planned.routing_drift;
  run.notes.token_table = planned.token_table;
  run.notes.profile_overlap = planned.profile_overlap;
  run.notes.group_limit = planned.group_limit;
  run.topology = effective_topology(scenario);
  run.routing = make_routing_source(scenario.workload, scenario.model);
  run.request_scheduler = make_request_scheduler(scenario.request_scheduling, *run.placement);
  run.token_scheduler = make_token_scheduler(scenario.token_scheduling, *run.placement, scenario.ep);
  run.notes.scheduling_fallback = token_identity_fallback(scenario.attention == AttentionMode::kTensorParallel
                                                              ? scenario.token_scheduling
                                                              : scenario.request_scheduling,
                                                          *run.placement, run.routing->has_token_ids());
  run.rank_model = std::make_unique<const MoeModel>(scenario.attention == AttentionMode::kTensorParallel
                                                        ? attention_tp_shard(scenario.model, scenario.tp)
                                                        : scenario.model);
  const bool experts_see_whole_batch = scenario.dispatch == DispatchMode::kAllGather;
  run.cost = std::make_unique<CalibratedCostModel>(
      scenario.model, scenario.cluster.device, *scenario.calibration, scenario.precision,
      scenario.calibration_extrapolation, experts_see_whole_batch);
  run.rank_cost = std::make_unique<CalibratedCostModel>(
      *run.rank_model, scenario.cluster.device, *scenario.calibration, scenario.precision,
      scenario.calibration_extrapolation, experts_see_whole_batch);
  const KernelLibrary library(*scenario.calibration, scenario.cluster.device,
                              scenario.calibration_extrapolation);
  run.deepep =
      DeepepTimes::make(library, *scenario.calibration, scenario.model, scenario.cluster, scenario.ep,
                        scenario.dispatch, {scenario.serving.ep_kernel}, run.notes.dispatch_kernel);
  if (run.deepep) run.notes.dispatch_kernel = run.deepep->description();
  if (scenario.attention == AttentionMode::kTensorParallel && scenario.ep > 1) {
    run.nccl = NcclTimes::make(*scenario.calibration, scenario.ep, scenario.cluster.gpus_per_node,
                               run.notes.tp_collectives);
    if (run.nccl) run.notes.tp_collectives = run.nccl->description();
  }
  return run;
}

}  // namespace semsim
