#pragma once
// summary.json: what ran, how far it got and at what rate, its latencies and what its steps spent
// their time on. Every summary has the same keys in the same order (the columns of points.csv).
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/memory_plan.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {

nlohmann::ordered_json summary_json(const Scenario& scenario, const MemoryPlan& memory,
                                    const Summary& summary);
// summary.json's values by dotted key path ("ttft_s.p99"), in its order, without wall_seconds (it
// differs between identical runs): the metric columns of points.csv and what `semsim compare` compares.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_summary(
    const nlohmann::ordered_json& summary);

// A distribution's statistics as summary.json writes them: null over an empty set, never 0.
nlohmann::ordered_json distribution_json(const Distribution& d);
// summary.json's and the bench_serving result's request_rate.
nlohmann::ordered_json request_rate_json(const Scenario& scenario);
// Their max_concurrency: a closed loop's workload.concurrency, else null.
nlohmann::ordered_json max_concurrency_json(const WorkloadSpec& workload);
// The nodes a server's serving group fills (its devices over devices per node, a fraction when it
// is part of one): what per-node throughput divides by. Nodes the group leaves idle do not count.
double ep_nodes(const Scenario& scenario);

}  // namespace semsim
