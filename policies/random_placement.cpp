#include "policies/random_placement.hpp"

#include <numeric>

#include "policies/contiguous_placement.hpp"
#include "workloads/counter_rng.hpp"

namespace semsim {

PlacementResult random_placement(const PlacementInput& input, const PolicyChoice& choice) {
  const auto seed = static_cast<std::uint64_t>(choice.whole_param("seed", 0, 1LL << 53));
  PlacementResult result;
  Placement& p = result.placement;
  p = contiguous_placement(input.moe_layers, input.experts, input.devices,
                           physical_slots(choice, input.experts, input.devices) - input.experts);
  p.devices_per_node = input.devices_per_node;
  std::vector<int> permutation(input.experts);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    // Fisher-Yates with counter-based draws: the same seed gives the same placement on every platform.
    std::iota(permutation.begin(), permutation.end(), 0);
    for (int i = input.experts - 1; i > 0; --i)
      std::swap(
          permutation[i],
          permutation[hash_keys(seed, static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(i)) %
                      static_cast<std::uint64_t>(i + 1)]);
    for (auto& device : p.slots[layer])
      for (int& expert : device) expert = permutation[expert];
  }
  p.seal();
  return result;
}

}  // namespace semsim
