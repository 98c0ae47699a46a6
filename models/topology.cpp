#include "models/topology.hpp"

#include <fmt/format.h>

#include "models/input_error.hpp"
#include "models/memory_budget.hpp"

namespace semsim {
namespace {

// Creates the links of every node the EP group touches (all GPUs of those nodes, since PXN may
// forward through a GPU outside the group) and answers route queries between devices.
class TopologyBuilder {
 public:
  TopologyBuilder(const Cluster& cluster, int devices, Topology& topology)
      : cluster_(cluster), topology_(topology) {
    const int gpus = cluster.gpus_per_node;
    const int nodes = (devices + gpus - 1) / gpus;
    const int switches = cluster.scaleup == ScaleUpKind::kPcie ? cluster.pcie_switches : 1;
    if (switches < 1 || gpus % switches != 0)
      throw InputError(fmt::format("cluster '{}': pcie_switches ({}) must divide gpus_per_node ({})",
                                   cluster.name, switches, gpus));
    gpus_per_switch_ = gpus / switches;
    if (nodes > 1 && cluster.fabric == FabricKind::kNone)
      throw InputError(fmt::format("cluster '{}': {} devices span {} nodes, which needs a fabric",
                                   cluster.name, devices, nodes));

    const char* gpu_link_suffix = cluster.scaleup == ScaleUpKind::kPcie ? "pcie" : "nvl";
    for (int node = 0; node < nodes; ++node) {
      for (int g = 0; g < gpus; ++g)
        gpu_link_.push_back(add_link(fmt::format("n{}-gpu{}-{}", node, g, gpu_link_suffix),
                                     cluster.scaleup_bandwidth, cluster.scaleup_latency,
                                     LinkLevel::kScaleUp));
      if (switches > 1)
        for (int s = 0; s < switches; ++s)
          bridge_link_.push_back(add_link(fmt::format("n{}-sw{}-bridge", node, s),
                                          cluster.host_bridge_bandwidth, cluster.scaleup_latency,
                                          LinkLevel::kScaleUp));
      if (nodes > 1)
        for (int g = 0; g < gpus; ++g)
          nic_link_.push_back(add_link(fmt::format("n{}-gpu{}-nic", node, g), cluster.nic_bandwidth,
                                       cluster.network_latency, LinkLevel::kScaleOut));
    }
  }

  std::vector<RouteHop> route(int src, int dst) const {
    std::vector<RouteHop> hops;
    if (src == dst) return hops;
    const int gpus = cluster_.gpus_per_node;
    const int src_node = src / gpus, dst_node = dst / gpus;
    const int src_gpu = src % gpus, dst_gpu = dst % gpus;
    if (src_node == dst_node) {
      append_scaleup(src_node, src_gpu, dst_gpu, hops);
      return hops;
    }
    int sender = src;  // the GPU whose NIC puts the data on the fabric
    if (cluster_.fabric == FabricKind::kRail && src_gpu != dst_gpu) {
      // PXN: move the data inside the source node to the GPU on the destination's rail first.
      append_scaleup(src_node, src_gpu, dst_gpu, hops);
      sender = src_node * gpus + dst_gpu;
    }
    hops.push_back({nic_link_[sender], LinkDirection::kUp});
    hops.push_back({nic_link_[dst], LinkDirection::kDown});
    return hops;
  }

 private:
  int add_link(std::string name, double bandwidth, double latency, LinkLevel level) {
    if (!(bandwidth > 0))
      throw InputError(
          fmt::format("cluster '{}': link '{}' needs a positive bandwidth", cluster_.name, name));
    topology_.links.push_back({std::move(name), bandwidth, latency, level});
    return static_cast<int>(topology_.links.size()) - 1;
  }

  // GPU links are indexed [node * gpus_per_node + gpu], bridges [node * switches + switch].
  void append_scaleup(int node, int src_gpu, int dst_gpu, std::vector<RouteHop>& hops) const {
    const int gpus = cluster_.gpus_per_node;
    hops.push_back({gpu_link_[node * gpus + src_gpu], LinkDirection::kUp});
    const int src_switch = src_gpu / gpus_per_switch_, dst_switch = dst_gpu / gpus_per_switch_;
    if (src_switch != dst_switch) {
      const int switches = gpus / gpus_per_switch_;
      hops.push_back({bridge_link_[node * switches + src_switch], LinkDirection::kUp});
      hops.push_back({bridge_link_[node * switches + dst_switch], LinkDirection::kDown});
    }
    hops.push_back({gpu_link_[node * gpus + dst_gpu], LinkDirection::kDown});
  }

  const Cluster& cluster_;
  Topology& topology_;
  int gpus_per_switch_ = 1;
  std::vector<int> gpu_link_;
  std::vector<int> bridge_link_;
  std::vector<int> nic_link_;  // [node * gpus_per_node + gpu]
};

}  // namespace

double Topology::route_latency(int src, int dst) const {
  double latency = 0;
  for (const RouteHop& hop : route(src, dst)) latency += links[hop.link].latency;
  return latency;
}

Topology Topology::build(const Cluster& cluster, int devices) {
  if (cluster.gpus_per_node < 1 || cluster.nodes < 1)
    throw InputError(fmt::format("cluster '{}' has no devices", cluster.name));
  if (devices < 1 || devices > cluster.devices())
    throw InputError(fmt::format("cluster '{}' has {} devices; cannot place an EP group of {}", cluster.name,
                                 cluster.devices(), devices));
  Topology topology;
  topology.devices = devices;
  // The physical node size, so that same_node() holds for a partly used last node too.
  topology.devices_per_node = cluster.gpus_per_node;
  const double pairs = static_cast<double>(devices) * devices;
  check_memory_need(pairs * kBytesPerRoute,
                    fmt::format("the routes between every two of {} devices ({:.4g} pairs)", devices, pairs));
  const TopologyBuilder builder(cluster, devices, topology);
  topology.routes.reserve(static_cast<std::size_t>(devices) * devices);
  for (int src = 0; src < devices; ++src)
    for (int dst = 0; dst < devices; ++dst) topology.routes.push_back(builder.route(src, dst));
  return topology;
}

}  // namespace semsim
