#pragma once
// A measured serving run (measured_serving_runs.hpp) as a scenario: the YAML text of the run the row
// describes, built only from scenario keys (so `semsim run` of it is the same simulation), or the
// reason the row cannot be expressed. The mapping:
// - model_path -> model preset (DeepSeek-R1 -> deepseek-v3: the same architecture); system ->
//   cluster: one node (h100_sxm: h100-1x8) up to 8 GPUs, else {preset: h100-ib, nodes: N};
// - precision fp8 -> precision.weights fp8 (blank: bf16); isl/osl -> fixed lengths;
// - the benchmark's concurrency -> a closed loop, workload {concurrency: N, requests: R};
// - an aggregated server: parallelism {attention: {tp: tp_size, dp: attention_dp_size or 1}, moe:
//   {tp: moe_tp_size, ep: moe_ep_size}} (no moe for a dense model), batch_size ->
//   serving.max_running_requests per attention-DP group;
// - a disaggregated one: `disaggregation:` with a prefill and a decode pool, each on whole nodes with
//   its own layout, its `*_num_workers` workers as that many more attention-DP groups;
// - every row: SGLang's engine (`engine: {name: sglang}`) and its batching (`serving.batching:
//   prefill_first`: a waiting prefill batch runs before the decode batch, mixed chunks being off by
//   default), calibration measured (or the engine profile given), a seed from the row's id.
#include <string>

#include "sim/validation/measured_serving_runs.hpp"

namespace semsim {

struct RowScenario {
  std::string yaml;     // empty when the row cannot be expressed
  std::string skipped;  // why not
};

// `engine_profile`: the calibration profile the row runs with (its `engine:` section the engine's
// host costs); empty for the device's measured profile.
RowScenario row_scenario(const MeasuredServingRun& run, const std::string& engine_profile = "");

// Requests of a closed loop at `concurrency`: bench_serving's --num-prompts is not in the file. With
// fixed lengths the N requests in flight start and finish together, wave after wave, and every wave
// after the first sees the same TTFT and TPOT; four waves (at least 16 requests) put the mean within a
// few percent of the steady state while keeping an 8k-token decode at concurrency 1 to 16 requests.
int closed_loop_requests(int concurrency);

// The seed of a row's run: from its id, so reruns and reorderings of the file give the same numbers.
long long row_seed(const std::string& id);

}  // namespace semsim
