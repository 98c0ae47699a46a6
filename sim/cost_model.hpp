#pragma once
// Turns operator FLOPs/bytes into seconds. The engine only talks to this interface, so calibrated
// tables (calibration issue) replace the roofline without touching the serving loop.
#include "calibrate/profile.hpp"
#include "models/device.hpp"
#include "models/operator_costs.hpp"

namespace semsim {

enum class KernelKind { kGemm, kAttention, kMemoryBound };

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Time of one kernel doing `cost`; zero work costs nothing (the kernel is not launched).
  virtual double seconds(const OpCost& cost, KernelKind kind) const = 0;
  virtual double collective_overhead() const = 0;
};

// Roofline: launch overhead + max(FLOPs / (peak * efficiency), bytes / (HBM bandwidth * efficiency)).
// GEMMs run at FP8 peak when weights are FP8 and the device has FP8, else at BF16 peak.
class RooflineCostModel final : public CostModel {
 public:
  RooflineCostModel(const Device& device, const CalibrationProfile& profile, const Precision& precision);
  double seconds(const OpCost& cost, KernelKind kind) const override;
  double collective_overhead() const override { return profile_.collective_overhead; }

 private:
  CalibrationProfile profile_;
  double gemm_flops_;       // achievable FLOP/s of GEMMs
  double attention_flops_;  // achievable FLOP/s of attention
  double memory_bandwidth_; // achievable bytes/s
};

}  // namespace semsim
