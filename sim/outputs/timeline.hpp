#pragma once
// A run as Chrome / Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing):
// one track per device with its steps, MoE layers and their phases (attention, dispatch, experts,
// combine) for a window of steps, each span with what it worked on there (tokens, routed
// activations and active experts, bytes sent and received); counter tracks per serving rank
// (running and queued requests, KV cache tokens, batch tokens) over the window; and the lifetimes
// of the requests alive during that window on lanes of a "requests" track. Timestamps are
// simulated microseconds. The size is bounded by the window (about devices x MoE layers x 5 spans
// and ranks x 3 counters per step) and by a cap on the requests shown.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/run_result.hpp"

namespace semsim {

inline constexpr long long kDefaultTimelineSteps = 10;

struct TimelineOptions {
  std::string path;  // where to write the trace; "" for none
  StepWindow steps{0, kDefaultTimelineSteps, std::nullopt};
  int max_requests = 200;  // lifetimes shown at most (the first by id)
};

// Parses "FIRST:COUNT" (COUNT at most 10000 steps); throws InputError naming `option`.
StepWindow parse_step_window(const std::string& text, const std::string& option);
// Parses "SECONDS[:COUNT]": COUNT steps (default 10, at most 10000) from the first that starts at or
// after SECONDS of simulated time; throws InputError naming `option`.
StepWindow parse_time_window(const std::string& text, const std::string& option);

// A window no step of the run falls in is bad input: throws InputError naming the option that gave
// it and the run's steps and duration. `time_limit` (serving.time_limit, 0 for none) finds a start
// time past the run's end before it runs; the run's result finds the rest.
void check_window_start(const StepWindow& window, double time_limit);
void check_window_recorded(const StepWindow& window, const RunResult& run);

nlohmann::json timeline_json(const RunResult& run, const TimelineOptions& options);

}  // namespace semsim
