#pragma once
// Replicas for the spare slots a co-clustering placement leaves when it has redundant slots
// (Sem-MoE with `redundant`): in the spirit of DeepSeek's EPLB, one replica at a time of the expert
// with the largest load per replica (ties: lower id), each placed where it best serves the tokens
// that route to it — on the device with a spare slot, among those not yet holding the expert, whose
// co-clustered tokens use it most (ties: lower id). A device never holds two copies of one expert.
#include <span>
#include <vector>

namespace semsim {

// `device_experts[d]`: the distinct experts device d holds, at most `slots_per_device` (at most the
// experts), every expert on one device at least; `expert_load[e]`: e's share of the layer's
// activations; `demand[d * experts + e]`: the activation share of the tokens assigned to d that use
// e. Returns `device_experts` with every device filled to `slots_per_device`, each device's replicas
// appended in the order they were chosen. std::invalid_argument when the input breaks those rules.
std::vector<std::vector<int>> fill_spare_slots(std::vector<std::vector<int>> device_experts,
                                               int slots_per_device, std::span<const double> expert_load,
                                               std::span<const double> demand);

}  // namespace semsim
