#include "sim/cost_model.hpp"

#include <algorithm>

namespace semsim {

RooflineCostModel::RooflineCostModel(const Device& device, const CalibrationProfile& profile,
                                     const Precision& precision)
    : profile_(profile) {
  const bool fp8_gemm = precision.weight_bytes < 2.0 && device.fp8_flops > 0;
  gemm_flops_ = (fp8_gemm ? device.fp8_flops : device.bf16_flops) * profile.gemm_efficiency;
  attention_flops_ = device.bf16_flops * profile.attention_efficiency;
  memory_bandwidth_ = device.hbm_bandwidth * profile.memory_efficiency;
}

double RooflineCostModel::seconds(const OpCost& cost, KernelKind kind) const {
  if (cost.flops <= 0 && cost.bytes <= 0) return 0.0;
  const double flops_rate = kind == KernelKind::kAttention ? attention_flops_ : gemm_flops_;
  const double compute = kind == KernelKind::kMemoryBound ? 0.0 : cost.flops / flops_rate;
  return profile_.kernel_overhead + std::max(compute, cost.bytes / memory_bandwidth_);
}

}  // namespace semsim
