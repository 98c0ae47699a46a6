#include "policies/semmoe_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "models/input_error.hpp"
#include "policies/spare_slot_replicas.hpp"
#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// Runs fn(layer) for every layer, layers in parallel; results must not depend on the order.
using ForEachLayer = std::function<void(const std::function<void(int)>&)>;

// Gains below this are float noise: a swap or move must beat it to be kept, so passes terminate.
constexpr double kMinGain = 1e-12;

// W[device * experts + expert]: activation share of the tokens on `device` that use `expert`.
std::vector<double> token_demand(const CoClusterProblem& p, const std::vector<int>& token_device) {
  std::vector<double> demand(static_cast<std::size_t>(p.devices) * p.experts, 0.0);
  for (std::size_t j = 0; j < p.tokens.size(); ++j) {
    if (token_device[j] < 0) continue;
    double* row = &demand[static_cast<std::size_t>(token_device[j]) * p.experts];
    for (std::int64_t e = p.row_begin[j]; e < p.row_begin[j + 1]; ++e)
      row[p.row_expert[e]] += p.frequency[j] * p.row_share[e];
  }
  return demand;
}

// Algorithm 1's expert placement: experts by decreasing load, each onto the device with room that
// maximises α·co-activation with the experts already there + β·demand of its tokens − γ·expert load.
// Room: N/D experts per device, one more on the first N mod D devices where D does not divide N
// (redundant slots then make up the difference with replicas).
std::vector<int> greedy_experts(const CoClusterProblem& p, const SemMoeParams& params,
                                const std::vector<double>& demand) {
  const int n = p.experts, d = p.devices;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return p.expert_load[a] > p.expert_load[b]; });
  std::vector<double> affinity(static_cast<std::size_t>(n) * d, 0.0);  // [expert * d + device]
  std::vector<double> device_load(d, 0.0);
  std::vector<int> count(d, 0), expert_device(n, -1);
  for (int k : order) {
    int best = -1;
    double best_score = 0;
    for (int i = 0; i < d; ++i) {
      if (count[i] == n / d + (i < n % d ? 1 : 0)) continue;  // capacity mask
      const double score = params.alpha * affinity[static_cast<std::size_t>(k) * d + i] +
                           params.beta * demand[static_cast<std::size_t>(i) * n + k] -
                           params.gamma * device_load[i];
      if (best < 0 || score > best_score) best = i, best_score = score;
    }
    expert_device[k] = best;
    ++count[best];
    device_load[best] += p.expert_load[k];
    for (int other = 0; other < n; ++other)
      affinity[static_cast<std::size_t>(other) * d + best] +=
          p.coactivation[static_cast<std::size_t>(other) * n + k];
  }
  return expert_device;
}

// Pairwise swaps: each pass visits every expert in a random order and swaps it with the partner on
// another device that most lowers the remote term, when it does. Token loads do not change, so the
// objective changes by −(1−θ)·gain, an O(1) delta from the demand table.
void swap_experts(const CoClusterProblem& p, const SemMoeParams& params, const std::vector<double>& demand,
                  std::mt19937_64& rng, CoClustering& state, const KeptSwapObserver& on_kept_swap) {
  const int n = p.experts;
  auto w = [&](int device, int expert) { return demand[static_cast<std::size_t>(device) * n + expert]; };
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (int round = 0; round < params.swap_rounds; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    bool improved = false;
    for (int a : order) {
      const int da = state.expert_device[a];
      int best = -1;
      double best_gain = kMinGain;
      for (int b = 0; b < n; ++b) {
        const int db = state.expert_device[b];
        if (db == da) continue;
        const double gain = w(db, a) + w(da, b) - w(da, a) - w(db, b);
        if (gain > best_gain) best = b, best_gain = gain;
      }
      if (best < 0) continue;
      std::swap(state.expert_device[a], state.expert_device[best]);
      state.objective -= (1 - params.theta) * best_gain;
      ++state.kept_swaps;
      improved = true;
      if (on_kept_swap) on_kept_swap(state);
    }
    if (!improved) break;
  }
}

