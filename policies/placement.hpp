#pragma once
// Expert placement: for every MoE layer, which logical experts each device hosts (a physical slot
// per hosted expert; an expert hosted on several devices is replicated), and which devices share a
// node (replica choice prefers a replica in the token's node).
#include <cstdint>
#include <span>
#include <vector>

namespace semsim {

// How a token picks among the replicas of an expert when neither its own device nor its node hosts
// one (EPLB's static and dynamic choices): kRoundRobin rotates over the replicas (a per-(layer,
// expert) turn counter), kUniform picks one by a hash of the dispatch and the token's index.
enum class ReplicaChoice { kRoundRobin, kUniform };

struct Placement {
  int moe_layers = 0;
  int experts = 0;
  int devices = 0;
  int devices_per_node = 0;  // node of device d: d / devices_per_node; 0 (or >= devices): one node
  std::vector<std::vector<std::vector<int>>> slots;  // [layer][device] -> logical experts

  // Validates (every expert hosted at least once and at most once per device, ids in range, nodes
  // of equal size), sets devices_per_node to the node size (devices when one node), and builds the
  // lookups below. std::logic_error on a malformed placement: policies must produce valid ones. A
  // placement of no MoE layer and no expert is a dense model's (every lookup is then empty).
  void seal();

  // The device a token on `from_device` uses for `expert`: itself when it hosts a replica, else a
  // replica in its node, else any replica; `spread` picks among several candidates (spread % count).
  int serving_device(int layer, int expert, int from_device, std::uint64_t spread = 0) const {
    const std::size_t key = static_cast<std::size_t>(layer) * experts + expert;
    const int home = home_[key];
    if (home == from_device || replicated_ == 0) return home;
    return choose_replica(key, from_device, spread);
  }
  bool hosts(int layer, int expert, int device) const;
  bool has_replicas() const { return replicated_ > 0; }
  int replica_count(int layer, int expert) const {
    const std::size_t key = static_cast<std::size_t>(layer) * experts + expert;
    return replica_begin_[key + 1] - replica_begin_[key];
  }
  // First hosting device of each expert of `layer` (experts entries).
  const int* home_devices(int layer) const { return &home_[static_cast<std::size_t>(layer) * experts]; }
  long long slots_on_device(int device) const;  // summed over layers (weight memory)
  long long max_slots_per_device() const;       // the most loaded device's slots over all layers
  int most_slots_per_layer() const;             // physical slots (experts + redundant) of the fullest layer
  friend bool operator==(const Placement&, const Placement&) = default;

 private:
  int choose_replica(std::size_t key, int from_device, std::uint64_t spread) const;

  std::vector<int> home_;              // [layer * experts + expert] -> first hosting device
  std::vector<unsigned char> hosted_;  // [(layer * devices + device) * experts + expert]
  std::vector<int> replica_begin_;     // [layer * experts + expert] -> range in replica_devices_
  std::vector<int> replica_devices_;   // hosting devices of each (layer, expert), ascending
  int replicated_ = 0;                 // number of (layer, expert) pairs with more than one replica
};

}  // namespace semsim
