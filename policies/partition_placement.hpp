#pragma once
// What the policies that partition each layer's experts into equal device groups share (coact,
// ilp): the conversion of an expert -> device map into slots, with replicas in the spare slots of
// redundant experts. That N/D is whole is the registry's rule (equal_groups).
#include <vector>

#include "policies/placement.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {

// Sealed placement from device_of_expert[layer][expert]; each device's slots are in increasing
// expert id. With `slots_per_device` above experts / devices, each device's spare slots hold
// replicas (policies/spare_slot_replicas.hpp) chosen from `profile`: the experts of most load per
// replica, each where the experts it is co-activated with are (the demand of device d for expert e:
// e's co-activations with d's experts, over all activations).
Placement placement_from_devices(const std::vector<std::vector<int>>& device_of_expert, int experts,
                                 int devices, const RoutingProfile* profile = nullptr,
                                 int slots_per_device = 0);

}  // namespace semsim
