#include "policies/analysis/placement_evaluation.hpp"

#include <algorithm>
#include <memory>
#include <span>

#include "models/input_error.hpp"
#include "policies/analysis/oracle_assignment.hpp"
#include "policies/dispatch.hpp"
#include "policies/inter_layer_table.hpp"
#include "policies/routing_metrics.hpp"
#include "policies/semmoe_token_scheduling.hpp"
#include "policies/token_scheduling.hpp"

namespace semsim {
namespace {

struct LayerTotals {
  long long activations = 0, local = 0, remote_copies = 0;
  double expert_imbalance_sum = 0;
};

// Accounts one layer's tokens (dedup dispatch) and adds its counters to `totals`.
void account_layer(const Placement& placement, int layer, const std::vector<int>& token_device,
                   const std::vector<ExpertId>& experts, int k, LayerDispatch& dispatch,
                   LayerTotals& totals) {
  dispatch.clear();
  account_dispatch(placement, layer, DispatchMode::kDedup, token_device, experts, k, dispatch);
  totals.activations += dispatch.activations;
  totals.local += dispatch.local_activations;
  for (int src = 0; src < dispatch.devices; ++src)
    for (int dst = 0; dst < dispatch.devices; ++dst)
      if (src != dst)
        totals.remote_copies += dispatch.copies[static_cast<std::size_t>(src) * dispatch.devices + dst];
  totals.expert_imbalance_sum += load_imbalance(dispatch.device_tokens);
}

double share(long long part, long long whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// DP style: each request's rank as the engine's scheduler chooses it (see the header).
std::vector<int> schedule_requests(const PlacementPlan& plan, const RoutingTrace& trace,
                                   const std::vector<std::size_t>& requests, const PolicyChoice& choice) {
  const std::unique_ptr<RequestScheduler> scheduler = make_request_scheduler(choice, plan);
  std::vector<RankLoad> loads(static_cast<std::size_t>(plan.placement.devices));
  std::vector<int> chosen;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const TraceRequest& recorded = trace.request(requests[i]);
    Request request;
    request.id = static_cast<int>(i);
    request.input_tokens = recorded.input_tokens;
    request.output_tokens = recorded.output_tokens;
    const std::span<const std::int32_t> prompt =
        scheduler->reads_prompt() && recorded.prefill_routed
            ? trace.token_ids().subspan(static_cast<std::size_t>(trace.first_token(requests[i])),
                                        static_cast<std::size_t>(recorded.input_tokens))
            : std::span<const std::int32_t>();
    const int rank = scheduler->choose(request, prompt, loads);
    loads[static_cast<std::size_t>(rank)].add(request.input_tokens + request.output_tokens);
    chosen.push_back(rank);
  }
  return chosen;
}

// Local activations of `count` tokens (k experts each, from `experts`) on every device: [i * devices + d].
void local_activations(const Placement& placement, int layer, std::span<const ExpertId> experts, int k,
                       std::vector<int>& local) {
  const int devices = placement.devices;
  const std::size_t count = experts.size() / static_cast<std::size_t>(k);
  local.assign(count * devices, 0);
  for (std::size_t i = 0; i < count; ++i)
    for (int x = 0; x < k; ++x)
      for (int d = 0; d < devices; ++d)
        local[i * devices + d] += placement.hosts(layer, experts[i * k + x], d);
}

long long ceil_div(long long a, long long b) {
  return (a + b - 1) / b;
}

}  // namespace

double equal_slice_balance(long long tokens, int tp_batch_tokens, int devices) {
  if (tokens <= 0) return 1;
  const long long batch = tp_batch_tokens > 0 ? tp_batch_tokens : tokens;
  const long long most = (tokens / batch) * ceil_div(batch, devices) + ceil_div(tokens % batch, devices);
  return static_cast<double>(most) * devices / static_cast<double>(tokens);
}

PlacementEvaluation evaluate_placement(const PlacementPlan& profiled_plan, const RoutingTrace& trace,
                                       const std::vector<bool>& evaluate, const EvaluationOptions& options) {
  PlacementEvaluation out;
  // The plan as it applies to this trace's token ids (not owned: the aliasing pointer owns nothing).
  const std::shared_ptr<const PlacementPlan> keyed =
      plan_for_vocabulary(std::shared_ptr<const PlacementPlan>(std::shared_ptr<void>(), &profiled_plan),
                          trace.vocabulary(), out.token_table);
  const PlacementPlan& plan = *keyed;
  const Placement& placement = plan.placement;
  const TraceHeader& h = trace.header();
  if (h.moe_layers != placement.moe_layers || h.experts != placement.experts)
    throw InputError("the trace has " + std::to_string(h.moe_layers) + " MoE layers of " +
                     std::to_string(h.experts) + " experts, the placement " +
                     std::to_string(placement.moe_layers) + " of " + std::to_string(placement.experts));
  const int layers = h.moe_layers, k = h.top_k, devices = placement.devices;

  std::vector<std::size_t> requests;
  std::vector<std::int64_t> tokens;     // global indexes of the evaluated tokens
  std::vector<std::size_t> request_of;  // per evaluated token: its index in `requests`
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!evaluate.empty() && !evaluate[r]) continue;
    for (std::int64_t t = trace.first_token(r); t < trace.first_token(r + 1); ++t) {
      tokens.push_back(t);
      request_of.push_back(requests.size());
    }
    requests.push_back(r);
  }
  out.requests = static_cast<long long>(requests.size());
  out.tokens = static_cast<long long>(tokens.size());
  if (tokens.empty()) return out;

  // Majority device of each evaluated token at each layer: what A is keyed by online.
  std::vector<int> majority(tokens.size() * layers);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    for (int layer = 0; layer < layers; ++layer)
      majority[i * layers + layer] = majority_device(placement, layer, trace.experts_of(tokens[i], layer), k);

  const std::vector<int> request_device =
      schedule_requests(plan, trace, requests, options.request_scheduling);
  std::vector<int> dp_device;
  std::vector<long long> dp_load(devices, 0), request_size;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto size = trace.first_token(requests[i] + 1) - trace.first_token(requests[i]);
    dp_device.insert(dp_device.end(), static_cast<std::size_t>(size), request_device[i]);
    dp_load[request_device[i]] += size;
    request_size.push_back(size);
  }
  std::vector<long long> request_local(requests.size() * devices, 0);  // hindsight DP: all layers
  std::vector<int> local;
  long long tp_hindsight_local = 0;

  LayerDispatch dispatch(devices, placement.experts);
  LayerTotals tp, tp_unaligned, tp_positional, dp;
  std::vector<int> predicted(tokens.size()), tp_device(tokens.size()), previous(tokens.size() * 4);
  std::vector<std::int32_t> token_ids(tokens.size());
  std::vector<ExpertId> experts(tokens.size() * k);
  std::vector<long long> tp_load(devices), unaligned_load(devices);
  long long by_table = 0, by_inter_layer = 0, spread = 0;
  double imbalance_sum = 0, unaligned_imbalance_sum = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) token_ids[i] = trace.token_ids()[tokens[i]];
  const auto batch =
      static_cast<std::size_t>(options.tp_batch_tokens > 0 ? options.tp_batch_tokens : tokens.size());
  TokenReshuffle reshuffle;
  std::vector<int> positional(tokens.size());
  for (std::size_t first = 0; first < tokens.size(); first += batch)
    positional_token_ranks(devices,
                           std::span(positional).subspan(first, std::min(batch, tokens.size() - first)));
  ProgressCounter evaluated(options.progress, "evaluation, layer", layers);
  for (int layer = 0; layer < layers; ++layer) {
    const int history = std::min(layer, 4);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const ExpertId* routed = trace.experts_of(tokens[i], layer);
      std::copy(routed, routed + k, experts.begin() + static_cast<std::ptrdiff_t>(i * k));
      for (int back = 1; back <= history; ++back)
        previous[i * history + back - 1] = majority[i * layers + layer - back];
    }
    for (std::size_t first = 0; first < tokens.size(); first += batch) {
      const std::size_t size = std::min(batch, tokens.size() - first);
      reshuffle_tokens(plan, layer, std::span(token_ids).subspan(first, size),
                       std::span(previous).subspan(first * history, size * history), history, devices,
                       reshuffle);
      std::copy(reshuffle.rank.begin(), reshuffle.rank.end(),
                tp_device.begin() + static_cast<std::ptrdiff_t>(first));
      std::copy(reshuffle.predicted.begin(), reshuffle.predicted.end(),
                predicted.begin() + static_cast<std::ptrdiff_t>(first));
      local_activations(placement, layer, std::span(experts).subspan(first * k, size * k), k, local);
      tp_hindsight_local +=
          best_capacitated_assignment(local, devices, ceil_div(static_cast<long long>(size), devices));
      for (std::size_t i = 0; i < size; ++i)
        for (int d = 0; d < devices; ++d)
          request_local[request_of[first + i] * devices + d] += local[i * devices + d];
      for (DeviceBasis basis : reshuffle.basis) {
        by_table += basis == DeviceBasis::kTokenTable ? 1 : 0;
        by_inter_layer += basis == DeviceBasis::kInterLayer ? 1 : 0;
        spread += basis == DeviceBasis::kNone ? 1 : 0;
      }
    }
    // Unaligned: tokens without a prediction spread round-robin.
    for (std::size_t i = 0, unpredicted = 0; i < tokens.size(); ++i)
      if (predicted[i] < 0) predicted[i] = static_cast<int>(unpredicted++ % devices);
    std::fill(tp_load.begin(), tp_load.end(), 0);
    std::fill(unaligned_load.begin(), unaligned_load.end(), 0);
    for (std::size_t i = 0; i < tokens.size(); ++i) ++tp_load[tp_device[i]], ++unaligned_load[predicted[i]];
    imbalance_sum += load_imbalance(tp_load);
    unaligned_imbalance_sum += load_imbalance(unaligned_load);
    out.imbalance_tp_max = std::max(out.imbalance_tp_max, load_imbalance(tp_load));
    account_layer(placement, layer, tp_device, experts, k, dispatch, tp);
    account_layer(placement, layer, predicted, experts, k, dispatch, tp_unaligned);
    account_layer(placement, layer, positional, experts, k, dispatch, tp_positional);
    account_layer(placement, layer, dp_device, experts, k, dispatch, dp);
    evaluated.finished_one();
  }
  const long long token_layers = out.tokens * layers;
  out.activations = tp.activations;
  out.lar_tp = share(tp.local, tp.activations);
  out.lar_dp = share(dp.local, dp.activations);
  out.imbalance_tp = imbalance_sum / layers;
  out.lar_tp_unaligned = share(tp_unaligned.local, tp_unaligned.activations);
  out.lar_tp_positional = share(tp_positional.local, tp_positional.activations);
  out.lar_tp_hindsight = share(tp_hindsight_local, tp.activations);
  const std::vector<int> hindsight = hindsight_request_assignment(
      request_local, request_size, devices, options.dp_balance * static_cast<double>(out.tokens) / devices,
      request_device);
  long long dp_hindsight_local = 0;
  for (std::size_t r = 0; r < requests.size(); ++r)
    dp_hindsight_local += request_local[r * devices + hindsight[r]];
  out.lar_dp_hindsight = share(dp_hindsight_local, dp.activations);
  out.imbalance_tp_unaligned = unaligned_imbalance_sum / layers;
  out.imbalance_dp = load_imbalance(dp_load);
  out.expert_imbalance = tp.expert_imbalance_sum / layers;
  out.remote_copies_tp = tp.remote_copies;
  out.remote_copies_dp = dp.remote_copies;
  out.tp_by_token_table = share(by_table, token_layers);
  out.tp_by_inter_layer = share(by_inter_layer, token_layers);
  out.tp_unpredicted = share(spread, token_layers);
  return out;
}

}  // namespace semsim
