#pragma once
// cost_scored placement (issue 33, item 4): a placement chosen for what it costs, not for locality
// or balance alone. Sem-MoE co-locates a token's experts (locality, less all-to-all) and EPLB
// spreads their load (balance, a shorter experts phase); which one a deployment should run depends
// on how long its kernels and links take. This policy prices candidate plans by the simulated
// MoE-layer time of a sample of the profiled requests, served the way the run serves them:
//   per step and MoE layer: max over devices of the routed experts' kernel time (tokens per local
//   expert, the scenario's calibrated cost model) + the dispatch and the combine of the copies the
//   placement makes every token send (the scenario's dispatch kernel or topology).
// It starts from the cheapest of vanilla's contiguous plan, DeepSeek's EPLB (with its replicas) and
// Sem-MoE's co-clustering, then improves that plan layer by layer with expert swaps between devices
// and, where the plan has replicas, by moving a replica slot to another expert, keeping each change
// only when it lowers the layer's sampled time. Seeded and bounded (a budget of evaluations); it
// never returns a plan that prices above its starting point on its own sample (the solver report
// gives both).
//
// The policy stays pure: the run (sim/placement_scoring.hpp) builds the pricing from the scenario —
// cost model, topology, dispatch kernel, the request scheduler and the load — and passes it in as
// PlacementScoring; without one (semsim place) the policy is refused.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "policies/dispatch.hpp"
#include "policies/placement_policies.hpp"
#include "workloads/length_distribution.hpp"

namespace semsim {

// What one MoE layer of one step costs, as the run would time it.
class MoeLayerPricer {
 public:
  virtual ~MoeLayerPricer() = default;
  // The copies a step's dispatch moves (the scenario's mode; DeepEP's auto mode resolved by whether
  // the step is decode-only).
  virtual DispatchMode traffic(bool decode_only) = 0;
  // Seconds of one device's routed-experts kernel given the tokens of each expert it hosts.
  virtual double experts_seconds(std::span<const int> tokens_per_local_expert) = 0;
  // Seconds of one dispatch and its combine of `copies[src * devices + dst]` token copies.
  virtual double exchange_seconds(std::span<const long long> copies, bool decode_only) = 0;
};

// How the run serves requests, for the sample the policy prices plans on.
struct PlacementScoring {
  MoeLayerPricer* pricer = nullptr;
  // Attention-TP: a step's tokens in equal positional slices (the positional token scheduler; the
  // only one priced). Attention-DP: each request on the rank `request_scheduling` gives it, reading
  // the candidate plan's token table as it would at run time.
  bool tensor_parallel_attention = false;
  PolicyChoice request_scheduling;
  ReplicaChoice replica_choice = ReplicaChoice::kRoundRobin;
  int in_flight = 0;              // requests running in every sampled step
  LengthDistribution output_len;  // output tokens of the sampled requests
};

struct CostScoredParams {
  int in_flight = 0;       // 0: PlacementScoring's
  int steps = 0;           // sampled steps; 0: enough for kSampledTokens decode tokens, at least kMinSteps
  int evaluations = 2000;  // layer evaluations of the search, over all layers
  bool shared_tokens = false;  // Sem-MoE's start: one device per token for all layers (Attention-DP)
  double theta = 0.1;          // Sem-MoE's start: its balance weight
  std::uint64_t seed = 1;
};
// The sample's default size: a light load needs more steps to see as many routed tokens (fewer
// would let the search fit the sample's few tokens rather than the workload), bounded in steps.
inline constexpr int kSampledTokens = 1024, kMinSteps = 48, kMaxDefaultSteps = 256;
CostScoredParams cost_scored_params(const PolicyChoice& choice);
const std::vector<ParamSpec>& cost_scored_param_specs();

// One sampled step: its tokens (indices into the profile's routing paths) and the rank each sits on.
struct SampledStep {
  std::vector<std::int64_t> tokens;
  std::vector<int> rank;
  bool decode_only = false;
};

// Prices `placement` at one layer on `steps` of `paths` (seconds summed over the steps).
double sampled_layer_seconds(const Placement& placement, int layer, const RoutingTrace& paths,
                             std::span<const SampledStep> steps, MoeLayerPricer& pricer,
                             ReplicaChoice replica_choice);

// A plan the search may begin from: its slots, and the token table the run's scheduler reads (empty:
// completed from the slots, as make_placement_plan completes a plan's).
struct PlacementStart {
  std::string name;
  Placement placement;
  TokenDeviceTable token_devices;
};

// Registered as "cost_scored": improve_cheapest_start from contiguous, eplb and semmoe (in that order).
PlacementResult cost_scored_placement(const PlacementInput& input, const PolicyChoice& choice);

// Prices every start on its own sample (its token table decides the ranks under Attention-DP), keeps
// the cheapest (ties: the earlier), then spends `params.evaluations` on moves, layer by layer, keeping
// those that lower the layer's sampled time. InputError without input.scoring, without the profile's
// routing paths, or without a load (in_flight). Solver report: start (its index), seconds_NAME of
// each start, seconds_start, seconds_result (<= seconds_start), evaluations, kept_moves, in_flight,
// sample_steps.
PlacementResult improve_cheapest_start(const PlacementInput& input, std::vector<PlacementStart> starts,
                                       CostScoredParams params);

}  // namespace semsim
