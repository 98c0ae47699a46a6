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

// When each phase of one MoE layer ran in one step (simulated seconds). Ranks wait for the slowest
// at each collective, so a device's own attention or experts may end before the phase does.
struct LayerSpans {
  int layer = 0;                  // model layer index
  double start = 0;               // attention (and gate) starts on every device
  std::vector<double> attention;  // per device: its own attention + gate
  double dispatch_start = 0;
  double dispatch = 0;
  double experts_start = 0;
  std::vector<double> experts;  // per device: its routed + shared experts
  double combine_start = 0;
  double combine = 0;
};

struct StepSpans {
  long long step = 0;
  double start = 0;
  double other = 0;  // dense layers and LM head, at the start of the step
  std::vector<LayerSpans> layers;
};

struct RunResult {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  std::vector<LayerTotals> layers;  // one per MoE layer
  std::vector<StepSpans> timeline;  // the steps of the requested window
  double end_time = 0;        // simulated time when the run stopped
  long long prefill_tokens = 0;
  long long output_tokens = 0;
};

}  // namespace semsim