// Token step: tokens by decreasing a_j·(best − second-best local share), each onto the device with
// room (token load ≤ balance·S/D) of least marginal objective; a token that fits nowhere goes to the
// least loaded device. `local_share[j * D + i]` is the share of token j's activations device i hosts.
std::vector<int> assign_tokens(const std::vector<double>& frequency, const std::vector<double>& local_share,
                               int d, const SemMoeParams& params) {
  const std::size_t tokens = frequency.size();
  const double total = std::accumulate(frequency.begin(), frequency.end(), 0.0);
  const double target = total / d, cap = params.balance * target;
  std::vector<double> share(d);
  auto shares_of = [&](std::size_t j) {
    const auto first = local_share.begin() + static_cast<std::ptrdiff_t>(j * d);
    std::copy(first, first + d, share.begin());
  };
  std::vector<double> priority(tokens);
  for (std::size_t j = 0; j < tokens; ++j) {
    shares_of(j);
    std::partial_sort(share.begin(), share.begin() + std::min(2, d), share.end(), std::greater<>());
    priority[j] = frequency[j] * (share[0] - (d > 1 ? share[1] : 0.0));
  }
  std::vector<std::size_t> order(tokens);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return priority[a] > priority[b] || (priority[a] == priority[b] && frequency[a] > frequency[b]);
  });
  std::vector<double> load(d, 0.0);
  std::vector<int> token_device(tokens, -1);
  for (std::size_t j : order) {
    shares_of(j);
    const double a = frequency[j];
    int best = -1;
    double best_cost = 0;
    for (int i = 0; i < d; ++i) {
      if (load[i] + a > cap) continue;
      const double cost = (1 - params.theta) * a * (1 - share[i]) +
                          params.theta * (std::abs(load[i] + a - target) - std::abs(load[i] - target));
      if (best < 0 || cost < best_cost) best = i, best_cost = cost;
    }
    if (best < 0) best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    token_device[j] = best;
    load[best] += a;
  }
  return token_device;
}

// Adds `weight` × each token's local share per device under `expert_device` to `local_share`
// ([token * D + device]).
void add_local_shares(const CoClusterProblem& p, const std::vector<int>& expert_device, double weight,
                      std::vector<double>& local_share) {
  for (std::size_t j = 0; j < p.tokens.size(); ++j)
    for (std::int64_t e = p.row_begin[j]; e < p.row_begin[j + 1]; ++e)
      local_share[j * p.devices + expert_device[p.row_expert[e]]] += weight * p.row_share[e];
}

std::vector<int> assign_tokens(const CoClusterProblem& p, const SemMoeParams& params,
                               const std::vector<int>& expert_device) {
  std::vector<double> local_share(p.tokens.size() * p.devices, 0.0);
  add_local_shares(p, expert_device, 1.0, local_share);
  return assign_tokens(p.frequency, local_share, p.devices, params);
}

// Relabels each layer's devices (a permutation: experts and tokens move together) to agree as much
// as possible with the devices its tokens had at the layers before: a greedy maximum-weight
// matching on the D×D agreement matrix weighted by a_j.
void align_layers(std::vector<CoClustering>& layers, const std::vector<double>& frequency, int devices) {
  const std::size_t tokens = frequency.size();
  std::vector<double> votes(tokens * devices, 0.0);  // [token * devices + device]: earlier layers
  for (std::size_t layer = 0; layer < layers.size(); ++layer) {
    CoClustering& c = layers[layer];
    std::vector<int> relabel(devices);
    std::iota(relabel.begin(), relabel.end(), 0);
    if (layer > 0) {
      std::vector<double> agreement(static_cast<std::size_t>(devices) * devices, 0.0);  // [new * D + old]
      for (std::size_t j = 0; j < tokens; ++j)
        for (int old = 0; old < devices; ++old)
          agreement[static_cast<std::size_t>(c.token_device[j]) * devices + old] +=
              frequency[j] * votes[j * devices + old];
      std::vector<int> pairs(agreement.size());
      std::iota(pairs.begin(), pairs.end(), 0);
      std::stable_sort(pairs.begin(), pairs.end(), [&](int a, int b) { return agreement[a] > agreement[b]; });
      std::vector<bool> new_taken(devices, false), old_taken(devices, false);
      for (int pair : pairs) {
        const int from = pair / devices, to = pair % devices;
        if (new_taken[from] || old_taken[to]) continue;
        relabel[from] = to;
        new_taken[from] = old_taken[to] = true;
      }
    }
    for (int& device : c.expert_device) device = relabel[device];
    for (int& device : c.token_device) device = relabel[device];
    for (std::size_t j = 0; j < tokens; ++j) votes[j * devices + c.token_device[j]] += 1;
  }
}

