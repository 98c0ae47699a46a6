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

namespace {

// The evaluated requests and their routed tokens, in trace order.
struct EvaluatedTokens {
  std::vector<std::size_t> requests;
  std::vector<std::int64_t> tokens;     // global indexes of the evaluated tokens
  std::vector<std::size_t> request_of;  // per evaluated token: its index in `requests`
};

EvaluatedTokens evaluated_tokens(const RoutingTrace& trace, const std::vector<bool>& evaluate) {
  EvaluatedTokens out;
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    if (!evaluate.empty() && !evaluate[r]) continue;
    for (std::int64_t t = trace.first_token(r); t < trace.first_token(r + 1); ++t) {
      out.tokens.push_back(t);
      out.request_of.push_back(out.requests.size());
    }
    out.requests.push_back(r);
  }
  return out;
}

// Majority device of each evaluated token at each layer: what A is keyed by online.
// [token * layers + layer]
std::vector<int> majority_devices(const Placement& placement, const RoutingTrace& trace,
                                  const std::vector<std::int64_t>& tokens) {
  const int layers = placement.moe_layers, k = trace.header().top_k;
  std::vector<int> majority(tokens.size() * layers);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    for (int layer = 0; layer < layers; ++layer)
      majority[i * layers + layer] = majority_device(placement, layer, trace.experts_of(tokens[i], layer), k);
  return majority;
}

// DP style: each evaluated request on the rank the scheduler gives it, with all its tokens.
struct DpAssignment {
  std::vector<int> request_device;
  std::vector<int> token_device;
  std::vector<long long> load;          // [device] tokens
  std::vector<long long> request_size;  // tokens
};

DpAssignment assign_requests(const PlacementPlan& plan, const RoutingTrace& trace,
                             const std::vector<std::size_t>& requests, const PolicyChoice& choice) {
  DpAssignment dp;
  dp.request_device = schedule_requests(plan, trace, requests, choice);
  dp.load.assign(plan.placement.devices, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto size = trace.first_token(requests[i] + 1) - trace.first_token(requests[i]);
    dp.token_device.insert(dp.token_device.end(), static_cast<std::size_t>(size), dp.request_device[i]);
    dp.load[dp.request_device[i]] += size;
    dp.request_size.push_back(size);
  }
  return dp;
}

// Both styles evaluated layer by layer over the same tokens; what they count is summed over the
// layers, then summarized.
class LayerByLayerEvaluation {
 public:
  LayerByLayerEvaluation(const PlacementPlan& plan, const RoutingTrace& trace, EvaluatedTokens selected,
                         const EvaluationOptions& options)
      : plan_(plan),
        placement_(plan.placement),
        trace_(trace),
        selected_(std::move(selected)),
        layers_(placement_.moe_layers),
        k_(trace.header().top_k),
        devices_(placement_.devices),
        batch_(static_cast<std::size_t>(options.tp_batch_tokens > 0 ? options.tp_batch_tokens
                                                                    : selected_.tokens.size())),
        majority_(majority_devices(placement_, trace, selected_.tokens)),
        dp_(assign_requests(plan, trace, selected_.requests, options.request_scheduling)),
        request_local_(selected_.requests.size() * devices_, 0),
        dispatch_(devices_, placement_.experts) {
    const std::size_t n = selected_.tokens.size();
    predicted_.resize(n);
    tp_device_.resize(n);
    previous_.resize(n * 4);
    token_ids_.resize(n);
    experts_.resize(n * k_);
    tp_load_.resize(devices_);
    unaligned_load_.resize(devices_);
    for (std::size_t i = 0; i < n; ++i) token_ids_[i] = trace.token_ids()[selected_.tokens[i]];
    positional_.resize(n);
    for (std::size_t first = 0; first < n; first += batch_)
      positional_token_ranks(devices_, std::span(positional_).subspan(first, std::min(batch_, n - first)));
  }

