#pragma once
// Everything an offline placement produces and the online schedulers read: expert slots per device
// (replicas allowed), Sem-MoE's token→device table T/T_p and inter-layer device table A/A_p, and
// how the plan was made. Saved and loaded as a versioned file (policies/placement_file.hpp).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policies/inter_layer_table.hpp"
#include "policies/placement.hpp"
#include "policies/placement_policies.hpp"
#include "policies/policy_params.hpp"
#include "policies/token_device_table.hpp"

namespace semsim {

struct PlacementPlan {
  PolicyChoice policy;                   // name and every parameter
  Placement placement;                   // sealed
  TokenDeviceTable token_devices;        // T, T_p (the policy's own, or derived from the placement)
  InterLayerTable inter_layer;           // A, A_p
  std::map<std::string, double> solver;  // what the policy's solver reported
  double solver_seconds = 0;             // wall time of the policy alone
  std::optional<ProfileSource> profiled_on;  // the profile's trace, split and seed, when it recorded them

  // Made from a routing profile: T and A, or A alone when the profile had no token identities (an
  // id-less trace's), which is all Sem-MoE's online schedulers then have to go by.
  bool profiled() const { return !token_devices.empty() || !inter_layer.empty(); }

  friend bool operator==(const PlacementPlan&, const PlacementPlan&) = default;
};

struct PlanOptions {
  int lookback = 2;             // inter-layer table: previous layers in a key
  double token_balance = 1.10;  // T completion: token load within this × mean per device
};

// Runs the policy (timed), then completes T for the tokens it left unassigned
// (complete_token_devices, then the normalized-text fallback) and builds A from the profile's
// routing paths. Without a profile the plan holds the slots only.
PlacementPlan make_placement_plan(const PlacementInput& input, const PolicyChoice& choice,
                                  const PlanOptions& options = {});

// The plan with its token table re-keyed to the ids of `vocabulary` (token_table_for), for replaying
// or evaluating a trace other than the profiled one; `plan` itself when already keyed by it.
std::shared_ptr<const PlacementPlan> plan_for_vocabulary(std::shared_ptr<const PlacementPlan> plan,
                                                         const std::vector<std::string>& vocabulary,
                                                         TokenTableMatch& match);

}  // namespace semsim
