#pragma once
// Sem-MoE's inter-layer device affinity (design.md): an n-gram table over devices,
// Pr(device at L | devices at L-1 .. L-n), exported as the most likely next device A and its
// confidence A_p. A token's "device" at a layer is the one hosting most of its experts there.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "policies/placement.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

// The device hosting most of a token's `experts` (k ids, in the gate's order) at `layer`; ties go to
// the device that reached the winning tally first in gate order, so no device is favoured by its id.
int majority_device(const Placement& placement, int layer, const ExpertId* experts, int k);

struct DevicePrediction {
  int device = -1;        // -1: no prediction (key never profiled)
  double confidence = 0;  // A_p in [0, 1]
};

struct InterLayerTable {
  int lookback = 2;
  struct Entry {
    std::int16_t device = -1;
    float confidence = 0;
  };
  // [layer] -> entries keyed by key_of(devices at the previous min(lookback, layer) layers).
  std::vector<std::unordered_map<std::uint64_t, Entry>> next;

  // previous[0] = the device at layer-1, previous[1] at layer-2, ...; uses the first
  // min(lookback, layer, previous.size()) of them.
  DevicePrediction predict(int layer, std::span<const int> previous) const;
  static std::uint64_t key_of(std::span<const int> previous_devices);

  bool empty() const { return next.empty(); }
};

// Counts, over every routed token of `paths` and every MoE layer L >= 1, the token's majority
// device at L after its majority devices at the previous min(lookback, L) layers; A = the most
// frequent next device (ties: lowest id), A_p = its share of the key's occurrences.
InterLayerTable build_inter_layer_table(const Placement& placement, const RoutingTrace& paths, int lookback);

}  // namespace semsim
