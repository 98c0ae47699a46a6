#pragma once
// What one simulation produces, before any summary: a row per request and a row per step.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/replay/step_export.hpp"
#include "policies/token_device_table.hpp"
#include "sim/phase.hpp"
#include "workloads/expert_groups.hpp"
#include "workloads/routing_drift.hpp"
#include "workloads/speculative_acceptance.hpp"

namespace semsim {

struct RequestRecord {
  int id = 0;
  double arrival = 0;
  int rank = -1;
  int input_tokens = 0;
  int output_tokens = 0;
  int cached_tokens = 0;  // prompt tokens its rank's prefix cache held at admission: not prefilled
  int session = -1;       // workload.sessions: its Request's session, turn and previous turn
  int turn = 0;
  int previous_turn = -1;
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

// A step's record is written in three parts, each by one writer: the serving loop (the batch), the
// step builder's counters (what the batch's routing moves and loads, whatever its timing) and the
// recorder (the schedule's timing).
struct StepBatchRecord {
  double start = 0;
  double end = 0;  // simulated time the step finished: when the tokens it yields are out
  int prefill_tokens = 0;
  int decode_tokens = 0;
  // The batch limits that held work back when the step's batches were formed, on any rank: a
  // waiting request whose KV footprint did not fit, the token budget spent with prompt or decode
  // tokens left out, serving.max_running_requests running with requests waiting.
  bool kv_wait = false;
  bool token_budget_full = false;
  bool request_cap_full = false;
  double kv_use = 0;  // the fullest rank's reserved KV tokens / its capacity, once the batch is formed
};

struct StepTimingRecord {
  // The step's critical path, phase by phase: they add up to the step's duration. Communication
  // that runs under compute (two-batch overlap) is off the critical path: `comm_hidden`.
  PhaseSeconds phases;
  double comm_exposed = 0;  // seconds with a collective in flight and no device computing
  double comm_hidden = 0;   // seconds with a collective in flight while some device computes
};

struct StepTrafficRecord {
  double a2a_scale_up_bytes = 0;  // dispatch + combine, over all MoE layers
  double a2a_scale_out_bytes = 0;
  double a2a_forwarded_bytes = 0;  // of the scale-up bytes: DeepEP normal's forwarding inside nodes
  long long activations = 0;       // routed activations over all MoE layers
  long long local_activations = 0;
  double imbalance = 1;            // mean over MoE layers of the per-layer imbalance
  double tp_collective_bytes = 0;  // Attention-TP reduce-scatters + all-gathers, every layer
  // Over the step's expert activities, the slowest device's seconds and the devices' mean: their
  // ratio is what uneven expert loads cost in time (the load imbalance counts activations).
  double experts_slowest_seconds = 0;
  double experts_mean_seconds = 0;
};

// The serving engine's host work around the step (scenario `engine:`; all zero without one), what a
// fit of the profile's engine costs reads (calibrate/format/engine_costs.hpp): the step's kernels took
// its duration less phases[Phase::kEngine], the host seconds they did not hide.
struct StepEngineRecord {
  double host_seconds = 0;  // scheduler, per-request work and launch (host_seconds())
  int batch_requests = 0;   // requests in the batch of the rank with the most
  bool eager = false;       // launched kernel by kernel; else replayed from a CUDA graph
  int graph_batch = 0;      // the captured batch size the graph replay padded to (0: eager)
  bool overlapped = false;  // its host work could run under the previous step's kernels
};

struct StepRecord : StepBatchRecord, StepTimingRecord, StepTrafficRecord, StepEngineRecord {};

// One MoE layer over the whole run: its phase times (summed over steps; `other` unused) and the
// routed activations each device served (its expert-side load).
struct LayerTotals {
  int layer = 0;  // model layer index
  PhaseSeconds phases;
  std::vector<long long> device_activations;
};

// The `count` steps whose per-device phase spans are recorded for a timeline: from step `first`, or,
// with `from_seconds`, from the first step that starts at or after that simulated time.
struct StepWindow {
  long long first = 0;
  long long count = 0;
  std::optional<double> from_seconds;
};

// What an activity worked on, on one device, where the engine counts it exactly (-1: not counted).
// The step builder fills the compute fields, the recorder the bytes of collectives.
struct DeviceWork {
  int tokens = -1;             // attention, dense layers + LM head: the tokens it ran
  long long activations = -1;  // experts: routed (token, expert) activations served
  int active_experts = -1;     // experts: experts held there with at least one token
  double bytes_sent = -1;      // collective: payload bytes to other devices, as a2a_bytes counts them
  double bytes_received = -1;
};

// When one activity of a step ran, on one device, and what it worked on there. A compute activity's
// devices wait for the slowest at the next collective, so a device's span may end before the next
// one starts; a collective's spans are one time over every device.
struct ActivitySpan {
  Phase phase = Phase::kOther;
  bool collective = false;
  int layer = -1;       // model layer index; -1: not one layer's (dense layers + LM head)
  int micro_batch = 0;  // two-batch overlap: 0 or 1
  int device = 0;
  double start = 0;
  double seconds = 0;
  DeviceWork work;
};

struct StepSpans {
  long long step = 0;
  double start = 0;
  double end = 0;
  int micro_batches = 1;
  std::vector<ActivitySpan> spans;
};

// A serving rank's requests and KV cache at one instant (Attention-TP: the one TP group's).
struct RankState {
  int running = 0;  // admitted, their KV cache reserved
  int queued = 0;   // arrived, waiting for admission
  // Input + output of every running request, admission's count (with a prefix cache, the blocks
  // they share count once).
  long long kv_reserved_tokens = 0;
  long long kv_cached_tokens = 0;  // tokens whose KV the running requests hold so far
};

// One timeline step as the serving loop saw it, per rank.
struct StepServing {
  std::vector<RankState> at_start;  // what the step ran with (after admissions)
  // Once its tokens are out, finished requests freed their KV and the requests that arrived
  // meanwhile queued, before the next step admits any.
  std::vector<RankState> at_end;
  std::vector<int> prefill_tokens;  // the step's batch
  std::vector<int> decode_tokens;
};

// What priced or decided parts of a run where the scenario leaves a choice to the engine, said in
// summary.json and the text summary. Made by build_run (sim/run_plan.hpp).
struct RunNotes {
  std::string dispatch_kernel;      // what times dispatch and combine
  std::string tp_collectives;       // what times Attention-TP's collectives ("" under DP attention)
  std::string scheduling_fallback;  // what Sem-MoE's scheduler goes by without token identities, or ""
  std::optional<RoutingDrift> routing_drift;      // replayed trace vs the scenario's profile, when both
  std::optional<TokenTableMatch> token_table;     // the plan's token table vs the routed vocabulary
  std::optional<ProfileOverlap> profile_overlap;  // replayed requests the plan's profile saw
  std::optional<GroupLimitCheck> group_limit;     // a replayed trace against the model's group limit
};

// What the prefix caches (serving.prefix_cache) did over a run, every rank's together.
struct PrefixCacheCounts {
  bool on = false;
  int block_tokens = 0;
  long long requests = 0;       // admitted to a rank with a cache
  long long hit_requests = 0;   // of which found some of their prompt cached
  long long prompt_tokens = 0;  // their prompt tokens
  long long cached_tokens = 0;  // of which cached: prefill they skipped
  long long evicted_blocks = 0;
  double hit_rate() const {
    return prompt_tokens > 0 ? static_cast<double>(cached_tokens) / static_cast<double>(prompt_tokens) : 0.0;
  }
};

struct RunResult {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  std::vector<LayerTotals> layers;            // one per MoE layer
  std::vector<StepSpans> timeline;            // the steps of the requested window
  std::vector<StepServing> timeline_serving;  // one per step of `timeline`, in its order
  long long kv_capacity_tokens = 0;           // per rank (the memory plan's)
  double end_time = 0;                        // simulated time when the run stopped
  bool stopped_at_time_limit = false;         // serving.time_limit ended it with requests not done
  long long prefill_tokens = 0;
  long long output_tokens = 0;
  AcceptanceCounts acceptance;               // speculative decoding's verifications (serving.speculative)
  PrefixCacheCounts prefix_cache;            // serving.prefix_cache
  bool engine_host_work = false;             // the steps pay an engine's host work (StepEngineRecord)
  RunNotes notes;                            // RunPlan::notes
  std::vector<ExportedStep> exported_steps;  // --export-steps' window (sim/step_exporter.hpp)
  // A deployment's instances merged into one run (sim/outputs/deployment_summary.hpp): each step's
  // and each request's instance (-1: never sent); empty for a run of one server. Kept here, not in
  // the records, so that a run of one server's memory per request stays what it was.
  std::vector<int> step_instance, request_instance;
};

}  // namespace semsim
