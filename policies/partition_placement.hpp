#pragma once
// Helpers shared by the policies that partition each layer's experts into equal device groups
// (coact, ilp): the shape check and the conversion of an expert -> device map into slots.
#include <string>
#include <vector>

#include "policies/placement.hpp"

namespace semsim {

// Experts per device; InputError naming `policy` unless `experts` is a positive multiple of
// `devices`.
int experts_per_device(const std::string& policy, int experts, int devices);

// Sealed placement without replicas from device_of_expert[layer][expert]; each device's slots are in
// increasing expert id.
Placement placement_from_devices(const std::vector<std::vector<int>>& device_of_expert, int experts,
                                 int devices);

}  // namespace semsim
