#pragma once
// The cluster's links and the route between every pair of devices, as plain data. Both network
// fidelities read this one description: `flow` turns it into a SimGrid platform, `bottleneck`
// sums link loads over it — so they cannot disagree about the topology.
#include <string>
#include <vector>

#include "models/cluster.hpp"

namespace semsim {

enum class LinkLevel { kScaleUp, kScaleOut };

// A split-duplex link: independent capacity in each direction.
struct TopologyLink {
  std::string name;
  double bandwidth = 0;  // bytes/s per direction
  double latency = 0;    // seconds
  LinkLevel level = LinkLevel::kScaleUp;
};

enum class LinkDirection { kUp, kDown };

struct RouteHop {
  int link = 0;
  LinkDirection direction = LinkDirection::kUp;
};

// A channel is one direction of one link, numbered link * 2 (up) and link * 2 + 1 (down): loads add
// up per channel, never across directions.
inline int channel(const RouteHop& hop) {
  return hop.link * 2 + (hop.direction == LinkDirection::kUp ? 0 : 1);
}

struct Topology {
  int devices = 0;
  int devices_per_node = 0;
  std::vector<TopologyLink> links;
  std::vector<std::vector<RouteHop>> routes;  // [src * devices + dst]; empty when src == dst

  const std::vector<RouteHop>& route(int src, int dst) const { return routes[src * devices + dst]; }
  bool same_node(int a, int b) const { return a / devices_per_node == b / devices_per_node; }
  double route_latency(int src, int dst) const;

  // What the route between two devices takes: its vector and the few hops it holds on the heap.
  static constexpr double kBytesPerRoute = sizeof(std::vector<RouteHop>) + 64;

  // Builds links and routes for the first `devices` GPUs of the cluster (EP group placed node-major);
  // InputError, before allocating, when the devices^2 routes exceed the machine's memory.
  static Topology build(const Cluster& cluster, int devices);
};

}  // namespace semsim
