#pragma once
// A run as Chrome / Perfetto trace-event JSON (open it in ui.perfetto.dev or chrome://tracing):
// one track per device with its steps, MoE layers and their phases (attention, dispatch, experts,
// combine) for a window of steps, and the lifetimes of the requests alive during that window on
// lanes of a "requests" track. Timestamps are simulated microseconds. The size is bounded by the
// window (about devices x MoE layers x 5 spans per step) and by a cap on the requests shown.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/run_result.hpp"

namespace semsim {

struct TimelineOptions {
  std::string path;  // where to write the trace; "" for none
  StepWindow steps{0, 10};
  int max_requests = 200;  // lifetimes shown at most (the first by id)
};

// Parses "FIRST:COUNT" (COUNT at most 10000 steps); throws InputError naming `option`.
StepWindow parse_step_window(const std::string& text, const std::string& option);

nlohmann::json timeline_json(const RunResult& run, const TimelineOptions& options);

}  // namespace semsim