  void evaluate_layer(int layer, PlacementEvaluation& out) {
    const std::size_t n = selected_.tokens.size();
    const int history = std::min(layer, 4);
    route_layer(layer, history);
    for (std::size_t first = 0; first < n; first += batch_) evaluate_batch(layer, first, history);
    // Unaligned: tokens without a prediction spread round-robin.
    for (std::size_t i = 0, unpredicted = 0; i < n; ++i)
      if (predicted_[i] < 0) predicted_[i] = static_cast<int>(unpredicted++ % devices_);
    std::fill(tp_load_.begin(), tp_load_.end(), 0);
    std::fill(unaligned_load_.begin(), unaligned_load_.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++tp_load_[tp_device_[i]], ++unaligned_load_[predicted_[i]];
    imbalance_sum_ += load_imbalance(tp_load_);
    unaligned_imbalance_sum_ += load_imbalance(unaligned_load_);
    out.imbalance_tp_max = std::max(out.imbalance_tp_max, load_imbalance(tp_load_));
    account_layer(placement_, layer, tp_device_, experts_, k_, dispatch_, tp_);
    account_layer(placement_, layer, predicted_, experts_, k_, dispatch_, tp_unaligned_);
    account_layer(placement_, layer, positional_, experts_, k_, dispatch_, tp_positional_);
    account_layer(placement_, layer, dp_.token_device, experts_, k_, dispatch_, dp_totals_);
  }

  void summarize(const EvaluationOptions& options, PlacementEvaluation& out) const {
    const long long token_layers = out.tokens * layers_;
    out.activations = tp_.activations;
    out.lar_tp = share(tp_.local, tp_.activations);
    out.lar_dp = share(dp_totals_.local, dp_totals_.activations);
    out.imbalance_tp = imbalance_sum_ / layers_;
    out.lar_tp_unaligned = share(tp_unaligned_.local, tp_unaligned_.activations);
    out.lar_tp_positional = share(tp_positional_.local, tp_positional_.activations);
    out.lar_tp_hindsight = share(tp_hindsight_local_, tp_.activations);
    const std::vector<int> hindsight = hindsight_request_assignment(
        request_local_, dp_.request_size, devices_,
        options.dp_balance * static_cast<double>(out.tokens) / devices_, dp_.request_device);
    long long dp_hindsight_local = 0;
    for (std::size_t r = 0; r < selected_.requests.size(); ++r)
      dp_hindsight_local += request_local_[r * devices_ + hindsight[r]];
    out.lar_dp_hindsight = share(dp_hindsight_local, dp_totals_.activations);
    out.imbalance_tp_unaligned = unaligned_imbalance_sum_ / layers_;
    out.imbalance_dp = load_imbalance(dp_.load);
    out.expert_imbalance = tp_.expert_imbalance_sum / layers_;
    out.remote_copies_tp = tp_.remote_copies;
    out.remote_copies_dp = dp_totals_.remote_copies;
    out.tp_by_token_table = share(by_table_, token_layers);
    out.tp_by_inter_layer = share(by_inter_layer_, token_layers);
    out.tp_unpredicted = share(spread_, token_layers);
  }

 private:
  // Each token's experts at `layer`, and its majority devices at the `history` layers before.
  void route_layer(int layer, int history) {
    for (std::size_t i = 0; i < selected_.tokens.size(); ++i) {
      const ExpertId* routed = trace_.experts_of(selected_.tokens[i], layer);
      std::copy(routed, routed + k_, experts_.begin() + static_cast<std::ptrdiff_t>(i * k_));
      for (int back = 1; back <= history; ++back)
        previous_[i * history + back - 1] = majority_[i * layers_ + layer - back];
    }
  }

  // TP style on the batch from token `first`: predicted and aligned ranks, with the hindsight
  // assignment's local activations beside; the requests' local activations for DP's hindsight.
  void evaluate_batch(int layer, std::size_t first, int history) {
    const std::size_t size = std::min(batch_, selected_.tokens.size() - first);
    reshuffle_tokens(plan_, layer, std::span(token_ids_).subspan(first, size),
                     std::span(previous_).subspan(first * history, size * history), history, devices_,
                     reshuffle_);
    std::copy(reshuffle_.rank.begin(), reshuffle_.rank.end(),
              tp_device_.begin() + static_cast<std::ptrdiff_t>(first));
    std::copy(reshuffle_.predicted.begin(), reshuffle_.predicted.end(),
              predicted_.begin() + static_cast<std::ptrdiff_t>(first));
    local_activations(placement_, layer, std::span(experts_).subspan(first * k_, size * k_), k_, local_);
    tp_hindsight_local_ +=
        best_capacitated_assignment(local_, devices_, ceil_div(static_cast<long long>(size), devices_));
    for (std::size_t i = 0; i < size; ++i)
      for (int d = 0; d < devices_; ++d)
        request_local_[selected_.request_of[first + i] * devices_ + d] += local_[i * devices_ + d];
    for (DeviceBasis basis : reshuffle_.basis) {
      by_table_ += basis == DeviceBasis::kTokenTable ? 1 : 0;
      by_inter_layer_ += basis == DeviceBasis::kInterLayer ? 1 : 0;
      spread_ += basis == DeviceBasis::kNone ? 1 : 0;
    }
  }

  const PlacementPlan& plan_;
  const Placement& placement_;
  const RoutingTrace& trace_;
  const EvaluatedTokens selected_;
  const int layers_, k_, devices_;
  const std::size_t batch_;          // tokens aligned together
  const std::vector<int> majority_;  // [token * layers + layer]
  const DpAssignment dp_;
  std::vector<long long> request_local_;  // hindsight DP: all layers, [request * devices + device]
  // Per layer, per token.
  std::vector<ExpertId> experts_;
  std::vector<int> previous_, predicted_, tp_device_, positional_;
  std::vector<std::int32_t> token_ids_;
  std::vector<int> local_;
  std::vector<long long> tp_load_, unaligned_load_;
  LayerDispatch dispatch_;
  TokenReshuffle reshuffle_;
  // Summed over the layers.
  LayerTotals tp_, tp_unaligned_, tp_positional_, dp_totals_;
  long long tp_hindsight_local_ = 0, by_table_ = 0, by_inter_layer_ = 0, spread_ = 0;
  double imbalance_sum_ = 0, unaligned_imbalance_sum_ = 0;
};

}  // namespace