// Each token's most frequent device over the layers (ties: lower id).
std::vector<int> consensus_devices(const std::vector<CoClustering>& layers, int devices) {
  const std::size_t tokens = layers.front().token_device.size();
  std::vector<int> votes(tokens * devices, 0);
  for (const CoClustering& c : layers)
    for (std::size_t j = 0; j < tokens; ++j) ++votes[j * devices + c.token_device[j]];
  std::vector<int> consensus(tokens);
  for (std::size_t j = 0; j < tokens; ++j) {
    const auto first = votes.begin() + static_cast<std::ptrdiff_t>(j * devices);
    consensus[j] = static_cast<int>(std::max_element(first, first + devices) - first);
  }
  return consensus;
}

// Shared-token mode: one device per token for all layers, which is what a request pinned to one
// device (Attention-DP) sees. From the aligned layers' consensus, alternate (a) every layer's experts
// for the fixed token devices (pairwise swaps from the layer's current placement, so the local share
// never drops) and (b) every token onto a device by its local share averaged over the layers
// (assign_tokens' cap and θ term); keep the best state by the objective summed over layers.
void share_token_devices(const std::vector<CoClusterProblem>& problems, const SemMoeParams& params,
                         std::vector<CoClustering>& results, const ForEachLayer& for_each_layer) {
  const int layers = static_cast<int>(problems.size()), devices = problems.front().devices;
  const std::vector<double>& frequency = problems.front().frequency;
  std::vector<int> shared = consensus_devices(results, devices);
  double best_objective = std::numeric_limits<double>::infinity();
  std::vector<CoClustering> best;
  std::vector<double> objective(layers);
  for (int step = 0; step < params.steps; ++step) {
    if (step > 0) {
      std::vector<double> local_share(frequency.size() * devices, 0.0);
      for (int layer = 0; layer < layers; ++layer)
        add_local_shares(problems[layer], results[layer].expert_device, 1.0 / layers, local_share);
      shared = assign_tokens(frequency, local_share, devices, params);
    }
    for_each_layer([&](int layer) {
      const CoClusterProblem& p = problems[layer];
      CoClustering& state = results[layer];
      state.token_device = shared;
      state.step = step;
      std::mt19937_64 rng(hash_keys(params.seed, 0x5a7ed, layer, step));
      swap_experts(p, params, token_demand(p, shared), rng, state, {});
      state.objective = objective[layer] = co_clustering_objective(p, params, state.expert_device, shared);
    });
    const double total = std::accumulate(objective.begin(), objective.end(), 0.0);
    if (total < best_objective) best_objective = total, best = results;
  }
  results = std::move(best);
}

}  // namespace

const std::vector<ParamSpec>& semmoe_param_specs() {
  static const SemMoeParams d;
  static const std::vector<ParamSpec> specs = {
      {"theta", d.theta, "weight of token-load balance vs remote activations in the objective"},
      {"alpha", d.alpha, "greedy expert step: weight of expert-expert co-activation"},
      {"beta", d.beta, "greedy expert step: weight of the device's tokens' demand for the expert"},
      {"gamma", d.gamma, "greedy expert step: penalty per unit of expert load on the device"},
      {"steps", static_cast<double>(d.steps), "alternations of expert step and token step"},
      {"swap_rounds", static_cast<double>(d.swap_rounds), "pairwise-swap passes per expert step"},
      {"passes", static_cast<double>(d.passes), "solves of all layers; later ones start from the consensus"},
      {"balance", d.balance, "token-load cap per device as a multiple of the mean"},
      {"shared_tokens", d.shared_tokens ? 1.0 : 0.0,
       "1: one device per token for all layers (Attention-DP), refined from the consensus"},
      {"seed", static_cast<double>(d.seed), "random swap order"},
      redundant_experts(d.redundant),
  };
  return specs;
}

