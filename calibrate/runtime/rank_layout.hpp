#pragma once
// Where the ranks of a multi-node calibration sit: rank r is GPU r % G of node r / G (launchers
// place ranks by node), and GPU i of every node is on rail i (its own NIC, switched with the same
// GPU of the other nodes). What the microbenchmarks measure across nodes follows from it: the
// sub-communicators over the first 2 .. N nodes, and GPU pairs between two nodes on the same rail
// and across rails. Pure C++: the microbenchmarks build with it too.
#include <string>
#include <vector>

namespace semsim {

// Two ranks that exchange point-to-point traffic across nodes.
struct RankPair {
  int from = 0;
  int to = 0;
  bool same_rail = false;
  bool operator==(const RankPair&) const = default;
};

class RankLayout {
 public:
  // InputError unless both are positive.
  RankLayout(int nodes, int gpus_per_node);

  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int ranks() const { return nodes_ * gpus_per_node_; }
  int node_of(int rank) const { return rank / gpus_per_node_; }
  int local_of(int rank) const { return rank % gpus_per_node_; }
  int rank_of(int node, int local) const { return node * gpus_per_node_ + local; }
  // Ranks on different nodes with the same local index: their traffic stays on one rail.
  bool same_rail(int a, int b) const { return node_of(a) != node_of(b) && local_of(a) == local_of(b); }

  // The point-to-point pairs measured between nodes 0 and 1: GPU 0 to GPU 0 (same rail) and, with
  // more than one GPU per node, GPU 0 to GPU 1 (across rails). None on one node.
  std::vector<RankPair> inter_node_pairs() const;

  // Rank counts of node 0's sub-communicators (scale-up): every count from all its GPUs down to 2,
  // ranks 0 .. n-1.
  std::vector<int> scaleup_group_sizes() const;
  // Node counts of the scale-out sub-communicators: every count from all nodes down to 2, over
  // nodes 0 .. k-1 with all their GPUs.
  std::vector<int> scaleout_group_nodes() const;

 private:
  int nodes_;
  int gpus_per_node_;
};

}  // namespace semsim
