#include "policies/eplb_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/input_error.hpp"
#include "policies/eplb.hpp"

namespace semsim {
namespace {

bool contains(const std::vector<int>& experts, int expert) {
  return std::find(experts.begin(), experts.end(), expert) != experts.end();
}

struct DuplicateRepair {
  int swapped = 0;
  int dropped = 0;
};

// Removes second replicas of an expert on one device (EPLB's packing can produce them): swaps each
// with the slot of another device in the same group (the node EPLB packed it in) whose per-replica
// load is closest, such that neither device then holds an expert twice; drops it when no such slot
// exists.
void repair_duplicates(std::vector<std::vector<int>>& device_slots, const std::vector<double>& replica_load,
                       int devices_per_group, DuplicateRepair& repair) {
  const int devices = static_cast<int>(device_slots.size());
  for (int device = 0; device < devices; ++device) {
    std::vector<int>& mine = device_slots[device];
    for (std::size_t i = 0; i < mine.size();) {
      const int expert = mine[i];
      if (std::find(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(i), expert) ==
          mine.begin() + static_cast<std::ptrdiff_t>(i)) {
        ++i;
        continue;
      }
      int best_device = -1;
      std::size_t best_slot = 0;
      double best_gap = std::numeric_limits<double>::infinity();
      const int group_begin = device / devices_per_group * devices_per_group;
      for (int other = group_begin; other < group_begin + devices_per_group; ++other) {
        if (other == device || contains(device_slots[other], expert)) continue;
        for (std::size_t j = 0; j < device_slots[other].size(); ++j) {
          const int candidate = device_slots[other][j];
          const double gap = std::abs(replica_load[candidate] - replica_load[expert]);
          if (!contains(mine, candidate) && gap < best_gap) {
            best_gap = gap;
            best_device = other;
            best_slot = j;
          }
        }
      }
      if (best_device < 0) {
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(i));
        ++repair.dropped;
        continue;
      }
      std::swap(mine[i], device_slots[best_device][best_slot]);
      ++repair.swapped;
      ++i;
    }
  }
}

}  // namespace

PlacementResult eplb_placement(const PlacementInput& input, const PolicyChoice& choice) {
  const int devices = input.devices;
  const int experts = input.experts;
  const long long groups_param = choice.whole_param("groups", 0, experts);
  const int groups = groups_param == 0 ? input.expert_groups : static_cast<int>(groups_param);
  const int per_node =
      input.devices_per_node > 0 && input.devices_per_node < devices ? input.devices_per_node : devices;
  const int nodes = devices / per_node;
  // place_experts checked that the devices split the physical slots evenly.
  const int physical = physical_slots(choice, experts, devices);

  LoadMatrix weight(input.moe_layers);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    const auto load = input.profile->expert_load(layer);
    weight[layer].assign(load.begin(), load.end());
  }
  EplbPlacement eplb;
  try {
    eplb = rebalance_experts(weight, physical, groups, nodes, devices);
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format(
        "placement policy 'eplb' ({} experts in {} groups, {} physical slots, {} devices in {} nodes): {}",
        experts, groups, physical, devices, nodes, e.what()));
  }

  PlacementResult result;
  Placement& p = result.placement;
  p.moe_layers = input.moe_layers;
  p.experts = experts;
  p.devices = devices;
  p.devices_per_node = per_node;
  p.slots.resize(input.moe_layers);
  const int slots_per_device = physical / devices;
  // The global policy (groups not divisible by nodes) packs over all devices as one node.
  const bool hierarchical = groups % nodes == 0;
  DuplicateRepair repair;
  std::vector<double> replica_load(experts);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    auto& device_slots = p.slots[layer];
    device_slots.assign(devices, {});
    for (int slot = 0; slot < physical; ++slot)
      device_slots[slot / slots_per_device].push_back(eplb.physical_to_logical[layer][slot]);
    for (int e = 0; e < experts; ++e) replica_load[e] = weight[layer][e] / eplb.logical_count[layer][e];
    repair_duplicates(device_slots, replica_load, hierarchical ? per_node : devices, repair);
  }
  p.seal();
  result.solver = {{"physical_slots", physical},
                   {"groups", groups},
                   {"nodes", nodes},
                   {"hierarchical", hierarchical ? 1 : 0},
                   {"duplicates_swapped", repair.swapped},
                   {"duplicates_dropped", repair.dropped}};
  return result;
}

}  // namespace semsim