SemMoeParams semmoe_params(const PolicyChoice& choice, int experts, int devices) {
  SemMoeParams p;
  p.redundant = physical_slots(choice, experts, devices) - experts;
  p.theta = choice.param("theta");
  p.alpha = choice.param("alpha");
  p.beta = choice.param("beta");
  p.gamma = choice.param("gamma");
  // Whole numbers are checked as such before they become ints: 1e18 steps is an error, not a wrap.
  p.steps = static_cast<int>(choice.whole_param("steps", 1, 1 << 20));
  p.swap_rounds = static_cast<int>(choice.whole_param("swap_rounds", 0, 1 << 20));
  p.passes = static_cast<int>(choice.whole_param("passes", 1, 1 << 10));
  p.balance = choice.param("balance");
  p.shared_tokens = choice.whole_param("shared_tokens", 0, 1) != 0;
  p.seed = static_cast<std::uint64_t>(choice.whole_param("seed", 0, 1LL << 53));
  if (p.theta < 0 || p.theta > 1) throw InputError(fmt::format("semmoe: theta {} is not in [0, 1]", p.theta));
  if (p.balance < 1) throw InputError(fmt::format("semmoe: balance {} is below 1", p.balance));
  return p;
}

CoClusterProblem CoClusterProblem::from_profile(const RoutingProfile& profile, int layer, int devices) {
  CoClusterProblem p;
  p.experts = profile.experts();
  p.devices = devices;
  p.row_begin.push_back(0);
  for (std::size_t token = 0; token < profile.vocabulary(); ++token) {
    const auto id = static_cast<std::int32_t>(token);
    const auto row = profile.token_experts(layer, id);
    if (profile.token_occurrences(id) == 0 || row.empty()) continue;
    long long activations = 0;
    for (const ExpertCount& c : row) activations += c.count;
    for (const ExpertCount& c : row) {
      p.row_expert.push_back(c.expert);
      p.row_share.push_back(static_cast<double>(c.count) / static_cast<double>(activations));
    }
    p.tokens.push_back(id);
    p.frequency.push_back(profile.token_frequency(id));
    p.row_begin.push_back(static_cast<std::int64_t>(p.row_expert.size()));
  }
  const auto load = profile.expert_load(layer);
  const double activations = static_cast<double>(std::accumulate(load.begin(), load.end(), 0LL));
  const int n = p.experts;
  p.expert_load.assign(n, 0.0);
  p.coactivation.assign(static_cast<std::size_t>(n) * n, 0.0);
  if (activations <= 0) return p;
  for (int e = 0; e < n; ++e) p.expert_load[e] = static_cast<double>(load[e]) / activations;
  // Each activation of `a` co-occurs with k−1 others: dividing by activations·(k−1) makes row a
  // sum to a's load share, the same units as the token demand.
  if (profile.top_k() < 2) return p;
  const double scale = 1.0 / (activations * (profile.top_k() - 1));
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const double value = static_cast<double>(profile.coactivation(layer, a, b)) * scale;
      p.coactivation[static_cast<std::size_t>(a) * n + b] =
          p.coactivation[static_cast<std::size_t>(b) * n + a] = value;
    }
  return p;
}

double co_clustering_objective(const CoClusterProblem& p, const SemMoeParams& params,
                               const std::vector<int>& expert_device, const std::vector<int>& token_device) {
  std::vector<double> load(p.devices, 0.0);
  double total = 0, remote = 0;
  for (std::size_t j = 0; j < p.tokens.size(); ++j) {
    double local = 0;
    for (std::int64_t e = p.row_begin[j]; e < p.row_begin[j + 1]; ++e)
      if (expert_device[p.row_expert[e]] == token_device[j]) local += p.row_share[e];
    remote += p.frequency[j] * (1 - local);
    load[token_device[j]] += p.frequency[j];
    total += p.frequency[j];
  }
  double imbalance = 0;
  for (double l : load) imbalance += std::abs(l - total / p.devices);
  return params.theta * imbalance + (1 - params.theta) * remote;
}

