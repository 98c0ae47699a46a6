#pragma once
// A deployment's outputs: its instances merged into one run (the totals: every request, every
// instance's steps in turn) and summary.json, the totals' keys then `deployment` with the router and
// each instance's own summary (requests, throughput, LAR, latencies, saturated window).
#include <nlohmann/json.hpp>

#include "sim/memory_plan.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"

namespace semsim {

// Every request's record from the instance that served it (step indices into the merged steps),
// the instances' steps one after another (RunResult::step_instance names each one's), layer totals
// summed with the instances' devices side by side, token counts summed.
RunResult merged_deployment(const DeploymentResult& run);

// Instance `i`'s run with only the requests sent to it.
RunResult instance_run(const DeploymentResult& run, int i);

// summary.json: summary_json of the merged run, whose saturated window is the instances' summed (their
// rates add: they run side by side; null unless every instance saturated), then `deployment`.
// `memory`: an instance's memory plan (every instance has the same).
nlohmann::ordered_json deployment_summary_json(const Scenario& scenario, const MemoryPlan& memory,
                                               const DeploymentResult& run, const GoodputSlos& slos);

}  // namespace semsim
