#include "policies/dispatch.hpp"

#include <algorithm>

namespace semsim {

const std::vector<PolicyInfo>& dispatch_modes() {
  static const std::vector<PolicyInfo> modes = {
      {"dedup", "one copy per token and remote device (high-throughput EP kernels)", {}},
      {"per_expert", "one copy per token and remote expert (low-latency decode kernels)", {}},
      {"allgather", "every token to every device, independent of routing", {}},
  };
  return modes;
}

DispatchMode dispatch_mode_named(const std::string& name) {
  if (name == "per_expert") return DispatchMode::kPerExpert;
  if (name == "allgather") return DispatchMode::kAllGather;
  return DispatchMode::kDedup;
}

LayerDispatch::LayerDispatch(int device_count, int expert_count)
    : devices(device_count),
      experts(expert_count),
      copies(static_cast<std::size_t>(device_count) * device_count, 0),
      expert_tokens(static_cast<std::size_t>(device_count) * expert_count, 0),
      device_tokens(device_count, 0) {}

void LayerDispatch::clear() {
  std::fill(copies.begin(), copies.end(), 0);
  std::fill(expert_tokens.begin(), expert_tokens.end(), 0);
  std::fill(device_tokens.begin(), device_tokens.end(), 0);
  activations = 0;
  local_activations = 0;
}

void account_dispatch(const Placement& placement, int layer, DispatchMode mode, std::span<const int> token_device,
                      std::span<const ExpertId> experts, int top_k, LayerDispatch& out) {
  const int devices = out.devices;
  const int* home = placement.home_devices(layer);
  const bool replicas = placement.has_replicas();
  constexpr int kMaxTopK = 64;
  int targets[kMaxTopK];
  long long local = 0;
  for (std::size_t token = 0; token < token_device.size(); ++token) {
    const int src = token_device[token];
    const ExpertId* routed = &experts[token * top_k];
    long long* copies_from_src = &out.copies[static_cast<std::size_t>(src) * devices];
    int distinct_remote = 0;
    for (int j = 0; j < top_k; ++j) {
      const int dst = replicas ? placement.serving_device(layer, routed[j], src) : home[routed[j]];
      ++out.expert_tokens[static_cast<std::size_t>(dst) * out.experts + routed[j]];
      ++out.device_tokens[dst];
      if (dst == src) {
        ++local;
      } else if (mode == DispatchMode::kPerExpert) {
        ++copies_from_src[dst];
      } else if (std::find(targets, targets + distinct_remote, dst) == targets + distinct_remote) {
        targets[distinct_remote++] = dst;
        if (mode == DispatchMode::kDedup) ++copies_from_src[dst];
      }
    }
    if (mode == DispatchMode::kAllGather)
      for (int dst = 0; dst < devices; ++dst) copies_from_src[dst] += dst != src ? 1 : 0;
  }
  out.local_activations += local;
  out.activations += static_cast<long long>(token_device.size()) * top_k;
}

}  // namespace semsim
