#include "policies/inter_layer_table.hpp"

#include <fmt/format.h>
#include <algorithm>

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
  const TraceHeader& h = paths.header();
  if (h.moe_layers != placement.moe_layers || h.experts != placement.experts)
    throw InputError("inter-layer table: the routing and the placement differ in layers or experts");
  const int layers = h.moe_layers, k = h.top_k, devices = placement.devices;
  InterLayerTable table;
  table.reset(layers, devices, lookback);
  const auto tokens = static_cast<std::size_t>(paths.tokens());
  // Layer by layer: each token's majority devices at the previous layers (newest first), and one
  // code per token = key * devices + next device; sorted codes give the tallies in key order.
  std::vector<int> history(tokens * lookback, 0);
  std::vector<std::uint64_t> codes(tokens);
  for (int layer = 0; layer < layers; ++layer) {
    const int used = std::min(lookback, layer);
    for (std::size_t t = 0; t < tokens; ++t) {
      const int device =
          majority_device(placement, layer, paths.experts_of(static_cast<std::int64_t>(t), layer), k);
      int* previous = history.data() + t * lookback;
      if (used > 0) codes[t] = table.key_index(std::span<const int>(previous, used)) * devices + device;
      std::copy_backward(previous, previous + lookback - 1, previous + lookback);
      previous[0] = device;
    }
    if (used == 0) continue;
    std::sort(codes.begin(), codes.end());
    for (std::size_t first = 0; first < tokens;) {
      const std::uint64_t key = codes[first] / devices;
      std::size_t end = first, best_count = 0;
      int best = -1;
      while (end < tokens && codes[end] / devices == key) {
        std::size_t same = end;
        while (same < tokens && codes[same] == codes[end]) ++same;
        if (same - end > best_count) best_count = same - end, best = static_cast<int>(codes[end] % devices);
        end = same;
      }
      table.next[layer][key] = {
          static_cast<std::int16_t>(best),
          static_cast<float>(static_cast<double>(best_count) / static_cast<double>(end - first))};
      first = end;
    }
  }
  return table;
}

void InterLayerTable::reset(int layers, int device_count, int lookback_layers) {
  if (lookback_layers < 1 || lookback_layers > 4) throw InputError("inter-layer lookback must be 1..4");
  std::size_t keys = 0, power = 1;
  for (int h = 1; h <= lookback_layers; ++h) {
    power *= static_cast<std::size_t>(device_count);
    keys += power;
    if (keys > (std::size_t{1} << 22))
      throw InputError(
          fmt::format("inter-layer lookback {} over {} devices needs more than 2^22 keys per layer",
                      lookback_layers, device_count));
  }
  lookback = lookback_layers;
  devices = device_count;
  next.assign(layers, std::vector<Entry>(keys));
}

std::vector<int> InterLayerTable::key_devices(std::size_t index) const {
  std::size_t length = 1, count = static_cast<std::size_t>(devices);
  while (index >= count) index -= count, count *= static_cast<std::size_t>(devices), ++length;
  std::vector<int> key(length);
  for (std::size_t b = 0; b < length; ++b) key[b] = static_cast<int>(index % devices), index /= devices;
  return key;
}

}  // namespace semsim
