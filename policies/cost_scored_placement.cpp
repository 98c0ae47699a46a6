#include "policies/cost_scored_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "models/input_error.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/eplb_placement.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "policies/semmoe_placement.hpp"
#include "policies/token_device_table.hpp"

namespace semsim {
namespace {

// Every step of the sample at one layer: max over devices of the experts' kernel, plus the exchange.
// `device_seconds`, when given, adds each device's experts time (where the search looks for moves).
double price_layer(const Placement& placement, int layer, const RoutingTrace& paths,
                   std::span<const SampledStep> steps, MoeLayerPricer& pricer, ReplicaChoice replica_choice,
                   std::vector<double>* device_seconds) {
  const int devices = placement.devices, experts = placement.experts, top_k = paths.header().top_k;
  LayerDispatch dispatch(devices, experts, placement.devices_per_node);
  std::vector<ExpertId> routed;
  std::vector<int> local;
  double total = 0;
  for (const SampledStep& step : steps) {
    routed.clear();
    for (const std::int64_t token : step.tokens) {
      const ExpertId* chosen = paths.experts_of(token, layer);
      routed.insert(routed.end(), chosen, chosen + top_k);
    }
    dispatch.clear();
    account_dispatch(placement, layer, pricer.traffic(step.decode_only), step.rank, routed, top_k, dispatch,
                     replica_choice);
    double slowest = 0;
    for (int device = 0; device < devices; ++device) {
      local.clear();
      for (const int expert : placement.slots[layer][device])
        local.push_back(dispatch.expert_tokens[static_cast<std::size_t>(device) * experts + expert]);
      const double seconds = pricer.experts_seconds(local);
      slowest = std::max(slowest, seconds);
      if (device_seconds) (*device_seconds)[device] += seconds;
    }
    total += slowest + pricer.exchange_seconds(dispatch.copies, step.decode_only);
  }
  return total;
}

// The sample: a closed loop of `in_flight` profiled requests (a seeded shuffle of the profile's
// routing paths, reused cyclically), each with an output length drawn from the scenario's
// distribution and already part-way through it at the first step (a steady state, not a cold
// start). Every step each running request decodes one token, routed as one of its prompt tokens
// (the trace replay's resample_prompt decode), and a request that has finished is replaced by the
// next, whose whole prompt is prefilled in that step. Ranks: under Attention-DP each request's, as
// the run's request scheduler picks it with the candidate's token table; under Attention-TP equal
// positional slices of the step's tokens.
std::vector<SampledStep> sample_steps(const RoutingTrace& paths, const PlacementScoring& scoring,
                                      const CostScoredParams& params, const Placement& placement,
                                      const TokenDeviceTable& token_devices) {
  const int devices = placement.devices;
  std::mt19937_64 rng(params.seed);
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < paths.requests(); ++r)
    if (paths.first_token(r + 1) > paths.first_token(r)) order.push_back(r);
  if (order.empty())
    throw InputError("placement policy 'cost_scored': the routing profile holds no routed request");
  std::shuffle(order.begin(), order.end(), rng);

  PlacementPlan plan;
  plan.placement = placement;
  plan.token_devices = token_devices;
  std::unique_ptr<RequestScheduler> scheduler;
  if (!scoring.tensor_parallel_attention)
    scheduler = make_request_scheduler(scoring.request_scheduling, plan);
  std::vector<RankLoad> loads(devices);

