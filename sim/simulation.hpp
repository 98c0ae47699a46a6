#pragma once
// One simulation, end to end: scenario in, run result out. SimGrid allows one Engine per process,
// so `simulate` must run in a process of its own (see run_isolated).
#include "sim/dp_serving_loop.hpp"
#include "sim/kv_transfer.hpp"
#include "sim/run_plan.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"

namespace semsim {

// Builds the platform and the policies, runs the serving loop in a SimGrid actor, returns what
// happened (with per-device phase spans of the steps in `timeline`), telling `progress` how far the
// serving loop got, and with `exported` steps (count > 0) the work of those steps in
// RunResult::exported_steps. Creates a SimGrid Engine: call at most once per process.
RunResult simulate(const Scenario& scenario, const RunPlan& run, StepWindow timeline = {},
                   const ServingProgress& progress = {}, StepWindow exported = {});

// A disaggregated run (scenario.disaggregation): each pool's loop in its own actor on its nodes, the
// KV caches moving between them (sim/kv_transfer.hpp). The decode pool's requests are the run's end
// to end: arrival at the prefill pool, first token when the KV cache lands, finish at the last
// decode. `progress` hears the decode loop. Creates a SimGrid Engine: call at most once per process.
struct DisaggregatedResult {
  RunResult prefill, decode;
  std::vector<KvTransferRecord> transfers;
};
DisaggregatedResult simulate_disaggregated(const Scenario& scenario, const DisaggregatedPlan& plan,
                                           const ServingProgress& progress = {});
// The requests of a disaggregated run end to end: the decode pool's records with both pools' tokens.
RunResult end_to_end(const DisaggregatedResult& run);

// A deployment's run (scenario.deployment): each instance's loop in its own actor on its nodes, fed
// by the router's actor (sim/instance_router.hpp); a disaggregated instance's two pools each in its
// own, the router feeding its prefill pool and hearing of finishes from its decode pool. Instance i's
// result (a disaggregated instance's end to end) holds the records of every request, those sent
// elsewhere unarrived. `progress` hears the requests completed over all
// instances. Creates a SimGrid Engine: call at most once per process.
struct DeploymentResult {
  std::vector<RunResult> instances;
  std::vector<int> instance_of;  // per request: its instance (-1: never sent)
};
DeploymentResult simulate_deployment(const Scenario& scenario, const DeploymentPlan& plan,
                                     const ServingProgress& progress = {});

}  // namespace semsim
