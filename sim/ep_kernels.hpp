#pragma once
// The time of the MoE dispatch and combine as DeepEP's kernels take it, from a profile's measured
// DeepEP tables (one node's 8 GPUs): normal (high-throughput) for steps with prefill, low-latency
// for decode-only steps under SGLang's auto rule. The tables time uniformly random top-k routing;
// the engine's own traffic enters through its busiest rank: the remote copies that rank sends are
// turned into the tokens per rank that would send as many under uniform routing, and the kernel is
// timed at that. Routing that keeps tokens local (Sem-MoE's goal) so takes less time, as the
// measured kernel's bandwidth curve says. Elsewhere (no DeepEP tables, or an EP group that is not
// one node of 8) the dispatch is priced as NCCL-style copies over the topology, as before.
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "calibrate/kernel_library.hpp"
#include "models/moe_model.hpp"
#include "policies/dispatch.hpp"

namespace semsim {

// serving.ep_kernel.
enum class EpKernel { kAuto, kNormal, kLowLatency, kNccl };
const std::vector<std::string>& ep_kernel_names();  // auto, normal, low_latency, nccl (enum order)

class DeepepTimes {
 public:
  // Nothing when `choice` is kNccl or the profile cannot time DeepEP for this group; `why_not`
  // then says why (for the summary). A DeepEP dispatch mode (normal, low_latency, auto) names the
  // kernel itself: `choice` then only says whether the measured tables time it (auto) or not (nccl).
  static std::optional<DeepepTimes> make(const KernelLibrary& library, const MoeModel& model, int ep,
                                         int devices_per_node, int communication_units, DispatchMode mode,
                                         EpKernel choice, std::string& why_not);

  // The kernel a step runs: low-latency for decode-only steps under auto.
  EpKernel kernel_for(bool decode_only) const;
  // Seconds of one dispatch (or combine) whose copies, moved as `traffic` counts them, are
  // `copies[src * ep + dst]`.
  double seconds(EpKernel kernel, bool combine, std::span<const long long> copies,
                 DispatchMode traffic) const;
  // What summary.json says priced the dispatch.
  std::string description() const;

 private:
  DeepepTimes() = default;
  EpKernel choice_ = EpKernel::kAuto;
  int ep_ = 0;
  // Remote copies per token under uniform routing, the tables' routing, by traffic mode.
  double dedup_copies_per_token_ = 0, per_expert_copies_per_token_ = 0, all_gather_copies_per_token_ = 0;
  std::shared_ptr<KernelCurve> normal_dispatch_, normal_combine_, ll_dispatch_, ll_combine_;
};

}  // namespace semsim
