#include "sim/ep_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace semsim {
namespace {

// The measured tables' group: EP over the 8 GPUs of one node.
constexpr int kMeasuredRanks = 8;

// P(a token's top-k over `experts` misses the experts of one of `ranks` equal ranks) under uniform
// routing without repeats.
double miss_probability(int experts, int top_k, int ranks) {
  const int outside = experts - experts / ranks;
  double p = 1;
  for (int j = 0; j < top_k; ++j) p *= static_cast<double>(outside - j) / static_cast<double>(experts - j);
  return std::max(0.0, p);
}

}  // namespace

const std::vector<std::string>& ep_kernel_names() {
  static const std::vector<std::string> names{"auto", "normal", "low_latency", "nccl"};
  return names;
}

std::optional<DeepepTimes> DeepepTimes::make(const KernelLibrary& library, const MoeModel& model, int ep,
                                             int devices_per_node, int communication_units, DispatchMode mode,
                                             EpKernel choice, std::string& why_not) {
  if (is_deepep(mode) && choice != EpKernel::kNccl)
    choice = mode == DispatchMode::kHierarchical ? EpKernel::kNormal
             : mode == DispatchMode::kLowLatency ? EpKernel::kLowLatency
                                                 : EpKernel::kAuto;
  // Untimed by the tables, an NCCL-style dispatch is priced as NCCL's copies; a DeepEP one as its
  // own copies (hierarchical or per expert), both over the topology.
  const char* instead = is_deepep(mode) ? "its copies over the topology" : "nccl";
  if (choice == EpKernel::kNccl) {
    why_not = fmt::format("{} (serving.ep_kernel)", instead);
    return std::nullopt;
  }
  if (ep != kMeasuredRanks || devices_per_node < ep) {
    why_not =
        fmt::format("{} (DeepEP is measured on one node of {} GPUs; this EP group is {} over nodes of {})",
                    instead, kMeasuredRanks, ep, devices_per_node);
    return std::nullopt;
  }
  DeepepTimes t;
  t.choice_ = choice;
  t.ep_ = ep;
  const std::string shape =
      fmt::format("hidden={} experts={} top_k={}", model.hidden, model.routed_experts, model.top_k);
  // DeepEP's normal kernels run on the SMs the communication kernels hold (DeepEP's default 24).
  const std::string normal =
      fmt::format("{} sms={}", shape, communication_units > 0 ? communication_units : 24);
  t.normal_dispatch_ = library.curve("deepep_normal_dispatch", normal, "bf16");
  t.normal_combine_ = library.curve("deepep_normal_combine", normal, "bf16");
  t.ll_dispatch_ = library.curve("deepep_ll_dispatch", shape, "bf16");
  t.ll_combine_ = library.curve("deepep_ll_combine", shape, "bf16");
  const bool normal_ok = t.normal_dispatch_ && t.normal_combine_, ll_ok = t.ll_dispatch_ && t.ll_combine_;
  if ((choice == EpKernel::kNormal && !normal_ok) || (choice == EpKernel::kLowLatency && !ll_ok) ||
      (choice == EpKernel::kAuto && !(normal_ok && ll_ok))) {
    why_not = fmt::format("{} (the calibration profile has no DeepEP tables)", instead);
    return std::nullopt;
  }
  const double remote_ranks = static_cast<double>(ep - 1);
  t.dedup_copies_per_token_ = remote_ranks * (1 - miss_probability(model.routed_experts, model.top_k, ep));
  t.per_expert_copies_per_token_ = model.top_k * remote_ranks / ep;
  t.all_gather_copies_per_token_ = remote_ranks;
  return t;
}

EpKernel DeepepTimes::kernel_for(bool decode_only) const {
  if (choice_ != EpKernel::kAuto) return choice_;
  return decode_only ? EpKernel::kLowLatency : EpKernel::kNormal;
}

double DeepepTimes::seconds(EpKernel kernel, bool combine, std::span<const long long> copies,
                            DispatchMode traffic) const {
  long long busiest = 0;
  for (int src = 0; src < ep_; ++src) {
    long long remote = 0;
    for (int dst = 0; dst < ep_; ++dst)
      if (dst != src) remote += copies[static_cast<std::size_t>(src) * ep_ + dst];
    busiest = std::max(busiest, remote);
  }
  if (busiest == 0) return 0.0;
  // One node: the hierarchical dispatch moves the dedup copies.
  const double per_token = traffic == DispatchMode::kAllGather ? all_gather_copies_per_token_
                           : traffic == DispatchMode::kPerExpert || traffic == DispatchMode::kLowLatency
                               ? per_expert_copies_per_token_
                               : dedup_copies_per_token_;
  const double tokens = static_cast<double>(busiest) / per_token;
  const KernelCurve& curve = kernel == EpKernel::kLowLatency
                                 ? (combine ? *ll_combine_ : *ll_dispatch_)
                                 : (combine ? *normal_combine_ : *normal_dispatch_);
  return curve.seconds(tokens);
}

std::string DeepepTimes::description() const {
  switch (choice_) {
    case EpKernel::kNormal:
      return "deepep normal";
    case EpKernel::kLowLatency:
      return "deepep low_latency";
    default:
      return "deepep auto (low_latency for decode-only steps, normal otherwise)";
  }
}

}  // namespace semsim
