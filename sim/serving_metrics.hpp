#pragma once
// Serving metrics (design.md, "Metrics"), defined once and used by every output.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/run_result.hpp"

namespace semsim {

// Over `count` values; the statistics mean nothing when count is 0 (outputs write null). `std` is
// the population standard deviation (numpy's default, as bench_serving reports it).
struct Distribution {
  long long count = 0;
  double mean = 0, std = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

// Percentile with linear interpolation between order statistics (numpy's default); 0 when empty.
double percentile(std::vector<double> values, double q);
Distribution distribution_of(const std::vector<double>& values);
// The same statistics over values given with their multiplicity (value, how many times it occurs).
Distribution distribution_of_counted(std::vector<std::pair<double, long long>> values);

// vLLM bench_serving's per-request goodput SLOs (--goodput ttft:MS tpot:MS e2el:MS): a completed
// request is good when it meets every SLO given (TPOT of a one-token request counts as 0).
struct GoodputSlos {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

struct Summary {
  RunNotes notes;
  double simulated_seconds = 0;  // until the last completion, or the time limit
  int requests = 0;
  int requests_arrived = 0;  // by the end of the run (a time limit can stop it before the last arrival)
  int requests_completed = 0;
  int requests_unfinished = 0;  // arrived but not completed
  bool stopped_at_time_limit = false;
  // Tokens processed per simulated second: prompt tokens prefilled, output tokens generated. When
  // every request completes this equals bench_serving's completed-request definition.
  double input_tok_s = 0, output_tok_s = 0, total_tok_s = 0;
  // TTFT over the requests that got a first token, TPOT (without the first token) and E2E over the
  // completed ones: a run stopped by its time limit reports what happened, not zeros.
  Distribution ttft, tpot, e2e;
  // Inter-token latency: every gap between two consecutive output tokens of a completed request
  // (bench_serving's ITL with one token per streamed chunk); a request's gaps add up to its
  // E2E - TTFT, and a decode step's gap is the time since the step before it.
  Distribution itl;
  // bench_serving's totals: prompt and output tokens of the completed requests.
  long long completed_input_tokens = 0, completed_output_tokens = 0;
  long long offered_input_tokens = 0, offered_output_tokens = 0;  // of every request of the workload
  double last_arrival = 0;                                        // the workload's last request's
  // workload.sessions: how many, and the later turns that arrived before the turn before them
  // finished (their prompt holds an output not yet given: an open loop's think time too short).
  int sessions = 0;
  int early_turns = 0;
  GoodputSlos goodput_slos;
  int good_requests = 0;  // completed requests meeting every SLO (when goodput_slos.any())
  double lar = 0;         // all routed activations of the run
  double a2a_scale_up_bytes = 0, a2a_scale_out_bytes = 0;
  double a2a_forwarded_bytes = 0;  // of the scale-up bytes: forwarded by DeepEP normal's kernels
  double tp_collective_bytes = 0;  // Attention-TP reduce-scatters + all-gathers
  double imbalance = 1;            // activation-weighted mean of the steps' imbalance
  int steps = 0;
  double mean_step_seconds = 0;
  PhaseSeconds phase_totals;        // along each step's critical path: they add up to the steps' time
  double comm_exposed_seconds = 0;  // collectives on the critical path
  double comm_hidden_seconds = 0;   // collectives in flight under critical-path compute
  double experts_slowest_seconds = 0, experts_mean_seconds = 0;  // StepRecord's, summed over the steps
  // The engine's host work (StepEngineRecord; phase_totals[Phase::kEngine] is the part left exposed).
  double engine_host_seconds = 0;
  int eager_steps = 0;
  // Shares of the steps in which a batch limit held work back on some rank (StepRecord), and the
  // fullest rank's reserved KV share: its peak and its mean over the steps.
  double kv_wait_step_share = 0, token_budget_step_share = 0, request_cap_step_share = 0;
  double kv_use_peak = 0, kv_use_mean = 0;
  // The saturated window: from the first to the last step in which a batch limit held work back,
  // every step between included. Its token rates are the server's steady-state throughput, without
  // the ramp-up and drain around it (how deployments report throughput); none when never saturated.
  struct Window {
    int steps = 0;
    double seconds = 0;
    double prefill_tok_s = 0, decode_tok_s = 0;  // prompt tokens prefilled; tokens from decode steps
  };
  std::optional<Window> saturated;
  AcceptanceCounts acceptance;     // speculative decoding's verifications (RunResult's)
  PrefixCacheCounts prefix_cache;  // RunResult's
};

Summary summarize(const RunResult& run, const GoodputSlos& slos = {});

// TPOT of one request: time per output token after the first; undefined (nullopt-like -1) for one token.
double time_per_output_token(const RequestRecord& r);

}  // namespace semsim
