#pragma once
// What one simulation produces, before any summary: a row per request and a row per step.
#include <string>
#include <vector>

namespace semsim {

struct RequestRecord {
  int id = 0;
  double arrival = 0;
  int rank = -1;
  int input_tokens = 0;
  int output_tokens = 0;
  double first_token = -1;  // simulated time of the first output token; -1 if never produced
  double finish = -1;       // simulated time of the last output token; -1 if unfinished
  bool completed() const { return finish >= 0; }
};

struct PhaseSeconds {
  double attention = 0;  // MoE layers' attention + gate (slowest rank)
  double dispatch = 0;
  double experts = 0;    // routed + shared experts (slowest device)
  double combine = 0;
  double other = 0;      // dense layers, LM head
  double total() const { return attention + dispatch + experts + combine + other; }
};

struct StepRecord {
  double start = 0;
  PhaseSeconds phases;
  int prefill_tokens = 0;
  int decode_tokens = 0;
  double a2a_scale_up_bytes = 0;   // dispatch + combine, over all MoE layers
  double a2a_scale_out_bytes = 0;
  long long activations = 0;       // routed activations over all MoE layers
  long long local_activations = 0;
  double imbalance = 1;            // mean over MoE layers of the per-layer imbalance
};

struct RunResult {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  double end_time = 0;        // simulated time when the run stopped
  long long prefill_tokens = 0;
  long long output_tokens = 0;
};

}  // namespace semsim
