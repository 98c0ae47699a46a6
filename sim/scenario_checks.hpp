#pragma once
// Checks across the keys of a scenario, once each section has been read on its own: the placement's
// slots against the EP size, a DeepEP dispatch against the serving limits and nodes, the policies'
// requirements against the plan. Errors are InputErrors at the key a user would change.
#include <string>
#include <vector>

#include "calibrate/fit/interpolation.hpp"
#include "models/yaml_input.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "sim/scenario.hpp"

namespace semsim {

// Where errors about a policy kind are reported: its key under `policies`, or where it would be.
YamlInput policy_key(const YamlInput& root, PolicyKind kind);
// Replicas in the token's node are preferred; an EP group smaller than a node is one node.
int placement_devices_per_node(const Scenario& s);

// A dense model (no experts) has no routing to place or schedule by: refused with one error naming
// the model when the scenario gives a routing profile, a placement file, a routing trace or a policy
// that reads a profile (Sem-MoE's, EPLB, ...). Other placement, dispatch and replica-choice policies
// have nothing to act on and are left as they are.
void check_dense_model(const YamlInput& root, const Scenario& s);
// The EP devices split the placement policy's physical slots evenly.
void check_expert_slots(const YamlInput& root, const Scenario& s);
// Experts split by tensor parallelism take no placement, dispatch, token or replica policy.
void check_experts_tensor_parallel(const YamlInput& root, const Scenario& s);
// A DeepEP dispatch leaves serving.ep_kernel auto or nccl, fills whole nodes and fits its buffers.
void check_deepep_dispatch(const YamlInput& root, const Scenario& s);
// An EP group larger than a node fills whole nodes.
void check_whole_nodes(const YamlInput& root, const Scenario& s);
// Whole nodes of the cluster that the serving group leaves idle (`--nodes 2` on an EP8 scenario):
// a warning naming the devices left idle and saying that per-node figures count the nodes in use
// (none when every node serves). A disaggregated scenario's pools are each checked on their nodes.
std::vector<std::string> idle_nodes_warnings(const Scenario& s);
// A calibration grid error of the run, located at the scenario key whose value set the axis that
// asked (workload.input_len for attention's context, serving.max_batch_tokens for a GEMM's tokens,
// ...; the nearest key the scenario has) and naming the profile's file.
InputError located_grid_error(const Scenario& s, const CalibrationGridError& e);
// The requirements of every policy but the placement, once the plan says whether it was profiled.
void check_policies_on_plan(const YamlInput& root, const Scenario& s, const PlacementPlan& plan);
// A placement file is an input: read and checked against the scenario when it is loaded (a placement
// policy's own requirements are checked here too, before it runs).
void read_placement_input(const YamlInput& root, Scenario& s);

}  // namespace semsim
