#include "policies/spare_slot_replicas.hpp"

#include <stdexcept>

namespace semsim {

std::vector<std::vector<int>> fill_spare_slots(std::vector<std::vector<int>> device_experts,
                                               int slots_per_device, std::span<const double> expert_load,
                                               std::span<const double> demand) {
  const int devices = static_cast<int>(device_experts.size());
  const int experts = static_cast<int>(expert_load.size());
  if (slots_per_device > experts || demand.size() != static_cast<std::size_t>(devices) * experts)
    throw std::invalid_argument("fill_spare_slots: slots per device or demand table do not fit the experts");
  std::vector<unsigned char> hosted(static_cast<std::size_t>(devices) * experts, 0);  // [d * experts + e]
  std::vector<int> copies(experts, 0);
  int spare = 0;
  for (int d = 0; d < devices; ++d) {
    if (static_cast<int>(device_experts[d].size()) > slots_per_device)
      throw std::invalid_argument("fill_spare_slots: a device holds more experts than its slots");
    for (const int e : device_experts[d]) {
      unsigned char& held = hosted.at(static_cast<std::size_t>(d) * experts + e);
      if (held) throw std::invalid_argument("fill_spare_slots: a device holds an expert twice");
      held = 1;
      ++copies[e];
    }
    spare += slots_per_device - static_cast<int>(device_experts[d].size());
  }
  for (const int c : copies)
    if (c == 0) throw std::invalid_argument("fill_spare_slots: an expert is on no device");

  // The device with a spare slot that lacks `expert` and whose tokens use it most; -1: none.
  auto best_device_for = [&](int expert) {
    int best = -1;
    for (int d = 0; d < devices; ++d) {
      const std::size_t key = static_cast<std::size_t>(d) * experts + expert;
      if (hosted[key] || static_cast<int>(device_experts[d].size()) == slots_per_device) continue;
      if (best < 0 || demand[key] > demand[static_cast<std::size_t>(best) * experts + expert]) best = d;
    }
    return best;
  };
  // A device with a spare slot holds fewer than slots_per_device <= experts, so it lacks some expert:
  // every round places one replica.
  for (; spare > 0; --spare) {
    int expert = -1, device = -1;
    double per_replica = 0;
    for (int e = 0; e < experts; ++e) {
      const double load = expert_load[e] / copies[e];
      if (expert >= 0 && !(load > per_replica)) continue;
      const int d = best_device_for(e);
      if (d < 0) continue;
      expert = e, device = d, per_replica = load;
    }
    device_experts[device].push_back(expert);
    hosted[static_cast<std::size_t>(device) * experts + expert] = 1;
    ++copies[expert];
  }
  return device_experts;
}

}  // namespace semsim
