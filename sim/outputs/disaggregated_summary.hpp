#pragma once
// A disaggregated run's summary.json: the requests end to end (TTFT through the prefill pool and
// the KV transfer) over the decode pool's summary keys, its step and MoE values the decode pool's,
// then `disaggregation` with the KV transfers and each pool's own summary (throughput per node,
// busy share, saturated window).
#include <nlohmann/json.hpp>

#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"

namespace semsim {

nlohmann::ordered_json disaggregated_summary_json(const Scenario& scenario, const DisaggregatedPlan& plan,
                                                  const DisaggregatedResult& run, const GoodputSlos& slos);

}  // namespace semsim
