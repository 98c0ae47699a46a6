#pragma once
// `semsim run --result-json`: the run as SGLang's / vLLM's bench_serving save it.
#include <nlohmann/json.hpp>

#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {

// Their result keys (both names where they differ), statistics in ms (null over an empty set), the
// per-request details.
nlohmann::ordered_json bench_serving_json(const Scenario& scenario, const RunResult& run,
                                          const Summary& summary);

}  // namespace semsim
