#pragma once
// Test clusters of (by default) 8-GPU nodes with round-number links, shared by the network and executor
// tests.
#include "models/cluster.hpp"
#include "models/topology.hpp"

namespace semsim::test {

constexpr double kNvlBandwidth = 450e9;
constexpr double kNvlLatency = 1e-6;
constexpr double kNicBandwidth = 50e9;
constexpr double kNicLatency = 5e-6;

inline Topology build_topology(int nodes, FabricKind fabric, int gpus_per_node = 8) {
  Cluster cluster;
  cluster.name = "test";
  cluster.nodes = nodes;
  cluster.gpus_per_node = gpus_per_node;
  cluster.scaleup_bandwidth = kNvlBandwidth;
  cluster.scaleup_latency = kNvlLatency;
  cluster.fabric = fabric;
  cluster.nic_bandwidth = kNicBandwidth;
  cluster.network_latency = kNicLatency;
  return Topology::build(cluster, cluster.devices());
}

}  // namespace semsim::test
