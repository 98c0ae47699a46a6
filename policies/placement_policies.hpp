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

struct PlacementScoring;  // policies/cost_scored_placement.hpp

struct PlacementInput {
  int moe_layers = 0;
  int experts = 0;
  int devices = 0;
  int devices_per_node = 0;                 // 0: every device in one node (EPLB's hierarchy, replica choice)
  int expert_groups = 1;                    // the model's expert groups (DeepSeek's n_group), for EPLB
  const RoutingProfile* profile = nullptr;  // profiled routing; required by profile-driven policies
  ProgressCallback progress = {};           // told each MoE layer solved, by the layer-by-layer policies
  const PlacementScoring* scoring = nullptr;  // a run's pricing of plans; required by cost-scored policies
};

struct PlacementResult {
  Placement placement;                   // sealed
  TokenDeviceTable token_devices;        // empty unless the policy assigns tokens to devices itself
  std::map<std::string, double> solver;  // what the solver reports: objective, gap, iterations, ...
};

// Runs the named policy. InputError when it is unknown, when it needs a profile and `input.profile`
// is null, when the profile's shape (layers, experts) differs from the input's, or when the devices
// cannot hold its physical slots (check_physical_slots).
PlacementResult place_experts(const PlacementInput& input, const PolicyChoice& choice);

// The parameter of every placement policy that fills redundant slots (physical_slots reads it),
// with the policy's default count.
ParamSpec redundant_experts(double default_value);

// The physical expert slots per layer a policy fills: the logical experts plus its `redundant`
// parameter (EPLB's -1: one per device); the experts alone for a policy without the parameter.
int physical_slots(const PolicyChoice& choice, int experts, int devices);

struct PhysicalSlotsCheck {
  std::string problem;           // "" when the devices can hold the slots
  int redundant_that_fits = -1;  // the fewest redundant experts, at least the policy's count (1 for -1,
                                 // one per device), that would; -1: none
  bool another_policy = false;   // they would with another policy only (this one keeps N/D per device)
};

// Whether `devices` can hold the policy's physical slots: they must split evenly over the devices,
// at most one slot per expert on each (so an EP size that divides the experts needs no redundancy),
// and for a policy of equal groups (coact, ilp) the EP size must divide the experts. The problem is
// a sentence naming the redundant experts that would fit and, where this policy cannot place them,
// the policies that can. `experts_of` names the experts' model, "" for none.
PhysicalSlotsCheck check_physical_slots(const PolicyChoice& choice, int experts, int devices,
                                        const std::string& experts_of);

}  // namespace semsim
