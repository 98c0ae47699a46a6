#pragma once
// What one simulation produces, before any summary: a row per request and a row per step.
#include <string>
#include <vector>

#include "sim/phase.hpp"
#include "workloads/routing_drift.hpp"

namespace semsim {

struct RequestRecord {
  int id = 0;
  double arrival = 0;
  int rank = -1;
  int input_tokens = 0;
  int output_tokens = 0;
  double first_token = -1;  // simulated time of the first output token; -1 if never produced
  double finish = -1;       // simulated time of the last output token; -1 if unfinished
  // Output tokens come at the end of steps: the first at step `first_token_step`, the last at
  // `finish_step` (indices into RunResult::steps), one per step in between except across the
  // `token_gaps`, where the request sat in the batch without a token (-1: not reached).
  int first_token_step = -1;
  int finish_step = -1;
  struct TokenGap {
    int after_step = 0;  // the step of the token before the gap
    int at_step = 0;     // the step of the next token, after_step + 2 or later
  };
  std::vector<TokenGap> token_gaps;
  bool completed() const { return finish >= 0; }
  bool arrived() const { return rank >= 0; }  // given a rank at arrival; never, when the run stopped first
};

struct StepRecord {
  double start = 0;
  double end = 0;  // simulated time the step finished: when the tokens it yields are out
  // The step's critical path, phase by phase: they add up to the step's duration. Communication
  // that runs under compute (two-batch overlap) is off the critical path: `comm_hidden`.
  PhaseSeconds phases;
  double comm_exposed = 0;  // seconds with a collective in flight and no device computing
  double comm_hidden = 0;   // seconds with a collective in flight while some device computes
  int prefill_tokens = 0;
  int decode_tokens = 0;
  double a2a_scale_up_bytes = 0;  // dispatch + combine, over all MoE layers
  double a2a_scale_out_bytes = 0;
  long long activations = 0;  // routed activations over all MoE layers
  long long local_activations = 0;
  double imbalance = 1;            // mean over MoE layers of the per-layer imbalance
  double tp_collective_bytes = 0;  // Attention-TP reduce-scatters + all-gathers, every layer
  // Over the step's expert activities, the slowest device's seconds and the devices' mean: their
  // ratio is what uneven expert loads cost in time (the load imbalance counts activations).
  double experts_slowest_seconds = 0;
  double experts_mean_seconds = 0;
  // The batch limits that held work back when the step's batches were formed, on any rank: a
  // waiting request whose KV footprint did not fit, the token budget spent with prompt or decode
  // tokens left out, serving.max_running_requests running with requests waiting.
  bool kv_wait = false;
  bool token_budget_full = false;
  bool request_cap_full = false;
  double kv_use = 0;  // the fullest rank's reserved KV tokens / its capacity, once the batch is formed
};

// One MoE layer over the whole run: its phase times (summed over steps; `other` unused) and the
// routed activations each device served (its expert-side load).
struct LayerTotals {
  int layer = 0;  // model layer index
  PhaseSeconds phases;
  std::vector<long long> device_activations;
};

// Steps [first, first + count) whose per-device phase spans are recorded for a timeline.
struct StepWindow {
  long long first = 0;
  long long count = 0;
  bool contains(long long step) const { return step >= first && step < first + count; }
};

// When one activity of a step ran. A compute activity has a span per device (devices wait for the
// slowest at the next collective, so a device's span may end before the next one starts); a
// collective has one span (`device` -1) over every device.
struct ActivitySpan {
  Phase phase = Phase::kOther;
  bool collective = false;
  int layer = -1;       // model layer index; -1: not one layer's (dense layers + LM head)
  int micro_batch = 0;  // two-batch overlap: 0 or 1
  int device = -1;
  double start = 0;
  double seconds = 0;
};

struct StepSpans {
  long long step = 0;
  double start = 0;
  double end = 0;
  int micro_batches = 1;
  std::vector<ActivitySpan> spans;
};

// What priced or decided parts of a run where the scenario leaves a choice to the engine, said in
// summary.json and the text summary. Made by build_run (sim/run_plan.hpp).
struct RunNotes {
  std::string dispatch_kernel;      // what times dispatch and combine
  std::string tp_collectives;       // what times Attention-TP's collectives ("" under DP attention)
  std::string scheduling_fallback;  // what Sem-MoE's scheduler goes by without token identities, or ""
  std::optional<RoutingDrift> routing_drift;  // replayed trace vs the scenario's profile, when both
};

struct RunResult {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  std::vector<LayerTotals> layers;     // one per MoE layer
  std::vector<StepSpans> timeline;     // the steps of the requested window
  double end_time = 0;                 // simulated time when the run stopped
  bool stopped_at_time_limit = false;  // serving.time_limit ended it with requests not done
  long long prefill_tokens = 0;
  long long output_tokens = 0;
  RunNotes notes;  // RunPlan::notes
};

}  // namespace semsim
