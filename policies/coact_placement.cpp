#include "policies/coact_placement.hpp"

#include <metis.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "policies/partition_placement.hpp"

namespace semsim {
namespace {

std::vector<int> metis_partition(const std::vector<long long>& weight, int experts, int parts, int seed) {
  std::vector<idx_t> xadj{0}, adjncy, adjwgt;
  for (int a = 0; a < experts; ++a) {
    for (int b = 0; b < experts; ++b) {
      const long long w = weight[static_cast<std::size_t>(a) * experts + b];
      if (a == b || w <= 0) continue;
      if (w > INT_MAX)
        throw std::overflow_error("coact placement: co-activation count exceeds METIS's edge weight");
      adjncy.push_back(b);
      adjwgt.push_back(static_cast<idx_t>(w));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  idx_t vertices = experts, constraints = 1, nparts = parts, cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = seed;
  options[METIS_OPTION_UFACTOR] = 1;  // as balanced as METIS gets; the repair makes it exact
  std::vector<idx_t> part(experts, 0);
  const int status =
      METIS_PartGraphKway(&vertices, &constraints, xadj.data(), adjncy.data(), nullptr, nullptr,
                          adjwgt.data(), &nparts, nullptr, nullptr, options, &cut, part.data());
  if (status != METIS_OK)
    throw std::runtime_error("coact placement: METIS_PartGraphKway failed (" + std::to_string(status) + ")");
  return {part.begin(), part.end()};
}

// Moves experts out of oversized parts into undersized ones, each time the move that loses the least
// internal edge weight (ties: lowest expert, then lowest part), until every part has experts/parts.
void repair_balance(const std::vector<long long>& weight, int experts, int parts, std::vector<int>& part) {
  const int capacity = experts / parts;
  std::vector<int> size(parts, 0);
  for (int p : part) ++size[p];
  // affinity[e * parts + p]: edge weight between e and the experts of part p
  std::vector<long long> affinity(static_cast<std::size_t>(experts) * parts, 0);
  for (int a = 0; a < experts; ++a)
    for (int b = 0; b < experts; ++b)
      if (a != b)
        affinity[static_cast<std::size_t>(a) * parts + part[b]] +=
            weight[static_cast<std::size_t>(a) * experts + b];
  for (;;) {
    int best_expert = -1, best_part = -1;
    long long best_gain = 0;
    for (int e = 0; e < experts; ++e) {
      if (size[part[e]] <= capacity) continue;
      for (int p = 0; p < parts; ++p) {
        if (size[p] >= capacity) continue;
        const long long gain = affinity[static_cast<std::size_t>(e) * parts + p] -
                               affinity[static_cast<std::size_t>(e) * parts + part[e]];
        if (best_expert < 0 || gain > best_gain) best_expert = e, best_part = p, best_gain = gain;
      }
    }
    if (best_expert < 0) return;
    const int from = part[best_expert];
    for (int b = 0; b < experts; ++b) {
      const long long w = weight[static_cast<std::size_t>(b) * experts + best_expert];
      affinity[static_cast<std::size_t>(b) * parts + from] -= w;
      affinity[static_cast<std::size_t>(b) * parts + best_part] += w;
    }
    --size[from];
    ++size[best_part];
    part[best_expert] = best_part;
  }
}

// Parts are numbered arbitrarily in each layer. Renumbers `part` (this layer's) so that the profiled
// tokens' activations fall on the same device as in the previous layer as often as possible: a DP
// request stays on one device for all layers. M[p][q] sums, over tokens, the product of the token's
// activations on previous part p and on this part q; parts are matched greedily by largest M.
void align_with_previous_layer(const RoutingProfile& profile, int layer, const std::vector<int>& previous,
                               int parts, std::vector<int>& part) {
  std::vector<double> agreement(static_cast<std::size_t>(parts) * parts, 0.0), before(parts), now(parts);
  for (std::int32_t token = 0; token < static_cast<std::int32_t>(profile.vocabulary()); ++token) {
    if (profile.token_occurrences(token) == 0) continue;
    std::fill(before.begin(), before.end(), 0.0);
    std::fill(now.begin(), now.end(), 0.0);
    for (const ExpertCount& c : profile.token_experts(layer - 1, token))
      before[previous[c.expert]] += c.count;
    for (const ExpertCount& c : profile.token_experts(layer, token)) now[part[c.expert]] += c.count;
    const double scale = 1.0 / static_cast<double>(profile.token_occurrences(token));
    for (int p = 0; p < parts; ++p)
      for (int q = 0; q < parts; ++q)
        agreement[static_cast<std::size_t>(p) * parts + q] += before[p] * now[q] * scale;
  }
  std::vector<int> label(parts, -1);
  std::vector<bool> taken(parts, false);
  for (int matched = 0; matched < parts; ++matched) {
    int best_p = -1, best_q = -1;
    for (int p = 0; p < parts; ++p)
      for (int q = 0; q < parts; ++q)
        if (!taken[p] && label[q] < 0 &&
            (best_p < 0 || agreement[static_cast<std::size_t>(p) * parts + q] >
                               agreement[static_cast<std::size_t>(best_p) * parts + best_q]))
          best_p = p, best_q = q;
    taken[best_p] = true;
    label[best_q] = best_p;
  }
  for (int& p : part) p = label[p];
}

}  // namespace

std::vector<int> balanced_graph_partition(const std::vector<long long>& weight, int experts, int parts,
                                          int seed) {
  if (parts == 1) return std::vector<int>(experts, 0);
  std::vector<int> part = metis_partition(weight, experts, parts, seed);
  repair_balance(weight, experts, parts, part);
  return part;
}

PlacementResult coact_placement(const PlacementInput& input, const PolicyChoice& choice) {
  const int n = input.experts;  // a multiple of the devices: policy_registry's equal_groups
  const int seed = static_cast<int>(choice.whole_param("seed", 0, 1 << 30));
  std::vector<std::vector<int>> device_of_expert;
  std::vector<long long> weight(static_cast<std::size_t>(n) * n);
  ProgressCounter partitioned(input.progress, "layer", input.moe_layers);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        weight[static_cast<std::size_t>(a) * n + b] = a == b ? 0 : input.profile->coactivation(layer, a, b);
    std::vector<int> part = balanced_graph_partition(weight, n, input.devices, seed);
    if (layer > 0)
      align_with_previous_layer(*input.profile, layer, device_of_expert.back(), input.devices, part);
    device_of_expert.push_back(std::move(part));
    partitioned.finished_one();
  }
  return {placement_from_devices(device_of_expert, n, input.devices, input.profile,
                                 physical_slots(choice, n, input.devices) / input.devices),
          {},
          {}};
}

}  // namespace semsim
