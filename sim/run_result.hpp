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

// Attention-TP adds, per MoE layer, a reduce-scatter of the attention output before the gate, an
// all-gather of the MoE output after the combine, and (Sem-MoE's reshuffle) the two gathers that
// permute the tokens before the reduce-scatter and restore their order after the all-gather.
struct PhaseSeconds {
  double attention = 0;  // MoE layers' attention + gate (slowest rank)
  double dispatch = 0;
  double experts = 0;  // routed + shared experts (slowest device)
  double combine = 0;
  double other = 0;  // dense layers (Attention-TP: with their all-reduces), LM head
  double reduce_scatter = 0;
  double all_gather = 0;
  double permute = 0;
  double total() const {
    return attention + dispatch + experts + combine + other + reduce_scatter + all_gather + permute;
  }
  PhaseSeconds& operator+=(const PhaseSeconds& o) {
    attention += o.attention;
    dispatch += o.dispatch;
    experts += o.experts;
    combine += o.combine;
    other += o.other;
    reduce_scatter += o.reduce_scatter;
    all_gather += o.all_gather;
    permute += o.permute;
    return *this;
  }
};

struct StepRecord {
  double start = 0;
  PhaseSeconds phases;
  int prefill_tokens = 0;
  int decode_tokens = 0;
  double a2a_scale_up_bytes = 0;  // dispatch + combine, over all MoE layers
  double a2a_scale_out_bytes = 0;
  long long activations = 0;  // routed activations over all MoE layers
  long long local_activations = 0;
  double imbalance = 1;            // mean over MoE layers of the per-layer imbalance
  double tp_collective_bytes = 0;  // Attention-TP reduce-scatters + all-gathers, every layer
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
  // Attention-TP only (zero otherwise); `permute` is each of the layer's two shuffle gathers, the
  // first just before the reduce-scatter, the second just after the all-gather.
  double reduce_scatter_start = 0;
  double reduce_scatter = 0;
  double all_gather_start = 0;
  double all_gather = 0;
  double permute = 0;
  double end = 0;  // when the layer's last phase ends
};

struct StepSpans {
  long long step = 0;
  double start = 0;
  double other = 0;              // dense layers and LM head, at the start of the step
  bool tensor_parallel = false;  // Attention-TP: layers have reduce-scatter and all-gather spans
  std::vector<LayerSpans> layers;
};

struct RunResult {
  std::vector<RequestRecord> requests;
  std::vector<StepRecord> steps;
  std::vector<LayerTotals> layers;  // one per MoE layer
  std::vector<StepSpans> timeline;  // the steps of the requested window
  double end_time = 0;              // simulated time when the run stopped
  long long prefill_tokens = 0;
  long long output_tokens = 0;
};

}  // namespace semsim