  struct Running {
    std::size_t request = 0;
    int rank = 0;
    int remaining = 0;
  };
  std::size_t next = 0;
  int id = 0;
  // Starts the next request of the shuffle: its rank and output length.
  auto start = [&](std::vector<std::int64_t>* prefill) {
    const std::size_t r = order[next++ % order.size()];
    const std::int64_t first = paths.first_token(r), end = paths.first_token(r + 1);
    const int output = scoring.output_len.draw(rng);
    Running running{r, 0, output};
    if (scheduler) {
      Request request;
      request.id = id++;
      request.input_tokens = static_cast<int>(end - first);
      request.output_tokens = output;
      running.rank = scheduler->choose(request, paths.token_ids().subspan(first, end - first), loads);
      loads[running.rank].add(end - first + output);
    }
    if (prefill)
      for (std::int64_t t = first; t < end; ++t) prefill->push_back(t);
    return running;
  };
  std::vector<Running> running;
  for (int i = 0; i < params.in_flight; ++i) {
    running.push_back(start(nullptr));
    running.back().remaining =
        1 + static_cast<int>(rng() % static_cast<std::uint64_t>(running.back().remaining));
  }

  std::vector<SampledStep> steps(params.steps);
  for (SampledStep& step : steps) {
    std::vector<std::int64_t> prefill;
    std::vector<int> prefill_rank;
    for (Running& r : running) {
      if (r.remaining == 0) {
        loads[r.rank].requests -= scheduler ? 1 : 0;
        const std::size_t before = prefill.size();
        r = start(&prefill);
        prefill_rank.insert(prefill_rank.end(), prefill.size() - before, r.rank);
        continue;
      }
      const std::int64_t first = paths.first_token(r.request), end = paths.first_token(r.request + 1);
      step.tokens.push_back(first +
                            static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(end - first)));
      step.rank.push_back(r.rank);
      --r.remaining;
      if (scheduler) --loads[r.rank].outstanding_tokens;
    }
    step.decode_only = prefill.empty();
    step.tokens.insert(step.tokens.end(), prefill.begin(), prefill.end());
    step.rank.insert(step.rank.end(), prefill_rank.begin(), prefill_rank.end());
    if (scoring.tensor_parallel_attention) positional_token_ranks(devices, step.rank);
  }
  return steps;
}

// One proposed change of one layer's slots, undone by applying it again.
struct Move {
  int device_a = 0, slot_a = 0, device_b = 0, slot_b = 0;
  bool replace = false;  // slot_b's expert becomes slot_a's (a replica moves), else the two swap
  int replaced = 0;      // the expert slot_b held before a replace
};

void apply(std::vector<std::vector<int>>& layer, Move& move) {
  int& a = layer[move.device_a][move.slot_a];
  int& b = layer[move.device_b][move.slot_b];
  if (!move.replace) {
    std::swap(a, b);
    return;
  }
  std::swap(b, move.replaced);  // b takes `replaced` (a's expert on the way in, the old one on undo)
}

bool holds(const std::vector<int>& device, int expert) {
  return std::find(device.begin(), device.end(), expert) != device.end();
}

// A random valid move at `layer`: device a is the busiest one half of the time. Swaps two experts
// of different devices that neither already holds; where the layer has replicas, one move in three
// instead turns a slot of b holding a replicated expert into a replica of one of a's experts.
// False when the draw found none.
bool propose(const Placement& placement, int layer, const std::vector<double>& device_seconds,
             std::mt19937_64& rng, Move& move) {
  const auto& slots = placement.slots[layer];
  const int devices = placement.devices;
  const int busiest = static_cast<int>(std::max_element(device_seconds.begin(), device_seconds.end()) -
                                       device_seconds.begin());
  move.device_a = rng() % 2 == 0 ? busiest : static_cast<int>(rng() % devices);
  move.device_b = static_cast<int>(rng() % (devices - 1));
  if (move.device_b >= move.device_a) ++move.device_b;
  const auto& a = slots[move.device_a];
  const auto& b = slots[move.device_b];
  if (a.empty() || b.empty()) return false;
  move.slot_a = static_cast<int>(rng() % a.size());
  move.slot_b = static_cast<int>(rng() % b.size());
  const int expert_a = a[move.slot_a], expert_b = b[move.slot_b];
  move.replace = placement.has_replicas() && rng() % 3 == 0;
  if (move.replace) {
    move.replaced = expert_a;
    return placement.replica_count(layer, expert_b) > 1 && !holds(b, expert_a);
  }
  return !holds(b, expert_a) && !holds(a, expert_b);
}

