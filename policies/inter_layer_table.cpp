#include "policies/inter_layer_table.hpp"

#include <algorithm>

namespace semsim {

std::uint64_t InterLayerTable::key_of(std::span<const int> previous_devices) {
  // Devices fit in 15 bits; one more bit marks each present entry so shorter histories never collide.
  std::uint64_t key = 0;
  for (int device : previous_devices)
    key = (key << 16) | 0x8000u | static_cast<std::uint64_t>(device & 0x7fff);
  return key;
}

std::vector<int> InterLayerTable::devices_of(std::uint64_t key) {
  std::vector<int> devices;
  for (; key != 0; key >>= 16) devices.insert(devices.begin(), static_cast<int>(key & 0x7fff));
  return devices;
}

DevicePrediction InterLayerTable::predict(int layer, std::span<const int> previous) const {
  if (layer <= 0 || layer >= static_cast<int>(next.size())) return {};
  const auto used = static_cast<std::size_t>(std::min({lookback, layer, static_cast<int>(previous.size())}));
  const auto& entries = next[layer];
  const auto found = entries.find(key_of(previous.first(used)));
  if (found == entries.end()) return {};
  return {found->second.device, found->second.confidence};
}

}  // namespace semsim
