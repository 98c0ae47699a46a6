#include "policies/eplb.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace semsim {
namespace {

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(std::string("eplb: ") + what);
}

// inverse[p[i]] = i for a permutation p.
std::vector<int> inverse_permutation(const std::vector<int>& p) {
  std::vector<int> inverse(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) inverse[p[i]] = static_cast<int>(i);
  return inverse;
}

}  // namespace

Packing balanced_packing(const LoadMatrix& weight, int packs) {
  Packing out;
  for (const auto& items : weight) {
    const int n = static_cast<int>(items.size());
    require(packs > 0 && n % packs == 0, "packs must divide the number of items");
    const int per_pack = n / packs;
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return items[a] > items[b]; });
    std::vector<double> pack_weight(packs, 0.0);
    std::vector<int> pack_items(packs, 0);
    std::vector<int> pack(n), rank(n);
    for (int item : order) {
      int lightest = -1;
      for (int p = 0; p < packs; ++p)
        if (pack_items[p] < per_pack && (lightest < 0 || pack_weight[p] < pack_weight[lightest]))
          lightest = p;
      pack[item] = lightest;
      rank[item] = pack_items[lightest]++;
      pack_weight[lightest] += items[item];
    }
    out.pack.push_back(std::move(pack));
    out.rank_in_pack.push_back(std::move(rank));
  }
  return out;
}

Replication replicate_experts(const LoadMatrix& weight, int physical, int max_replicas) {
  Replication out;
  for (const auto& load : weight) {
    const int logical = static_cast<int>(load.size());
    require(physical >= logical, "fewer physical slots than logical experts");
    require(static_cast<long long>(physical) <= static_cast<long long>(logical) * max_replicas,
            "more physical slots than logical experts times the replicas each may have");
    std::vector<int> to_logical(physical), rank(physical, 0), count(logical, 1);
    std::iota(to_logical.begin(), to_logical.begin() + logical, 0);
    for (int slot = logical; slot < physical; ++slot) {
      int busiest = -1;
      for (int e = 0; e < logical; ++e)
        if (count[e] < max_replicas && (busiest < 0 || load[e] / count[e] > load[busiest] / count[busiest]))
          busiest = e;
      to_logical[slot] = busiest;
      rank[slot] = count[busiest]++;
    }
    out.physical_to_logical.push_back(std::move(to_logical));
    out.replica_rank.push_back(std::move(rank));
    out.logical_count.push_back(std::move(count));
  }
  return out;
}

EplbPlacement rebalance_hierarchical(const LoadMatrix& weight, int physical, int groups, int nodes,
                                     int gpus) {
  require(!weight.empty(), "no layers");
  const int layers = static_cast<int>(weight.size());
  const int logical = static_cast<int>(weight[0].size());
  require(groups > 0 && nodes > 0 && gpus > 0, "groups, nodes and gpus must be positive");
  require(logical % groups == 0, "groups must divide the logical experts");
  require(groups % nodes == 0, "nodes must divide the groups");
  require(gpus % nodes == 0, "nodes must divide the GPUs");
  require(physical % gpus == 0, "GPUs must divide the physical slots");
  require(physical >= logical && (physical - logical) % nodes == 0,
          "redundant slots must split evenly over nodes");
  const int group_size = logical / groups;
  const int groups_per_node = groups / nodes;
  const int logical_per_node = logical / nodes;
  const int physical_per_node = physical / nodes;
  const int slots_per_gpu = physical / gpus;

  // Step 1: pack expert groups onto nodes; renumber experts node-major ("mlog" ids).
  LoadMatrix group_load(layers, std::vector<double>(groups, 0.0));
  for (int l = 0; l < layers; ++l)
    for (int e = 0; e < logical; ++e) group_load[l][e / group_size] += weight[l][e];
  const Packing group_packing = balanced_packing(group_load, nodes);
  IndexMatrix log_to_mlog(layers, std::vector<int>(logical)), mlog_to_log(layers);
  for (int l = 0; l < layers; ++l) {
    for (int e = 0; e < logical; ++e) {
      const int g = e / group_size;
      log_to_mlog[l][e] =
          (group_packing.pack[l][g] * groups_per_node + group_packing.rank_in_pack[l][g]) * group_size +
          e % group_size;
    }
    mlog_to_log[l] = inverse_permutation(log_to_mlog[l]);
  }

  // Step 2: replicate within each node ([layer * nodes + node] rows of node-local experts).
  LoadMatrix node_load(static_cast<std::size_t>(layers) * nodes, std::vector<double>(logical_per_node));
  for (int l = 0; l < layers; ++l)
    for (int m = 0; m < logical; ++m)
      node_load[l * nodes + m / logical_per_node][m % logical_per_node] = weight[l][mlog_to_log[l][m]];
  const Replication replication = replicate_experts(node_load, physical_per_node, gpus / nodes);

  // Step 3: pack each node's physical experts onto its GPUs by load per replica.
  LoadMatrix replica_load(node_load.size(), std::vector<double>(physical_per_node));
  for (std::size_t row = 0; row < node_load.size(); ++row)
    for (int slot = 0; slot < physical_per_node; ++slot) {
      const int m = replication.physical_to_logical[row][slot];
      replica_load[row][slot] = node_load[row][m] / replication.logical_count[row][m];
    }
  const Packing gpu_packing = balanced_packing(replica_load, gpus / nodes);

  EplbPlacement out;
  out.physical_to_logical.assign(layers, std::vector<int>(physical));
  out.logical_count.assign(layers, std::vector<int>(logical));
  for (int l = 0; l < layers; ++l) {
    for (int node = 0; node < nodes; ++node) {
      const std::size_t row = static_cast<std::size_t>(l) * nodes + node;
      for (int slot = 0; slot < physical_per_node; ++slot) {
        const int placed = gpu_packing.pack[row][slot] * slots_per_gpu + gpu_packing.rank_in_pack[row][slot];
        const int mlog = node * logical_per_node + replication.physical_to_logical[row][slot];
        out.physical_to_logical[l][node * physical_per_node + placed] = mlog_to_log[l][mlog];
      }
    }
    for (int e = 0; e < logical; ++e) {
      const int mlog = log_to_mlog[l][e];
      out.logical_count[l][e] = replication.logical_count[static_cast<std::size_t>(l) * nodes +
                                                          mlog / logical_per_node][mlog % logical_per_node];
    }
  }
  return out;
}

EplbPlacement rebalance_experts(const LoadMatrix& weight, int physical, int groups, int nodes, int gpus) {
  if (groups % nodes == 0) return rebalance_hierarchical(weight, physical, groups, nodes, gpus);
  return rebalance_hierarchical(weight, physical, 1, 1, gpus);
}

}  // namespace semsim
