#pragma once
// Expert placement: for every MoE layer, which logical experts each device hosts (a physical slot
// per hosted expert; an expert hosted on several devices is replicated).
#include <vector>

namespace semsim {

struct Placement {
  int moe_layers = 0;
  int experts = 0;
  int devices = 0;
  std::vector<std::vector<std::vector<int>>> slots;  // [layer][device] -> logical experts

  // Validates (every expert hosted at least once, ids in range) and builds the lookups below.
  void seal();

  // The device a token on `from_device` uses for `expert`: itself when it hosts a replica, else the
  // expert's first replica (richer replica choice comes with replicated policies).
  int serving_device(int layer, int expert, int from_device) const {
    const int home = home_[static_cast<std::size_t>(layer) * experts + expert];
    if (home == from_device || replicated_ == 0) return home;
    return hosts(layer, expert, from_device) ? from_device : home;
  }
  bool hosts(int layer, int expert, int device) const;
  bool has_replicas() const { return replicated_ > 0; }
  // First hosting device of each expert of `layer` (experts entries).
  const int* home_devices(int layer) const { return &home_[static_cast<std::size_t>(layer) * experts]; }
  long long slots_on_device(int device) const;  // summed over layers (weight memory)

 private:
  std::vector<int> home_;              // [layer * experts + expert] -> first hosting device
  std::vector<unsigned char> hosted_;  // [(layer * devices + device) * experts + expert]
  int replicated_ = 0;                 // number of (layer, expert) pairs with more than one replica
};

}  // namespace semsim
