#include "policies/placement.hpp"

#include <stdexcept>
#include <string>

namespace semsim {

void Placement::seal() {
  if (static_cast<int>(slots.size()) != moe_layers) throw std::logic_error("placement: wrong layer count");
  home_.assign(static_cast<std::size_t>(moe_layers) * experts, -1);
  hosted_.assign(static_cast<std::size_t>(moe_layers) * devices * experts, 0);
  replicated_ = 0;
  for (int layer = 0; layer < moe_layers; ++layer) {
    if (static_cast<int>(slots[layer].size()) != devices)
      throw std::logic_error("placement: wrong device count");
    for (int device = 0; device < devices; ++device) {
      for (int expert : slots[layer][device]) {
        if (expert < 0 || expert >= experts)
          throw std::logic_error("placement: expert id " + std::to_string(expert) + " out of range");
        hosted_[(static_cast<std::size_t>(layer) * devices + device) * experts + expert] = 1;
        int& home = home_[static_cast<std::size_t>(layer) * experts + expert];
        if (home < 0)
          home = device;
        else if (home != device)
          ++replicated_;
      }
    }
    for (int expert = 0; expert < experts; ++expert)
      if (home_[static_cast<std::size_t>(layer) * experts + expert] < 0)
        throw std::logic_error("placement: expert " + std::to_string(expert) + " of layer " +
                               std::to_string(layer) + " is hosted nowhere");
  }
}

bool Placement::hosts(int layer, int expert, int device) const {
  return hosted_[(static_cast<std::size_t>(layer) * devices + device) * experts + expert] != 0;
}

long long Placement::slots_on_device(int device) const {
  long long count = 0;
  for (const auto& layer : slots) count += static_cast<long long>(layer[device].size());
  return count;
}

}  // namespace semsim
