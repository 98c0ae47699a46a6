#include "policies/placement.hpp"

#include <algorithm>
#include <stdexcept>

namespace semsim {

void Placement::seal() {
  auto fail = [](const std::string& what) { throw std::logic_error("placement: " + what); };
  // A dense model's placement is empty: no layer and no expert.
  const bool empty = moe_layers == 0 && experts == 0;
  if (!empty && (moe_layers <= 0 || experts <= 0)) fail("layers and experts must be positive, or both 0");
  if (devices <= 0) fail("devices must be positive");
  if (static_cast<int>(slots.size()) != moe_layers) fail("wrong layer count");
  if (devices_per_node <= 0 || devices_per_node > devices) devices_per_node = devices;
  if (devices % devices_per_node != 0)
    fail(std::to_string(devices_per_node) + " devices per node do not divide " + std::to_string(devices) +
         " devices");
  const std::size_t pairs = static_cast<std::size_t>(moe_layers) * experts;
  home_.assign(pairs, -1);
  hosted_.assign(static_cast<std::size_t>(moe_layers) * devices * experts, 0);
  std::vector<int> counts(pairs, 0);
  for (int layer = 0; layer < moe_layers; ++layer) {
    if (static_cast<int>(slots[layer].size()) != devices) fail("wrong device count");
    for (int device = 0; device < devices; ++device)
      for (int expert : slots[layer][device]) {
        if (expert < 0 || expert >= experts) fail("expert id " + std::to_string(expert) + " out of range");
        unsigned char& hosted =
            hosted_[(static_cast<std::size_t>(layer) * devices + device) * experts + expert];
        if (hosted)
          fail("expert " + std::to_string(expert) + " twice on device " + std::to_string(device) +
               " in layer " + std::to_string(layer));
        hosted = 1;
        const std::size_t key = static_cast<std::size_t>(layer) * experts + expert;
        if (home_[key] < 0) home_[key] = device;
        ++counts[key];
      }
    for (int expert = 0; expert < experts; ++expert)
      if (home_[static_cast<std::size_t>(layer) * experts + expert] < 0)
        fail("expert " + std::to_string(expert) + " of layer " + std::to_string(layer) +
             " is hosted nowhere");
  }
  // Devices are visited in ascending order, so each expert's replica list comes out sorted.
  replica_begin_.assign(pairs + 1, 0);
  replicated_ = 0;
  for (std::size_t key = 0; key < pairs; ++key) {
    replica_begin_[key + 1] = replica_begin_[key] + counts[key];
    replicated_ += counts[key] > 1 ? 1 : 0;
  }
  replica_devices_.assign(static_cast<std::size_t>(replica_begin_[pairs]), 0);
  std::vector<int> filled(replica_begin_.begin(), replica_begin_.end() - 1);
  for (int layer = 0; layer < moe_layers; ++layer)
    for (int device = 0; device < devices; ++device)
      for (int expert : slots[layer][device])
        replica_devices_[filled[static_cast<std::size_t>(layer) * experts + expert]++] = device;
}

int Placement::choose_replica(std::size_t key, int from_device, std::uint64_t spread) const {
  const int* replicas = replica_devices_.data() + replica_begin_[key];
  const int count = replica_begin_[key + 1] - replica_begin_[key];
  if (count == 1) return replicas[0];
  // Replicas are sorted and nodes are contiguous device ranges: the node's replicas are one run.
  const int node = from_device / devices_per_node;
  int node_first = count, node_count = 0;
  for (int i = 0; i < count; ++i) {
    if (replicas[i] == from_device) return from_device;
    if (replicas[i] / devices_per_node == node) {
      node_first = std::min(node_first, i);
      ++node_count;
    }
  }
  if (node_count > 0) return replicas[node_first + static_cast<int>(spread % node_count)];
  return replicas[spread % count];
}

bool Placement::hosts(int layer, int expert, int device) const {
  return hosted_[(static_cast<std::size_t>(layer) * devices + device) * experts + expert] != 0;
}

long long Placement::slots_on_device(int device) const {
  long long count = 0;
  for (const auto& layer : slots) count += static_cast<long long>(layer[device].size());
  return count;
}

long long Placement::max_slots_per_device() const {
  long long most = 0;
  for (int device = 0; device < devices; ++device) most = std::max(most, slots_on_device(device));
  return most;
}

int Placement::most_slots_per_layer() const {
  std::size_t most = 0;
  for (const auto& layer : slots) {
    std::size_t physical = 0;
    for (const auto& device : layer) physical += device.size();
    most = std::max(most, physical);
  }
  return static_cast<int>(most);
}

}  // namespace semsim
