#include "sim/dispatch_timing.hpp"

namespace semsim {

DispatchTiming DispatchTiming::resolve(const KernelLibrary& library, const CalibrationProfile& profile,
                                       const MoeModel& model, const Cluster& cluster, int ep,
                                       DispatchMode mode, const DeepepChoice& choice) {
  DispatchTiming timing(mode);
  timing.deepep_ = DeepepTimes::make(library, profile, model, cluster, ep, mode, choice, timing.description_);
  if (timing.deepep_) timing.description_ = timing.deepep_->description();
  return timing;
}

StepExchange DispatchTiming::for_step(bool decode_only) const {
  StepExchange step;
  step.traffic = mode_ != DispatchMode::kDeepepAuto ? mode_
                 : decode_only                      ? DispatchMode::kLowLatency
                                                    : DispatchMode::kHierarchical;
  if (!deepep_) return step;
  const EpKernel chosen = deepep_->kernel();
  step.kernel = chosen != EpKernel::kAuto ? chosen : decode_only ? EpKernel::kLowLatency : EpKernel::kNormal;
  return step;
}

ExchangeSeconds DispatchTiming::measured_seconds(const StepExchange& step, std::span<const long long> copies,
                                                 double dispatch_bytes_per_copy,
                                                 double combine_bytes_per_copy) const {
  return deepep_->seconds(step.kernel, copies, step.traffic, dispatch_bytes_per_copy, combine_bytes_per_copy);
}

}  // namespace semsim
