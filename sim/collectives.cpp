#include "sim/collectives.hpp"

namespace semsim {

Collective all_to_allv(std::span<const long long> copies, int devices, double bytes_per_copy, bool reverse,
                       double overhead) {
  return {CopyTraffic{copies, devices, bytes_per_copy, reverse}, overhead, std::nullopt};
}

double alone_seconds(const Collective& collective, LoneCollectiveTime& network) {
  if (collective.measured_seconds) return *collective.measured_seconds;
  return collective.overhead + network.seconds(collective.traffic);
}

std::vector<long long> every_pair(int devices) {
  std::vector<long long> pairs(static_cast<std::size_t>(devices) * devices, 1);
  for (int device = 0; device < devices; ++device)
    pairs[static_cast<std::size_t>(device) * devices + device] = 0;
  return pairs;
}

std::vector<long long> shard_exchange_pairs(int devices, int devices_per_node) {
  if (devices <= devices_per_node || devices_per_node <= 0) return every_pair(devices);
  const int nodes = devices / devices_per_node;
  std::vector<long long> pairs(static_cast<std::size_t>(devices) * devices, 0);
  for (int src = 0; src < devices; ++src)
    for (int dst = 0; dst < devices; ++dst) {
      if (src == dst) continue;
      const bool same_node = src / devices_per_node == dst / devices_per_node;
      const bool same_local_index = src % devices_per_node == dst % devices_per_node;
      pairs[static_cast<std::size_t>(src) * devices + dst] = same_node ? nodes : same_local_index ? 1 : 0;
    }
  return pairs;
}

Collective equal_shard_exchange(std::span<const long long> pairs, int devices, double shard_bytes,
                                double overhead) {
  return {CopyTraffic{pairs, devices, shard_bytes, false, true}, overhead, std::nullopt};
}

}  // namespace semsim
