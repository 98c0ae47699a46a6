#pragma once
// The phases of a step, as one enumeration with one name table: summary.json, steps.csv,
// layers.csv, the timeline and the plot scripts all name phases from here.
#include <array>
#include <string_view>

namespace semsim {

// In the order steps.csv and summary.json list them (and total() sums them).
enum class Phase : int {
  kAttention,      // MoE layers' attention + gate
  kDispatch,       // all-to-allv of hidden states to the experts' devices
  kExperts,        // routed + shared experts
  kCombine,        // the reverse all-to-allv
  kOther,          // dense layers (Attention-TP: with their all-reduces), LM head
  kReduceScatter,  // Attention-TP: attention output to each rank's slice of tokens
  kAllGather,      // Attention-TP: MoE output back to every rank
  kPermute,  // Attention-TP, Sem-MoE: the token shuffle before the reduce-scatter and after the all-gather
  kEngine,   // the serving engine's host work the kernels did not hide (scenario `engine:`; outputs name
             // it only for runs with an engine)
};
inline constexpr int kPhaseCount = 9;
inline constexpr std::array<Phase, kPhaseCount> kPhases{
    Phase::kAttention,     Phase::kDispatch,  Phase::kExperts, Phase::kCombine, Phase::kOther,
    Phase::kReduceScatter, Phase::kAllGather, Phase::kPermute, Phase::kEngine};

struct PhaseName {
  std::string_view key;    // summary.json key; steps.csv / layers.csv column is key + "_s"
  std::string_view label;  // timeline span name
};
const PhaseName& phase_name(Phase phase);

// Seconds per phase.
struct PhaseSeconds {
  std::array<double, kPhaseCount> seconds{};

  double& operator[](Phase p) { return seconds[static_cast<int>(p)]; }
  double operator[](Phase p) const { return seconds[static_cast<int>(p)]; }
  // In enumeration order, so the same phases always sum to the same bits.
  double total() const {
    double sum = 0;
    for (const double s : seconds) sum += s;
    return sum;
  }
  PhaseSeconds& operator+=(const PhaseSeconds& o) {
    for (int i = 0; i < kPhaseCount; ++i) seconds[i] += o.seconds[i];
    return *this;
  }
};

}  // namespace semsim
