#include "policies/contiguous_placement.hpp"

namespace semsim {

Placement contiguous_placement(int moe_layers, int experts, int devices) {
  Placement p;
  p.moe_layers = moe_layers;
  p.experts = experts;
  p.devices = devices;
  p.slots.assign(moe_layers, std::vector<std::vector<int>>(devices));
  for (int layer = 0; layer < moe_layers; ++layer)
    for (int expert = 0; expert < experts; ++expert)
      p.slots[layer][static_cast<long long>(expert) * devices / experts].push_back(expert);
  p.seal();
  return p;
}

}  // namespace semsim
