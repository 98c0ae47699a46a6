#pragma once
// Sem-MoE's inter-layer device affinity (design.md): an n-gram table over devices,
// Pr(device at L | devices at L-1 .. L-n), exported as the most likely next device A and its
// confidence A_p. A token's "device" at a layer is the one hosting most of its experts there.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace semsim {

struct DevicePrediction {
  int device = -1;        // -1: no prediction (key never profiled)
  double confidence = 0;  // A_p in [0, 1]
};

struct InterLayerTable {
  int lookback = 2;
  struct Entry {
    std::int16_t device = -1;
    float confidence = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  // [layer] -> entries keyed by key_of(devices at the previous min(lookback, layer) layers).
  std::vector<std::unordered_map<std::uint64_t, Entry>> next;

  // previous[0] = the device at layer-1, previous[1] at layer-2, ...; uses the first
  // min(lookback, layer, previous.size()) of them.
  DevicePrediction predict(int layer, std::span<const int> previous) const;
  static std::uint64_t key_of(std::span<const int> previous_devices);
  static std::vector<int> devices_of(std::uint64_t key);  // the inverse of key_of

  bool empty() const { return next.empty(); }
  friend bool operator==(const InterLayerTable&, const InterLayerTable&) = default;
};

}  // namespace semsim
