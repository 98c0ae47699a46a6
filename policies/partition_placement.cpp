#include "policies/partition_placement.hpp"

#include <algorithm>
#include <numeric>

#include "policies/spare_slot_replicas.hpp"

namespace semsim {

Placement placement_from_devices(const std::vector<std::vector<int>>& device_of_expert, int experts,
                                 int devices, const RoutingProfile* profile, int slots_per_device) {
  Placement placement;
  placement.moe_layers = static_cast<int>(device_of_expert.size());
  placement.experts = experts;
  placement.devices = devices;
  placement.slots.assign(device_of_expert.size(), std::vector<std::vector<int>>(devices));
  for (std::size_t layer = 0; layer < device_of_expert.size(); ++layer) {
    auto& slots = placement.slots[layer];
    for (int expert = 0; expert < experts; ++expert) slots[device_of_expert[layer][expert]].push_back(expert);
    if (profile == nullptr || slots_per_device * devices <= experts) continue;
    const std::span<const long long> load = profile->expert_load(static_cast<int>(layer));
    const double total = std::max(1.0, static_cast<double>(std::accumulate(load.begin(), load.end(), 0LL)));
    std::vector<double> expert_load(experts), demand(static_cast<std::size_t>(devices) * experts, 0.0);
    for (int e = 0; e < experts; ++e) expert_load[e] = static_cast<double>(load[e]) / total;
    for (int d = 0; d < devices; ++d)
      for (int e = 0; e < experts; ++e)
        for (const int other : slots[d])
          if (other != e)
            demand[static_cast<std::size_t>(d) * experts + e] +=
                static_cast<double>(profile->coactivation(static_cast<int>(layer), e, other)) / total;
    slots = fill_spare_slots(std::move(slots), slots_per_device, expert_load, demand);
  }
  placement.seal();
  return placement;
}

}  // namespace semsim
