// Engine tests simulate in a child process (SimGrid's engine is one per process) and compare what
// they extract from the result as JSON.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "sim/run_plan.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

namespace semsim::test {

// Simulates `scenario` in a child process and returns what `extract` makes of the result.
inline nlohmann::json simulate_isolated(const Scenario& scenario,
                                        const std::function<nlohmann::json(const RunResult&)>& extract) {
  return nlohmann::json::parse(
      run_isolated([&] { return extract(simulate(scenario, build_run(scenario))).dump(); }));
}

}  // namespace semsim::test