CoClustering co_cluster_layer(const CoClusterProblem& p, const SemMoeParams& params, std::uint64_t seed,
                              const std::vector<int>& initial_token_device,
                              const KeptSwapObserver& on_kept_swap) {
  if (p.devices < 1 || p.experts < p.devices)
    throw InputError(fmt::format("semmoe: {} experts cannot fill {} devices", p.experts, p.devices));
  std::mt19937_64 rng(seed);
  CoClustering state;
  state.token_device = initial_token_device;
  if (state.token_device.empty())
    state.token_device.assign(p.tokens.size(), -1);  // no tokens yet: the first greedy step uses α and γ only
  CoClustering best;
  for (int step = 0; step < params.steps; ++step) {
    state.step = step;
    const std::vector<double> demand = token_demand(p, state.token_device);
    state.expert_device = greedy_experts(p, params, demand);
    if (step > 0 || !initial_token_device.empty()) {
      state.objective = co_clustering_objective(p, params, state.expert_device, state.token_device);
      swap_experts(p, params, demand, rng, state, on_kept_swap);
    }
    state.token_device = assign_tokens(p, params, state.expert_device);
    state.objective = co_clustering_objective(p, params, state.expert_device, state.token_device);
    if (step == 0 || state.objective < best.objective) best = state;
  }
  best.kept_swaps = state.kept_swaps;
  return best;
}

namespace {

// Every device holds (N + redundant) / D slots, at most one copy of an expert each.
void check_semmoe_slots(const PlacementInput& input, const SemMoeParams& params) {
  const int devices = input.devices, physical = input.experts + params.redundant;
  if (devices < 1 || params.redundant < 0 || physical % devices != 0 || physical / devices > input.experts)
    throw InputError(
        fmt::format("semmoe: the {} experts + {} redundant do not split evenly over {} devices "
                    "(at most one copy of an expert each)",
                    input.experts, params.redundant, devices));
}

// Runs fn(layer) for every layer on as many threads as the machine has, counting each in `solved`.
ForEachLayer in_parallel(int layers, ProgressCounter& solved) {
  return [layers, &solved](const std::function<void(int)>& fn) {
    std::atomic<int> next{0};
    auto work = [&] {
      for (int layer = next++; layer < layers; layer = next++) {
        fn(layer);
        solved.finished_one();
      }
    };
    const int threads =
        std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, std::max(layers, 1));
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
  };
}

struct CoClusteredLayers {
  std::vector<CoClusterProblem> problems;
  std::vector<CoClustering> results;
};

// Every layer co-clustered, in params.passes passes (and the shared-token steps).
CoClusteredLayers co_cluster_layers(const PlacementInput& input, const SemMoeParams& params) {
  const int layers = input.moe_layers, devices = input.devices;
  CoClusteredLayers solved{std::vector<CoClusterProblem>(layers), std::vector<CoClustering>(layers)};
  std::vector<CoClusterProblem>& problems = solved.problems;
  std::vector<CoClustering>& results = solved.results;
  std::vector<int> consensus;  // empty in the first pass
  // Every pass solves every layer, and so does every shared-token step.
  ProgressCounter solves(
      input.progress, "layer solve",
      static_cast<long long>(layers) * (params.passes + (params.shared_tokens ? params.steps : 0)));
  const ForEachLayer for_each_layer = in_parallel(layers, solves);
  auto solve_all = [&](int pass) {
    for_each_layer([&](int layer) {
      if (pass == 0) problems[layer] = CoClusterProblem::from_profile(*input.profile, layer, devices);
      results[layer] =
          co_cluster_layer(problems[layer], params, hash_keys(params.seed, 0x5e3, layer, pass), consensus);
    });
  };
  solve_all(0);
  // Later passes restart every layer from each token's most frequent device over the aligned
  // layers, so that the layers share one token clustering as far as their routing allows.
  for (int pass = 1; pass < params.passes && layers > 0; ++pass) {
    align_layers(results, problems[0].frequency, devices);
    consensus = consensus_devices(results, devices);
    solve_all(pass);
  }
  if (params.shared_tokens && layers > 0) {
    align_layers(results, problems[0].frequency, devices);
    share_token_devices(problems, params, results, for_each_layer);
  }
  return solved;
}

