#pragma once
// Sem-MoE's offline model scheduling (design.md, "Sem-MoE, precisely"; arXiv 2503.04398,
// Algorithm 1): per MoE layer, co-cluster the profiled tokens and the experts into one cluster per
// device, N/D experts each (one more on the first N mod D devices where D does not divide N), minimising
//   θ·Σ_i |Σ_{j∈i} a_j − S/D| + (1−θ)·Σ_j a_j·(1 − Σ_{k on dev(j)} C_p[j,k])
// (token-load balance + remote activations; S = Σ_j a_j = 1) by alternation: experts placed
// greedily, improved by pairwise swaps, tokens re-assigned by affinity under a token-load cap; the
// best state by the objective is kept. Device labels are then aligned across layers so that a
// token's device changes as little as possible from layer to layer (what Attention-DP needs: one
// device per request for all layers), and a second pass re-solves every layer starting from each
// token's consensus device. Defaults were chosen on an internal split of the profiled part of the
// DeepSeek-V2-Lite trace: LAR is flat (±0.005) around them; swaps (+0.03) and the second pass
// (+0.01 to +0.02) are what matter; balance 1.10 is the tolerance.
// shared_tokens=1 is the Attention-DP variant: the objective with R shared by all layers (a request
// sits on one device for every layer), solved by alternating every layer's experts for fixed token
// devices with tokens re-assigned by their local share over all layers; T then names that one device
// at every layer, so the DP vote is the device the placement was fitted to. On the held-out
// DeepSeek-V2-Lite trace at EP8 under the semmoe_dp scheduler it lifts DP-style LAR from 0.141 to
// 0.145 (0.142 with theta=0, which an internal split of the profiled part preferred when evaluation
// placed requests by capped votes) at a TP-style cost of 0.003 (0.009).
// redundant=R gives every device (N+R)/D slots (DeepSeek-V3's 256 experts at EP72: 288 slots, 4
// per device): the co-clustering fills N of them as above, and the R spare ones get replicas
// (policies/spare_slot_replicas.hpp) of the experts of most load per replica, each on the spare-slot
// device whose co-clustered tokens use the expert most. Tokens keep their co-clustered devices.
#include <cstdint>
#include <functional>
#include <vector>

#include "policies/placement_policies.hpp"

namespace semsim {

struct SemMoeParams {
  double theta = 0.1;          // weight of the token-load balance term (1 − θ: remote activations)
  double alpha = 0.5;          // greedy expert placement: weight of expert–expert co-activation
  double beta = 1.0;           // ... of the tokens already on the device that activate the expert
  double gamma = 0.1;          // ... penalty per unit of expert load already on the device
  int steps = 8;               // alternations (expert step + token step)
  int swap_rounds = 2;         // swap passes per expert step (each tries every expert once)
  int passes = 2;              // solves of every layer: the first independent, later ones from the consensus
  double balance = 1.10;       // token-load cap per device: balance · S / D
  bool shared_tokens = false;  // one device per token for all layers (the Attention-DP variant above)
  std::uint64_t seed = 1;
  int redundant = 0;  // spare slots per layer beyond the N experts, filled with replicas
};

// Reads the policy's parameters (the names above) from a registry choice; `redundant` as
// physical_slots resolves it on `devices` (-1: one per device).
SemMoeParams semmoe_params(const PolicyChoice& choice, int experts, int devices);
const std::vector<ParamSpec>& semmoe_param_specs();

// One MoE layer's tables in plain arrays: the profiled tokens (a_j > 0) with sparse C_p rows.
struct CoClusterProblem {
  int experts = 0;
  int devices = 0;
  std::vector<std::int32_t> tokens;     // vocabulary ids, by index
  std::vector<double> frequency;        // a_j, by index (Σ = 1 over tokens with an id)
  std::vector<std::int64_t> row_begin;  // tokens + 1 entries into row_expert / row_share
  std::vector<int> row_expert;
  std::vector<double> row_share;     // C_p[j,k]
  std::vector<double> coactivation;  // [a * experts + b], symmetric; row a sums to expert_load[a]
  std::vector<double> expert_load;   // share of the layer's activations (Σ = 1)

  static CoClusterProblem from_profile(const RoutingProfile& profile, int layer, int devices);
};

struct CoClustering {
  std::vector<int> expert_device;  // [expert]
  std::vector<int> token_device;   // [token index]
  double objective = 0;
  int step = 0;        // the alternation that produced this state
  int kept_swaps = 0;  // over all steps
};

// The objective above for a given state.
double co_clustering_objective(const CoClusterProblem& problem, const SemMoeParams& params,
                               const std::vector<int>& expert_device, const std::vector<int>& token_device);

// Algorithm 1 on one layer. `on_kept_swap`, when set, sees the state and the (incrementally
// tracked) objective after every kept swap.
using KeptSwapObserver = std::function<void(const CoClustering&)>;
CoClustering co_cluster_layer(const CoClusterProblem& problem, const SemMoeParams& params, std::uint64_t seed,
                              const std::vector<int>& initial_token_device = {},
                              const KeptSwapObserver& on_kept_swap = {});

// Every layer (layers in parallel, result independent of the thread count), labels aligned across
// layers, spare slots filled with replicas; token_devices covers the whole vocabulary (-1 / 0 for
// tokens without profiled occurrences), its confidence (and the solver's profiled_local_share)
// counting the replicas on the token's device.
PlacementResult semmoe_placement(const PlacementInput& input, const SemMoeParams& params);

}  // namespace semsim
