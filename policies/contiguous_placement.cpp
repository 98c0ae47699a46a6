#include "policies/contiguous_placement.hpp"

namespace semsim {

Placement contiguous_placement(int moe_layers, int experts, int devices, int redundant) {
  Placement p;
  p.moe_layers = moe_layers;
  p.experts = experts;
  p.devices = devices;
  p.slots.assign(moe_layers, std::vector<std::vector<int>>(devices));
  const long long physical = static_cast<long long>(experts) + redundant;
  for (int layer = 0; layer < moe_layers; ++layer)
    for (long long slot = 0; slot < physical; ++slot)
      p.slots[layer][slot * devices / physical].push_back(static_cast<int>(slot % experts));
  p.seal();
  return p;
}

}  // namespace semsim
