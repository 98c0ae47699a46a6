#pragma once
// Serving under Attention-DP: one queue per DP rank, continuous batching with a per-rank token
// budget and chunked prefill, KV-cache admission control, and lockstep steps across all ranks
// (an idle rank still joins every collective).
#include "policies/placement.hpp"
#include "policies/request_scheduling.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/step_pipeline.hpp"
#include "workloads/request.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

// Runs the loop to completion (or the scenario's time limit). Must run inside a SimGrid actor.
// `routing` gives the prompt token ids schedulers read at arrival.
// `kv_capacity_tokens` per rank (the memory plan's).
RunResult serve_data_parallel(const Scenario& scenario, long long kv_capacity_tokens,
                              const std::vector<Request>& requests, RequestScheduler& scheduler,
                              const RoutingSource& routing, StepPipeline& steps);

}  // namespace semsim
