#pragma once
// Turns the operators of one layer into seconds. The engine only talks to this interface: the
// roofline prices operators from their FLOP/byte counts; the calibrated model
// (sim/calibrated_cost_model.hpp) uses a profile's measured tables where it has them.
#include <span>

#include "calibrate/format/profile.hpp"
#include "models/device.hpp"
#include "models/operator_costs.hpp"

namespace semsim {

enum class KernelKind { kGemm, kAttention, kMemoryBound };

// Operators of one layer for a batch on one device, with the model and precision fixed at
// construction. Zero work costs nothing (the kernel is not launched).
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual double attention(int layer, std::span<const SequenceChunk> batch) const = 0;
  virtual double gate(long long tokens) const = 0;
  // A function of the experts with tokens and of their tokens only (the calibrated cost model
  // memoises it by those two).
  virtual double routed_experts(std::span<const int> tokens_per_expert) const = 0;
  virtual double shared_experts(long long tokens) const = 0;
  virtual double dense_ffn(long long tokens) const = 0;
  virtual double lm_head(long long tokens) const = 0;
  // A gather of `tokens` hidden states (Sem-MoE's Attention-TP shuffle, one before the reduce-scatter
  // and one after the all-gather): a memory-bound kernel of its own, the profile's launch floor plus
  // its bytes (read and written) at the profile's memory bandwidth, as every other kernel is priced.
  virtual double permute_tokens(long long tokens) const = 0;
  // The elementwise kernels at `site` over `tokens` (norms, RoPE, SiLU: models/operator_costs.hpp
  // ElementwiseWork), in no kernel table: a launch floor each plus their bytes at the profile's
  // memory bandwidth.
  virtual double elementwise(ElementwiseSite site, long long tokens) const = 0;
  virtual double collective_overhead() const = 0;
};

// The operators as a step runs them: each with the elementwise kernels around it (around attention
// the two norms and RoPE, per layer).
double attention_with_elementwise(const CostModel& cost, int layer, std::span<const SequenceChunk> batch);
double dense_ffn_with_elementwise(const CostModel& cost, long long tokens);
double shared_experts_with_elementwise(const CostModel& cost, long long tokens);
double lm_head_with_elementwise(const CostModel& cost, long long tokens);

// Roofline: launch overhead + max(FLOPs / (peak * efficiency), bytes / (HBM bandwidth * efficiency)).
// GEMMs run at the peak of their weights' format (models/operator_costs.hpp peak_flops); the routed
// experts at their own format's.
class RooflineCostModel final : public CostModel {
 public:
  RooflineCostModel(const MoeModel& model, const Device& device, const CalibrationProfile& profile,
                    const Precision& precision);
  // One kernel doing `cost`.
  double seconds(const OpCost& cost, KernelKind kind) const;

  double attention(int layer, std::span<const SequenceChunk> batch) const override;
  double gate(long long tokens) const override;
  double routed_experts(std::span<const int> tokens_per_expert) const override;
  double shared_experts(long long tokens) const override;
  double dense_ffn(long long tokens) const override;
  double lm_head(long long tokens) const override;
  double permute_tokens(long long tokens) const override;
  double elementwise(ElementwiseSite site, long long tokens) const override;
  double collective_overhead() const override { return collective_overhead_; }

 private:
  const MoeModel& model_;
  Precision precision_;
  double kernel_overhead_;
  double collective_overhead_;
  double gemm_flops_;        // achievable FLOP/s of GEMMs
  double expert_flops_;      // of the routed experts' GEMMs (their own format)
  double attention_flops_;   // achievable FLOP/s of attention
  double memory_bandwidth_;  // achievable bytes/s
};

}  // namespace semsim