// The run's pricing and the profiled routing it samples; InputError naming what is missing.
const RoutingTrace* require_pricing(const PlacementInput& input) {
  if (input.scoring == nullptr || input.scoring->pricer == nullptr)
    throw InputError(
        "placement policy 'cost_scored' prices plans with a scenario's cost model, links and load: use it "
        "in a scenario (policies.placement, with a profile), not in `semsim place`");
  if (input.profile == nullptr || input.profile->profiled_paths() == nullptr)
    throw InputError(
        "placement policy 'cost_scored' samples the profiled requests' routing: the routing "
        "profile has no paths.semtrace (make it again with semsim profile)");
  return input.profile->profiled_paths();
}

}  // namespace

const std::vector<ParamSpec>& cost_scored_param_specs() {
  static const CostScoredParams d;
  static const std::vector<ParamSpec> specs = {
      {"in_flight", 0,
       "requests running in every sampled step (0: the scenario's concurrency; an open loop gives it)"},
      {"steps", static_cast<double>(d.steps),
       "sampled steps of that many requests (0: 1024 decode tokens' worth, 48 to 256 steps)"},
      {"evaluations", static_cast<double>(d.evaluations), "search budget: layer evaluations over all layers"},
      {"shared_tokens", 0, "Sem-MoE's start: 1 one device per token for all layers (Attention-DP)"},
      {"theta", d.theta, "Sem-MoE's start: weight of its token-load balance term"},
      {"seed", static_cast<double>(d.seed), "sample and search seed"},
  };
  return specs;
}

CostScoredParams cost_scored_params(const PolicyChoice& choice) {
  CostScoredParams p;
  p.in_flight = static_cast<int>(choice.whole_param("in_flight", 0, 1 << 20));
  p.steps = static_cast<int>(choice.whole_param("steps", 0, 1 << 16));
  p.evaluations = static_cast<int>(choice.whole_param("evaluations", 0, 1 << 24));
  p.shared_tokens = choice.whole_param("shared_tokens", 0, 1) == 1;
  p.theta = choice.param("theta");
  if (!(p.theta >= 0 && p.theta <= 1))
    throw InputError(
        fmt::format("policy 'cost_scored': parameter 'theta' must be in [0, 1], got {}", p.theta));
  p.seed = static_cast<std::uint64_t>(choice.whole_param("seed", 0, 1LL << 52));
  return p;
}

double sampled_layer_seconds(const Placement& placement, int layer, const RoutingTrace& paths,
                             std::span<const SampledStep> steps, MoeLayerPricer& pricer,
                             ReplicaChoice replica_choice) {
  return price_layer(placement, layer, paths, steps, pricer, replica_choice, nullptr);
}

PlacementResult cost_scored_placement(const PlacementInput& input, const PolicyChoice& choice) {
  require_pricing(input);  // before the starts are made
  const CostScoredParams params = cost_scored_params(choice);
  // The starts: vanilla, EPLB with its default replicas, Sem-MoE with the given balance weight.
  std::vector<PlacementStart> starts;
  starts.push_back(
      {"contiguous", contiguous_placement(input.moe_layers, input.experts, input.devices, 0), {}});
  starts.push_back(
      {"eplb", eplb_placement(input, default_policy_choice(PolicyKind::kPlacement, "eplb")).placement, {}});
  SemMoeParams semmoe;
  semmoe.shared_tokens = params.shared_tokens;
  semmoe.theta = params.theta;
  PlacementResult co_clustered = semmoe_placement(input, semmoe);
  starts.push_back({"semmoe", std::move(co_clustered.placement), std::move(co_clustered.token_devices)});
  return improve_cheapest_start(input, std::move(starts), params);
}

