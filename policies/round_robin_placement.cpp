#include "policies/round_robin_placement.hpp"

namespace semsim {

PlacementResult round_robin_placement(const PlacementInput& input, const PolicyChoice&) {
  PlacementResult result;
  Placement& p = result.placement;
  p.moe_layers = input.moe_layers;
  p.experts = input.experts;
  p.devices = input.devices;
  p.devices_per_node = input.devices_per_node;
  p.slots.assign(input.moe_layers, std::vector<std::vector<int>>(input.devices));
  for (auto& layer : p.slots)
    for (int expert = 0; expert < input.experts; ++expert) layer[expert % input.devices].push_back(expert);
  p.seal();
  return result;
}

}  // namespace semsim
