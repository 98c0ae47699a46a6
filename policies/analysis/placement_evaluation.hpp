#pragma once
// How well a placement plan localises the routing of held-out requests, in the two ways Sem-MoE
// schedules tokens (metrics as defined in design.md; LAR and expert-side load come from
// account_dispatch, the engine's own accounting):
// - TP style: every (token, MoE layer) is predicted a device (predict_token_device: T vs A, A keyed
//   by the token's actual majority devices at the previous layers), then each batch of
//   tp_batch_tokens consecutive tokens is aligned to equal slices per rank (align_to_equal_slices),
//   as the shuffled reduce-scatter requires. The unaligned predictions are reported beside.
// - DP style: a request sits on one device for all its tokens and layers, the rank the engine's own
//   request scheduler gives it (make_request_scheduler: semmoe_dp, round_robin, ...). It sees the
//   requests in trace order, the recorded prompt's token ids and the loads the serving loop gives it
//   (RankLoad::add) when every request arrives before the first step: all of each rank's requests
//   outstanding. So the DP LAR is what `semsim run` reports replaying these requests once each,
//   prefill only, with this plan and scheduler; exactly so for any arrival process when the scheduler
//   ignores loads (semmoe_dp, round_robin), and for a burst of arrivals with any scheduler. (A request
//   whose prefill the trace did not record has no known prompt ids here; a run draws them.)
// Beside each, the LAR of the same placement when devices are chosen with hindsight (TP: the same
// equal slices; DP: within dp_balance × the mean token load; oracle_assignment.hpp): what the
// placement allows, so the predicted LAR ÷ hindsight LAR is what prediction keeps, and no valid
// upper bound can be below the hindsight LAR.
#include <vector>

#include "models/progress.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

struct PlacementEvaluation {
  long long requests = 0;     // evaluated requests
  long long tokens = 0;       // their routed tokens
  long long activations = 0;  // routed (token, layer, expert) activations
  double lar_tp = 0;          // aligned to equal slices per batch
  double lar_dp = 0;
  double imbalance_tp = 1;       // token load per device: max ÷ mean per layer, mean over layers
  double imbalance_tp_max = 1;   // ... the worst layer
  double lar_tp_unaligned = 0;   // every token on its predicted device, whatever the load
  double lar_tp_positional = 0;  // vanilla Attention-TP: equal contiguous slices by position
  double imbalance_tp_unaligned = 1;
  double imbalance_dp = 1;         // request token load per device: max ÷ mean
  double lar_tp_hindsight = 0;     // each batch's tokens on ranks knowing their routing, equal slices (exact)
  double lar_dp_hindsight = 0;     // requests on devices knowing their routing, within dp_balance
  double expert_imbalance = 1;     // expert-side load per device (the engine's imbalance), mean over layers
  long long remote_copies_tp = 0;  // deduplicated dispatch copies that cross devices, all layers
  long long remote_copies_dp = 0;
  // TP style: share of (token, layer) placed by the token table, by the inter-layer table, or spread
  double tp_by_token_table = 0;
  double tp_by_inter_layer = 0;
  double tp_unpredicted = 0;
  TokenTableMatch token_table;  // the plan's token table matched to the trace's tokens
};

struct EvaluationOptions {
  double dp_balance = 1.10;    // DP-style hindsight: request token load per device within this × mean
  int tp_batch_tokens = 4096;  // tokens aligned together (a step's batch); 0: all at once
  PolicyChoice request_scheduling = default_policy_choice(PolicyKind::kRequestScheduling, "semmoe_dp");
  ProgressCallback progress = {};  // told each MoE layer evaluated
};

// The load tolerance TP-style evaluation keeps: at most ceil(n/R) of each batch's n tokens per rank,
// summed over the batches of `tokens`, ÷ the mean tokens / devices.
double equal_slice_balance(long long tokens, int tp_batch_tokens, int devices);

// Evaluates `plan` on the requests of `trace` with `evaluate[r]` true (empty: all of them). InputError
// when the request scheduler needs token tables the plan lacks.
PlacementEvaluation evaluate_placement(const PlacementPlan& plan, const RoutingTrace& trace,
                                       const std::vector<bool>& evaluate,
                                       const EvaluationOptions& options = {});

}  // namespace semsim
