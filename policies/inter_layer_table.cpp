#include "policies/inter_layer_table.hpp"

#include <algorithm>
#include <map>

#include "models/input_error.hpp"

namespace semsim {

int majority_device(const Placement& placement, int layer, const ExpertId* experts, int k) {
  constexpr int kMaxTopK = 64;
  int device_of[kMaxTopK];
  int best = -1, best_count = 0;
  for (int i = 0; i < k; ++i) {
    // The token's own copy is where it is served from; with replicas, count the home device.
    device_of[i] = placement.home_devices(layer)[experts[i]];
    int count = 0;
    for (int j = 0; j <= i; ++j) count += device_of[j] == device_of[i] ? 1 : 0;
    // count is this device's tally among the first i+1 experts; only a strictly higher tally moves.
    if (count > best_count) best = device_of[i], best_count = count;
  }
  return best;
}

InterLayerTable build_inter_layer_table(const Placement& placement, const RoutingTrace& paths, int lookback) {
  if (lookback < 1 || lookback > 4) throw InputError("inter-layer lookback must be 1..4");
  const TraceHeader& h = paths.header();
  if (h.moe_layers != placement.moe_layers || h.experts != placement.experts)
    throw InputError("inter-layer table: the routing and the placement differ in layers or experts");
  const int layers = h.moe_layers, k = h.top_k;
  // Ordered maps: the table and its ties come out the same on every run.
  std::vector<std::map<std::uint64_t, std::vector<long long>>> counts(layers);
  std::vector<int> devices(layers);
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(paths.tokens()); ++t) {
    for (int layer = 0; layer < layers; ++layer)
      devices[layer] = majority_device(placement, layer, paths.experts_of(t, layer), k);
    for (int layer = 1; layer < layers; ++layer) {
      std::vector<int> previous;
      for (int back = 1; back <= std::min(lookback, layer); ++back) previous.push_back(devices[layer - back]);
      auto& tally = counts[layer][InterLayerTable::key_of(previous)];
      tally.resize(placement.devices, 0);
      ++tally[devices[layer]];
    }
  }
  InterLayerTable table;
  table.lookback = lookback;
  table.next.resize(layers);
  for (int layer = 1; layer < layers; ++layer)
    for (const auto& [key, tally] : counts[layer]) {
      const auto best = std::max_element(tally.begin(), tally.end());
      long long total = 0;
      for (long long n : tally) total += n;
      table.next[layer][key] = {static_cast<std::int16_t>(best - tally.begin()),
                                static_cast<float>(static_cast<double>(*best) / static_cast<double>(total))};
    }
  return table;
}

std::uint64_t InterLayerTable::key_of(std::span<const int> previous_devices) {
  // Devices fit in 15 bits; one more bit marks each present entry so shorter histories never collide.
  std::uint64_t key = 0;
  for (int device : previous_devices)
    key = (key << 16) | 0x8000u | static_cast<std::uint64_t>(device & 0x7fff);
  return key;
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
