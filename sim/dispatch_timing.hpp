#pragma once
// What a step's MoE dispatch and combine move and what times them, resolved in one place from the
// scenario's dispatch mode (policies.dispatch), its kernel choice (serving.ep_kernel) and the
// calibration profile: the step builder and `semsim collective` both ask it.
// - Traffic: the copies the step moves (policies/dispatch.hpp); DeepEP's auto mode moves the
//   hierarchical (normal) kernels' copies in steps with prefill and the low-latency kernels' copies
//   in decode-only steps.
// - Kernel and timing: DeepEP's measured kernels where the profile times them for this EP group
//   (sim/ep_kernels.hpp), under SGLang's auto rule the low-latency kernel for decode-only steps and
//   the normal one otherwise; elsewhere the copies cross the topology.
#include <optional>
#include <span>
#include <string>

#include "sim/ep_kernels.hpp"

namespace semsim {

// One step's dispatch and combine.
struct StepExchange {
  DispatchMode traffic = DispatchMode::kDedup;  // the copies moved (never kDeepepAuto)
  EpKernel kernel = EpKernel::kNccl;            // DeepEP's kernel timing them; kNccl: the topology does
};

class DispatchTiming {
 public:
  DispatchTiming() = default;
  // `mode`'s copies, always over the topology.
  explicit DispatchTiming(DispatchMode mode) : mode_(mode) {}
  // DeepEP's tables time the dispatch when `choice` and the profile allow it for this group;
  // description() says what times it either way.
  static DispatchTiming resolve(const KernelLibrary& library, const CalibrationProfile& profile,
                                const MoeModel& model, const Cluster& cluster, int ep, DispatchMode mode,
                                const DeepepChoice& choice);

  // SGLang's auto rule, the one place it is written.
  StepExchange for_step(bool decode_only) const;
  // Whether measured kernels time the exchanges (else their copies cross the topology).
  bool measured() const { return deepep_.has_value(); }
  // The measured seconds of a dispatch of `copies` (`copies[src * ep + dst]`, of
  // `dispatch_bytes_per_copy` each) and of its combine in a step; requires measured().
  ExchangeSeconds measured_seconds(const StepExchange& step, std::span<const long long> copies,
                                   double dispatch_bytes_per_copy, double combine_bytes_per_copy) const;
  // What summary.json says priced the dispatch.
  const std::string& description() const { return description_; }

 private:
  DispatchMode mode_ = DispatchMode::kDedup;
  std::optional<DeepepTimes> deepep_;
  std::string description_;
};

}  // namespace semsim
