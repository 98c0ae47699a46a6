#pragma once
// What a scenario's placement costs in memory, planned once per run by build_run (sim/run_plan.hpp).
#include "models/yaml_input.hpp"
#include "policies/placement.hpp"
#include "sim/scenario.hpp"

namespace semsim {

struct MemoryPlan {
  // KV-cache capacity of one DP rank in tokens, after weights (validated > one longest request).
  // Attention-TP: of the group, each device holding its shard of every token's KV.
  long long kv_capacity_tokens = 0;
  double weight_bytes_per_device = 0;        // the device with the most expert slots (replicas cost weights)
  double draft_weight_bytes_per_device = 0;  // of those, speculative decoding's MTP layer or draft model
  double dispatch_buffer_bytes_per_device = 0;  // DeepEP's low-latency buffers (policies/dispatch.hpp)
  int physical_slots_per_layer = 0;             // expert slots of the fullest MoE layer, replicas included
  int redundant_experts = 0;                    // ... beyond the logical experts
  int most_slots_per_device = 0;                // the fullest device's slots in one MoE layer
};

// Weights (replicas cost slots), DeepEP's buffers and the KV capacity left; refused at `model` (of
// `root`, the scenario's document) when one longest request's KV cache does not fit.
MemoryPlan plan_memory(const YamlInput& root, const Scenario& s, const Placement& placement);

// Refused at workload.requests when even the least a run of them holds exceeds the machine's memory,
// and at parallelism.ep when the routes and dispatch matrices of its device pairs do.
void check_run_memory(const YamlInput& root, const Scenario& s);

// Refused at parallelism.ep when the least work of the run's all-to-alls (each step prices dispatch
// and combine over every device pair of every MoE layer) exceeds the scenario's work_limit: EP2016
// makes each step's all-to-alls 4 million pairs a layer, minutes for a handful of requests.
void check_run_work(const YamlInput& root, const Scenario& s);

}  // namespace semsim
