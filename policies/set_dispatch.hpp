#pragma once
// account_dispatch fused with synthetic routing: each token's expert set is read where the routing
// keeps it, never copied out, and its experts' devices and counters come from per-layer tables. The counters
// are account_dispatch's, exactly (tested against it); it covers placements without replicas, the modes
// counted in lanes (dedup, per-expert and DeepEP's low-latency, all-gather) and groups of up to 8 devices,
// and callers use account_dispatch otherwise.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/dispatch.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {

class SetDispatch {
 public:
  static constexpr int kMaxDevices = 8;
  SetDispatch(const Placement& placement, const SyntheticRouting& routing);
  // Whether account() counts `mode` on `devices` devices.
  bool covers(DispatchMode mode, int devices) const;
  // As account_dispatch(placement, layer, mode, token_device, experts, top_k, out) where
  // `experts` is what routing.route(layer, tokens, ...) writes.
  void account(int layer, DispatchMode mode, std::span<const TokenRef> tokens,
               std::span<const int> token_device, LayerDispatch& out);

 private:
  const Placement& placement_;
  const SyntheticRouting& routing_;
  std::vector<std::uint64_t> expert_lanes_;    // [layer * experts + expert]: a 1 in its device's lane
  std::vector<std::uint32_t> expert_counter_;  // [layer * experts + expert]: its index in expert_tokens
};

}  // namespace semsim
