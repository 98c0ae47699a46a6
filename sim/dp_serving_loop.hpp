#pragma once
// Serving under Attention-DP: one queue per DP rank, continuous batching with a per-rank token
// budget and chunked prefill, KV-cache admission control, and lockstep steps across all ranks
// (an idle rank still joins every collective).
#include "policies/placement.hpp"
#include "policies/request_scheduling.hpp"
#include "sim/kv_handoff.hpp"
#include "sim/request_feed.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/step_pipeline.hpp"
#include "workloads/request.hpp"
#include "workloads/routing_source.hpp"

#include <cstddef>
#include <functional>

namespace semsim {

// Told after every step (and once when the loop ends) the simulated time and the requests completed
// of all of them, for a progress display; it cannot change the run.
using ServingProgress =
    std::function<void(double simulated_seconds, std::size_t completed, std::size_t requests)>;

// Runs the loop to completion (or the scenario's time limit). Must run inside a SimGrid actor.
// `routing` gives the prompt token ids schedulers read at arrival.
// `kv_capacity_tokens` per rank (the memory plan's).
// With a `handoff`, the loop is one pool of a disaggregated run (scenario.serving.pool says which):
// a prefill pool hands each request over as its last prompt chunk runs; a decode pool serves the
// requests whose KV cache has landed (their first token, the prefill's, counted as given then)
// instead of the workload's arrivals. Its clock is then synchronised every step, so that the other
// pool's actor sees the same time.
// With a `feed`, the loop is one instance of a deployment: it serves the requests the router sends
// it (records of the others stay unarrived) until the router has sent its last, its clock
// synchronised every step so that the router sees every finish at its time.
RunResult serve_data_parallel(const Scenario& scenario, long long kv_capacity_tokens,
                              const std::vector<Request>& requests, RequestScheduler& scheduler,
                              const RoutingSource& routing, StepPipeline& steps,
                              const ServingProgress& progress = {}, KvHandoff* handoff = nullptr,
                              RequestFeed* feed = nullptr);

}  // namespace semsim
