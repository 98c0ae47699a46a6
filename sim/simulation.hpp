#pragma once
// One simulation, end to end: scenario in, run result out. SimGrid allows one Engine per process,
// so `simulate` must run in a process of its own (see run_isolated).
#include "sim/dp_serving_loop.hpp"
#include "sim/run_plan.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"

namespace semsim {

// Builds the platform and the policies, runs the serving loop in a SimGrid actor, returns what
// happened (with per-device phase spans of the steps in `timeline`), telling `progress` how far the
// serving loop got. Creates a SimGrid Engine: call at most once per process.
RunResult simulate(const Scenario& scenario, const RunPlan& run, StepWindow timeline = {},
                   const ServingProgress& progress = {});

}  // namespace semsim
