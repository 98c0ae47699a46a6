#include "policies/partition_placement.hpp"

#include <fmt/format.h>

#include "models/input_error.hpp"

namespace semsim {

int experts_per_device(const std::string& policy, int experts, int devices) {
  if (devices <= 0 || experts <= 0 || experts % devices != 0)
    throw InputError(
        fmt::format("placement policy '{}' needs the {} experts to split evenly over the {} devices", policy,
                    experts, devices));
  return experts / devices;
}

Placement placement_from_devices(const std::vector<std::vector<int>>& device_of_expert, int experts,
                                 int devices) {
  Placement placement;
  placement.moe_layers = static_cast<int>(device_of_expert.size());
  placement.experts = experts;
  placement.devices = devices;
  placement.slots.assign(device_of_expert.size(), std::vector<std::vector<int>>(devices));
  for (std::size_t layer = 0; layer < device_of_expert.size(); ++layer)
    for (int expert = 0; expert < experts; ++expert)
      placement.slots[layer][device_of_expert[layer][expert]].push_back(expert);
  placement.seal();
  return placement;
}

}  // namespace semsim
