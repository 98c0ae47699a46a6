#pragma once
// DeepSeek's Expert Parallelism Load Balancer (EPLB), as three small functions over per-layer
// expert loads, plus the policy that chooses between its hierarchical and global forms.
// Shapes: L = MoE layers, N = logical experts, P = physical slots (N + redundant), G = GPUs.
#include <limits>
#include <vector>

namespace semsim {

using LoadMatrix = std::vector<std::vector<double>>;  // [L][items]
using IndexMatrix = std::vector<std::vector<int>>;    // [L][items]

struct Packing {
  IndexMatrix pack;          // [L][n] pack of each item
  IndexMatrix rank_in_pack;  // [L][n] position of the item inside its pack
};

// Packs n weighted items into m packs of exactly n/m items each (m divides n): items in
// decreasing weight (ties by index), each into the lightest pack that still has room.
Packing balanced_packing(const LoadMatrix& weight, int packs);

struct Replication {
  IndexMatrix physical_to_logical;  // [L][P]
  IndexMatrix replica_rank;         // [L][P] which replica of its logical expert a slot is
  IndexMatrix logical_count;        // [L][N] replicas per logical expert
};

// Slots 0..N-1 hold each logical expert once; each further slot replicates the expert with the
// largest load per replica (ties by index) among those with fewer than `max_replicas`.
Replication replicate_experts(const LoadMatrix& weight, int physical,
                              int max_replicas = std::numeric_limits<int>::max());

struct EplbPlacement {
  IndexMatrix physical_to_logical;  // [L][P], slots numbered GPU-major: slot s is on GPU s / (P/G)
  IndexMatrix logical_count;        // [L][N]
};

// Hierarchical policy: expert groups packed onto nodes, replicas made within each node, physical
// experts packed onto the node's GPUs. So a group's experts, replicas and all, stay on one node, and
// under group-limited routing (a token's experts from at most topk_group groups) a token reaches at
// most topk_group nodes. Unlike DeepSeek's reference, an expert gets at most as many
// replicas in a node as the node has GPUs (a GPU holds an expert once). Requires groups % nodes == 0, gpus %
// nodes == 0, N % groups == 0, P % gpus == 0, (P - N) % nodes == 0.
EplbPlacement rebalance_hierarchical(const LoadMatrix& weight, int physical, int groups, int nodes, int gpus);

// DeepSeek's entry point: hierarchical when groups divide nodes, otherwise the global policy
// (hierarchical with one group and one node).
EplbPlacement rebalance_experts(const LoadMatrix& weight, int physical, int groups, int nodes, int gpus);

}  // namespace semsim
