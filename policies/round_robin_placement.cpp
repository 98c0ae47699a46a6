#include "policies/round_robin_placement.hpp"

#include <numeric>

namespace semsim {

PlacementResult round_robin_placement(const PlacementInput& input, const PolicyChoice& choice) {
  PlacementResult result;
  Placement& p = result.placement;
  p.moe_layers = input.moe_layers;
  p.experts = input.experts;
  p.devices = input.devices;
  p.devices_per_node = input.devices_per_node;
  p.slots.assign(input.moe_layers, std::vector<std::vector<int>>(input.devices));
  const long long physical = physical_slots(choice, input.experts, input.devices);
  const long long round = std::lcm(static_cast<long long>(input.experts), input.devices);
  for (auto& layer : p.slots)
    for (long long slot = 0; slot < physical; ++slot)
      layer[(slot + slot / round) % input.devices].push_back(static_cast<int>(slot % input.experts));
  p.seal();
  return result;
}

}  // namespace semsim
