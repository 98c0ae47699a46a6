#include "calibrate/runtime/rank_layout.hpp"

#include "models/input_error.hpp"

namespace semsim {

RankLayout::RankLayout(int nodes, int gpus_per_node) : nodes_(nodes), gpus_per_node_(gpus_per_node) {
  if (nodes < 1 || gpus_per_node < 1)
    throw InputError("calibrate: a rank layout needs at least one node and one GPU per node (got " +
                     std::to_string(nodes) + " nodes of " + std::to_string(gpus_per_node) + ")");
}

std::vector<RankPair> RankLayout::inter_node_pairs() const {
  if (nodes_ < 2) return {};
  std::vector<RankPair> pairs{{rank_of(0, 0), rank_of(1, 0), true}};
  if (gpus_per_node_ > 1) pairs.push_back({rank_of(0, 0), rank_of(1, 1), false});
  return pairs;
}

std::vector<int> RankLayout::scaleup_group_sizes() const {
  std::vector<int> sizes;
  for (int n = gpus_per_node_; n >= 2; --n) sizes.push_back(n);
  return sizes;
}

std::vector<int> RankLayout::scaleout_group_nodes() const {
  std::vector<int> counts;
  for (int k = nodes_; k >= 2; --k) counts.push_back(k);
  return counts;
}

}  // namespace semsim
