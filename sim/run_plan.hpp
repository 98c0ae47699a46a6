#pragma once
// Everything one simulation needs, made once from a validated scenario: the placement plan, the
// memory plan, the request and token schedulers, the routing source, the cost models and the
// topology. `check`, `run` and every sweep point call build_run exactly once, inside the process
// that simulates (a sweep's parent only validates its points). Needs no SimGrid engine.
#include <memory>
#include <optional>
#include <string>

#include "policies/request_scheduling.hpp"
#include "policies/token_scheduling.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/dispatch_timing.hpp"
#include "sim/memory_plan.hpp"
#include "sim/nccl_collectives.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

struct RunPlan {
  std::shared_ptr<const PlacementPlan> placement;
  MemoryPlan memory;
  Topology topology;  // the EP group's, link bandwidths scaled by the calibration's achievable fractions
  // Shared by a deployment's instances (build_deployment_run): the same for each of them.
  std::shared_ptr<const RoutingSource> routing;
  std::unique_ptr<RequestScheduler> request_scheduler;
  std::unique_ptr<TokenScheduler> token_scheduler;
  // Under Attention-TP each rank computes its shard of attention, dense FFN and LM head
  // (`rank_cost`, over `rank_model`); `cost` prices the MoE layer, over `expert_model`: the model, or
  // with experts split by tensor parallelism each device's slice of them (experts_tp_shard).
  // Shared by a deployment's instances, with the cost models' memos.
  std::shared_ptr<const MoeModel> rank_model, expert_model;
  std::shared_ptr<CalibratedCostModel> cost, rank_cost;
  // Speculative decoding with a draft model (serving.speculative method draft): its costs on a rank.
  std::shared_ptr<CalibratedCostModel> draft_cost;
  // What the dispatch and combine move and what times them (DeepEP's kernels where the profile
  // measured them for this group).
  DispatchTiming dispatch;
  // Under Attention-TP, NCCL's measured fits time its collectives where the profile has them.
  std::optional<NcclTimes> nccl;
  RunNotes notes;  // what times dispatch and the collectives; the schedulers' token-identity fallback
};

// What prices a run's MoE layers, for build_run and the pricing of cost-scored placements
// (sim/placement_scoring.hpp): the model each device's experts are (the model, or with experts split
// by tensor parallelism its slice of them), the scenario's calibrated cost model over `model`, and
// what times its dispatch and combine.
MoeModel expert_model(const Scenario& scenario);
std::unique_ptr<CalibratedCostModel> cost_model(const Scenario& scenario, const MoeModel& model);
DispatchTiming dispatch_timing(const Scenario& scenario);

// The topology the scenario's EP group runs on, with link bandwidths scaled by the calibration
// profile's achievable fractions.
Topology effective_topology(const Scenario& scenario);
// That of the first `devices` of `cluster`.
Topology effective_topology(const Cluster& cluster, int devices, const CalibrationProfile& calibration);

// Runs the scenario's placement policy (CBC, METIS, co-clustering: possibly seconds) or takes its
// placement file's plan, checks the policies that need the plan, plans memory (weights, with
// replicas' slots, plus one longest request's KV cache must fit), and makes the rest. InputError at
// the scenario's keys when the placement cannot be made or does not fit in memory. The plan refers
// to `scenario`, which must outlive it.
// `like`: a plan of another instance of the same deployment, whose routing source and cost models this
// one shares (instances differ only in their policies and profile keys, which neither reads): each
// synthetic routing table is drawn once and each kernel time looked up once for all of them.
RunPlan build_run(const Scenario& scenario, const RunPlan* like = nullptr);

// A disaggregated scenario's pools, each built as build_run builds a scenario.
struct DisaggregatedPlan {
  RunPlan prefill, decode;
};
DisaggregatedPlan build_disaggregated_run(const Scenario& scenario);

// A deployment's instances (scenario.deployment), each built as build_run builds a scenario. A
// disaggregated instance's plan is its prefill pool's, where its requests arrive (the router reads its
// placement), with its decode pool's beside it.
struct DeploymentPlan {
  std::vector<RunPlan> instances;
  std::vector<RunPlan> decode;  // per instance when disaggregated; empty otherwise
};
DeploymentPlan build_deployment_run(const Scenario& scenario);

}  // namespace semsim
