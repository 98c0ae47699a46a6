#pragma once
// Sem-MoE's inter-layer device affinity (design.md): an n-gram table over devices,
// Pr(device at L | devices at L-1 .. L-n), exported as the most likely next device A and its
// confidence A_p. A token's "device" at a layer is the one hosting most of its experts there.
#include <cstdint>
#include <span>
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
  int devices = 0;
  struct Entry {
    std::int16_t device = -1;  // -1: key never profiled
    float confidence = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  // [layer][key_index(previous devices)]: dense, so a prediction is one array read. A key is the
  // devices at the previous h = min(lookback, layer) layers; keys of every length share one array.
  std::vector<std::vector<Entry>> next;

  // Sizes `next` for `layers` MoE layers (every entry empty). InputError when the dense table would
  // exceed 2^22 keys per layer (devices^lookback too large).
  void reset(int layers, int device_count, int lookback_layers);
  // previous[0] = the device at layer-1, previous[1] at layer-2, ...; all of them form the key.
  std::size_t key_index(std::span<const int> previous) const {
    // Keys of length h follow all shorter keys: offset = D + D^2 + ... + D^(h-1).
    std::size_t offset = 0, power = 1, index = 0;
    for (std::size_t b = 0; b < previous.size(); ++b) {
      offset += b == 0 ? 0 : power;
      index += static_cast<std::size_t>(previous[b]) * power;
      power *= static_cast<std::size_t>(devices);
    }
    return offset + index;
  }
  // The devices of the key at `index` (inverse of key_index), for writing the table out.
  std::vector<int> key_devices(std::size_t index) const;

  // How many previous devices form the key at `layer` when `available` are known:
  // min(lookback, layer, available); 0 where the table cannot predict.
  std::size_t key_length(int layer, std::size_t available) const {
    if (layer <= 0 || static_cast<std::size_t>(layer) >= next.size()) return 0;
    const auto used = static_cast<std::size_t>(lookback < layer ? lookback : layer);
    return available < used ? available : used;
  }

  // Uses the first key_length(layer, previous.size()) devices of `previous`.
  DevicePrediction predict(int layer, std::span<const int> previous) const {
    const std::size_t used = key_length(layer, previous.size());
    if (used == 0) return {};
    const Entry& e = next[layer][key_index(previous.first(used))];
    return {e.device, e.confidence};
  }

  bool empty() const { return next.empty(); }
  friend bool operator==(const InterLayerTable&, const InterLayerTable&) = default;
};

// Counts, over every routed token of `paths` and every MoE layer L >= 1, the token's majority
// device at L after its majority devices at the previous min(lookback, L) layers; A = the most
// frequent next device (ties: lowest id), A_p = its share of the key's occurrences.
InterLayerTable build_inter_layer_table(const Placement& placement, const RoutingTrace& paths, int lookback);

}  // namespace semsim
