#include "policies/set_dispatch.hpp"

#include "policies/dispatch_lanes.hpp"

namespace semsim {

using Words = LaneWords<std::uint64_t>;

SetDispatch::SetDispatch(const Placement& placement, const SyntheticRouting& routing)
    : placement_(placement),
      routing_(routing),
      expert_lanes_(static_cast<std::size_t>(routing.moe_layers()) * routing.experts()),
      expert_counter_(expert_lanes_.size()) {
  const auto experts = static_cast<std::size_t>(routing.experts());
  if (placement.has_replicas()) return;  // covers() nothing
  for (int layer = 0; layer < routing.moe_layers(); ++layer) {
    const int* home = placement.home_devices(layer);
    for (std::size_t expert = 0; expert < experts; ++expert) {
      expert_lanes_[layer * experts + expert] = Words::one(home[expert]);
      expert_counter_[layer * experts + expert] = static_cast<std::uint32_t>(home[expert] * experts + expert);
    }
  }
}

bool SetDispatch::covers(DispatchMode mode, int devices) const {
  return !placement_.has_replicas() && counts_in_lanes(counted_mode(mode)) && devices <= kMaxDevices &&
         routing_.top_k() <= kLaneTopK;
}

namespace {

// One layer's counting over the chunks the routing visits.
struct SetCounting {
  const std::uint64_t* expert_lanes;  // [expert]: a 1 in its device's lane
  const std::uint32_t* counter;       // [expert]: its index in expert_tokens
  int* expert_tokens;
  long long* copy_counts;
  DispatchMode mode;
  std::uint64_t every_device;
  CopyLanes<std::uint64_t> copies;
  const int* device;  // the next token's
  long long local = 0;

  // kFixed: top-k compiled in, so that a set's loop unrolls (0: `k` at run time).
  template <int kFixed, typename Id>
  void chunk(std::size_t count, const Id* const* sets, int k) {
    if (kFixed > 0) k = kFixed;
    for (std::size_t i = 0; i < count; ++i, ++device) {
      std::uint64_t lanes = 0;
      for (int j = 0; j < k; ++j) {
        const auto expert = sets[i][j];
        ++expert_tokens[counter[expert]];
        lanes += expert_lanes[expert];
      }
      local += Words::lane(lanes, *device);
      copies.add(*device, token_copies(mode, lanes, *device, every_device), copy_counts);
    }
  }
};

}  // namespace

void SetDispatch::account(int layer, DispatchMode mode, std::span<const TokenRef> tokens,
                          std::span<const int> token_device, LayerDispatch& out) {
  if (!covers(mode, out.devices)) throw std::logic_error("SetDispatch: a case it does not cover");
  mode = counted_mode(mode);
  ++out.dispatches;
  const int k = routing_.top_k();
  const std::size_t first = static_cast<std::size_t>(layer) * routing_.experts();
  SetCounting counting{&expert_lanes_[first],
                       &expert_counter_[first],
                       out.expert_tokens.data(),
                       out.copies.data(),
                       mode,
                       Words::every_device(out.devices),
                       CopyLanes<std::uint64_t>(out.devices, mode == DispatchMode::kPerExpert ? k : 1),
                       token_device.data()};
  routing_.visit_sets(layer, tokens, [&](std::size_t count, const auto* sets) {
    switch (k) {
      case 6:
        return counting.chunk<6>(count, sets, k);
      case 8:
        return counting.chunk<8>(count, sets, k);
      default:
        return counting.chunk<0>(count, sets, k);
    }
  });
  counting.copies.flush(out.copies.data());
  count_device_loads(placement_, layer, out);
  out.local_activations += counting.local;
  out.activations += static_cast<long long>(tokens.size()) * k;
}

}  // namespace semsim