PlacementResult improve_cheapest_start(const PlacementInput& input, std::vector<PlacementStart> starts,
                                       CostScoredParams params) {
  const RoutingTrace* paths = require_pricing(input);
  const PlacementScoring* scoring = input.scoring;
  if (params.in_flight == 0) params.in_flight = scoring->in_flight;
  if (params.in_flight <= 0)
    throw InputError(
        "placement policy 'cost_scored': an open-loop workload does not say how many requests a "
        "step serves: give the policy's in_flight parameter");
  if (params.steps == 0)
    params.steps =
        std::clamp((kSampledTokens + params.in_flight - 1) / params.in_flight, kMinSteps, kMaxDefaultSteps);
  MoeLayerPricer& pricer = *scoring->pricer;

  PlacementResult result;
  std::vector<SampledStep> steps;
  std::vector<double> layer_seconds;
  double start_seconds = 0;
  for (std::size_t s = 0; s < starts.size(); ++s) {
    PlacementStart& start = starts[s];
    start.placement.devices_per_node = input.devices_per_node;
    start.placement.seal();
    // The table the run's scheduler will read: the plan's own completed as make_placement_plan does.
    complete_token_devices(start.token_devices, start.placement, *input.profile, PlanOptions{}.token_balance);
    std::vector<SampledStep> sampled =
        sample_steps(*paths, *scoring, params, start.placement, start.token_devices);
    std::vector<double> seconds(input.moe_layers);
    for (int layer = 0; layer < input.moe_layers; ++layer)
      seconds[layer] =
          sampled_layer_seconds(start.placement, layer, *paths, sampled, pricer, scoring->replica_choice);
    const double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    result.solver["seconds_" + start.name] = total;
    if (s == 0 || total < start_seconds) {
      start_seconds = total;
      result.solver["start"] = static_cast<double>(s);
      steps = std::move(sampled);
      layer_seconds = std::move(seconds);
      result.placement = start.placement;
      result.token_devices = start.token_devices;
    }
  }

  // Local search, layer by layer: layers price independently on a fixed sample (the ranks depend on
  // the token table only, which moves leave alone), so a kept move lowers the total.
  Placement& placement = result.placement;
  std::mt19937_64 rng(params.seed);
  const int per_layer = params.evaluations / input.moe_layers;
  long long evaluations = 0, kept = 0;
  std::vector<double> device_seconds(input.devices);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    std::fill(device_seconds.begin(), device_seconds.end(), 0.0);
    double current =
        price_layer(placement, layer, *paths, steps, pricer, scoring->replica_choice, &device_seconds);
    for (int attempt = 0; attempt < per_layer; ++attempt) {
      Move move;
      if (!propose(placement, layer, device_seconds, rng, move)) continue;
      apply(placement.slots[layer], move);
      placement.seal();
      std::vector<double> trial(input.devices, 0.0);
      const double seconds =
          price_layer(placement, layer, *paths, steps, pricer, scoring->replica_choice, &trial);
      ++evaluations;
      if (seconds < current) {
        current = seconds;
        device_seconds = std::move(trial);
        ++kept;
        continue;
      }
      apply(placement.slots[layer], move);
      placement.seal();
    }
    layer_seconds[layer] = current;
  }
  // Confidences follow the moved experts; devices stay (the sample's ranks were drawn from them).
  for (int layer = 0; layer < input.moe_layers && !result.token_devices.empty(); ++layer)
    for (std::size_t token = 0; token < result.token_devices.device[layer].size(); ++token)
      if (const int device = result.token_devices.device[layer][token]; device >= 0)
        result.token_devices.confidence[layer][token] = static_cast<float>(
            token_confidence(placement, *input.profile, layer, static_cast<std::int32_t>(token), device));
  result.solver["seconds_start"] = start_seconds;
  result.solver["seconds_result"] = std::accumulate(layer_seconds.begin(), layer_seconds.end(), 0.0);
  result.solver["evaluations"] = static_cast<double>(evaluations);
  result.solver["kept_moves"] = static_cast<double>(kept);
  result.solver["in_flight"] = params.in_flight;
  result.solver["sample_steps"] = params.steps;
  return result;
}

}  // namespace semsim
