#pragma once
// Placement policies: pure functions from a placement problem (model shape, devices, the profiled
// routing when the policy needs it) to physical expert slots per device, and — for policies that
// co-cluster tokens with experts (semmoe, ilp) — a token→device table. Each is one file, registered
// in policies/policy_registry.cpp.
#include <map>
#include <string>

#include "models/progress.hpp"
#include "policies/placement.hpp"
#include "policies/policy_params.hpp"
#include "policies/token_device_table.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {

struct PlacementInput {
  int moe_layers = 0;
  int experts = 0;
  int devices = 0;
  int devices_per_node = 0;                 // 0: every device in one node (EPLB's hierarchy, replica choice)
  int expert_groups = 1;                    // the model's expert groups (DeepSeek's n_group), for EPLB
  const RoutingProfile* profile = nullptr;  // profiled routing; required by profile-driven policies
  ProgressCallback progress = {};           // told each MoE layer solved, by the layer-by-layer policies
};

struct PlacementResult {
  Placement placement;                   // sealed
  TokenDeviceTable token_devices;        // empty unless the policy assigns tokens to devices itself
  std::map<std::string, double> solver;  // what the solver reports: objective, gap, iterations, ...
};

// Runs the named policy. InputError when it is unknown, when it needs a profile and `input.profile`
// is null, when the profile's shape (layers, experts) differs from the input's, or when the devices
// cannot hold its physical slots (physical_slots_problem).
PlacementResult place_experts(const PlacementInput& input, const PolicyChoice& choice);

// The physical expert slots per layer a policy fills: the logical experts plus its `redundant`
// parameter (EPLB's -1: one per device); the experts alone for a policy without the parameter,
// which places no replicas.
int physical_slots(const PolicyChoice& choice, int experts, int devices);

// The fewest redundant experts, at least `redundant`, whose slots split evenly over `devices`.
int redundant_experts_that_fit(int experts, int redundant, int devices);

// Why `devices` cannot hold the policy's physical slots, as a sentence that names the redundant
// experts that would fit (and, for a policy that places no replicas, those that do); "" when they
// can. The slots must split evenly over the devices, at most one slot per expert on each (an EP size
// that divides the experts needs no redundancy). `experts_of` names the experts' model, "" for none.
std::string physical_slots_problem(const PolicyChoice& choice, int experts, int devices,
                                   const std::string& experts_of);

}  // namespace semsim