PlacementEvaluation evaluate_placement(const PlacementPlan& profiled_plan, const RoutingTrace& trace,
                                       const std::vector<bool>& evaluate, const EvaluationOptions& options) {
  PlacementEvaluation out;
  // The plan as it applies to this trace's token ids (not owned: the aliasing pointer owns nothing).
  const std::shared_ptr<const PlacementPlan> keyed =
      plan_for_vocabulary(std::shared_ptr<const PlacementPlan>(std::shared_ptr<void>(), &profiled_plan),
                          trace.vocabulary(), out.token_table);
  const Placement& placement = keyed->placement;
  const TraceHeader& h = trace.header();
  if (h.moe_layers != placement.moe_layers || h.experts != placement.experts)
    throw InputError("the trace has " + std::to_string(h.moe_layers) + " MoE layers of " +
                     std::to_string(h.experts) + " experts, the placement " +
                     std::to_string(placement.moe_layers) + " of " + std::to_string(placement.experts));
  EvaluatedTokens selected = evaluated_tokens(trace, evaluate);
  out.requests = static_cast<long long>(selected.requests.size());
  out.tokens = static_cast<long long>(selected.tokens.size());
  if (selected.tokens.empty()) return out;

  LayerByLayerEvaluation evaluation(*keyed, trace, std::move(selected), options);
  ProgressCounter evaluated(options.progress, "evaluation, layer", h.moe_layers);
  for (int layer = 0; layer < h.moe_layers; ++layer) {
    evaluation.evaluate_layer(layer, out);
    evaluated.finished_one();
  }
  evaluation.summarize(options, out);
  return out;
}

}  // namespace semsim