// What the solver reports, summed over the layers.
struct SemMoeTotals {
  double local = 0, objective = 0, worst_load = 0;
};

// One layer's slots: each expert on its device, then (with redundant slots) replicas in the spare
// slots.
std::vector<std::vector<int>> layer_slots(const CoClusterProblem& p, const CoClustering& c,
                                          const SemMoeParams& params, int slots_per_device) {
  std::vector<std::vector<int>> slots(p.devices);
  for (int e = 0; e < p.experts; ++e) slots[c.expert_device[e]].push_back(e);
  if (params.redundant > 0)
    slots =
        fill_spare_slots(std::move(slots), slots_per_device, p.expert_load, token_demand(p, c.token_device));
  return slots;
}

// Each profiled token's device at `layer`, with the share of its activations served there
// (replicas included: a token is served by a copy on its own device), into `table`; adds to the
// local share and the worst token load.
void record_token_devices(const CoClusterProblem& p, const CoClustering& c,
                          const std::vector<std::vector<int>>& slots, int layer, TokenDeviceTable& table,
                          SemMoeTotals& totals) {
  const int devices = p.devices, n = p.experts;
  std::vector<unsigned char> hosted(static_cast<std::size_t>(devices) * n, 0);  // [device * n + expert]
  for (int d = 0; d < devices; ++d)
    for (const int e : slots[d]) hosted[static_cast<std::size_t>(d) * n + e] = 1;
  std::vector<double> load(devices, 0.0);
  for (std::size_t j = 0; j < p.tokens.size(); ++j) {
    double share = 0;
    for (std::int64_t e = p.row_begin[j]; e < p.row_begin[j + 1]; ++e)
      if (hosted[static_cast<std::size_t>(c.token_device[j]) * n + p.row_expert[e]]) share += p.row_share[e];
    table.device[layer][p.tokens[j]] = static_cast<std::int16_t>(c.token_device[j]);
    table.confidence[layer][p.tokens[j]] = static_cast<float>(share);
    totals.local += p.frequency[j] * share;
    load[c.token_device[j]] += p.frequency[j];
  }
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  if (total > 0)
    totals.worst_load =
        std::max(totals.worst_load, *std::max_element(load.begin(), load.end()) * devices / total);
}

}  // namespace

PlacementResult semmoe_placement(const PlacementInput& input, const SemMoeParams& params) {
  check_semmoe_slots(input, params);
  const int layers = input.moe_layers, devices = input.devices;
  CoClusteredLayers solved = co_cluster_layers(input, params);

  PlacementResult out;
  Placement& placement = out.placement;
  placement.moe_layers = layers;
  placement.experts = input.experts;
  placement.devices = devices;
  placement.slots.assign(layers, std::vector<std::vector<int>>(devices));
  if (layers == 0) {
    placement.seal();
    return out;
  }
  // Every layer has the same profiled tokens (each profiled token is routed at every layer).
  align_layers(solved.results, solved.problems[0].frequency, devices);
  const std::size_t vocabulary = input.profile->vocabulary();
  out.token_devices.device.assign(layers, std::vector<std::int16_t>(vocabulary, -1));
  out.token_devices.confidence.assign(layers, std::vector<float>(vocabulary, 0.0f));
  SemMoeTotals totals;
  for (int layer = 0; layer < layers; ++layer) {
    const CoClusterProblem& p = solved.problems[layer];
    const CoClustering& c = solved.results[layer];
    placement.slots[layer] = layer_slots(p, c, params, (input.experts + params.redundant) / devices);
    record_token_devices(p, c, placement.slots[layer], layer, out.token_devices, totals);
    totals.objective += c.objective;
  }
  placement.seal();
  out.solver["objective"] = totals.objective / layers;
  out.solver["profiled_local_share"] = totals.local / layers;
  out.solver["profiled_max_token_load"] = totals.worst_load;
  out.solver["steps"] = params.steps;
  return out;
}

}  // namespace semsim
