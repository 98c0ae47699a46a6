#include "models/topology.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/input_error.hpp"

namespace semsim {
namespace {

Cluster test_cluster(int nodes, FabricKind fabric) {
  Cluster cluster;
  cluster.name = "test";
  cluster.nodes = nodes;
  cluster.gpus_per_node = 8;
  cluster.scaleup = ScaleUpKind::kNvSwitch;
  cluster.scaleup_bandwidth = 450e9;
  cluster.scaleup_latency = 1e-6;
  cluster.fabric = fabric;
  cluster.nic_bandwidth = 50e9;
  cluster.network_latency = 5e-6;
  return cluster;
}

Cluster pcie_cluster(int switches) {
  Cluster cluster = test_cluster(1, FabricKind::kNone);
  cluster.scaleup = ScaleUpKind::kPcie;
  cluster.scaleup_bandwidth = 32e9;
  cluster.scaleup_latency = 2e-6;
  cluster.pcie_switches = switches;
  cluster.host_bridge_bandwidth = 20e9;
  return cluster;
}

// A route written as "link-name up|down" per hop, for readable comparisons.
std::vector<std::string> hops(const Topology& topology, int src, int dst) {
  std::vector<std::string> names;
  for (const RouteHop& hop : topology.route(src, dst))
    names.push_back(topology.links[hop.link].name + (hop.direction == LinkDirection::kUp ? " up" : " down"));
  return names;
}

using Hops = std::vector<std::string>;

TEST(Topology, NvSwitchNodeIsAStarOfGpuLinks) {
  const Topology topology = Topology::build(test_cluster(1, FabricKind::kNone), 8);
  EXPECT_EQ(topology.devices, 8);
  ASSERT_EQ(topology.links.size(), 8u);
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(topology.links[g].name, "n0-gpu" + std::to_string(g) + "-nvl");
    EXPECT_EQ(topology.links[g].bandwidth, 450e9);
    EXPECT_EQ(topology.links[g].latency, 1e-6);
    EXPECT_EQ(topology.links[g].level, LinkLevel::kScaleUp);
  }
  ASSERT_EQ(topology.routes.size(), 64u);
  EXPECT_EQ(hops(topology, 2, 5), (Hops{"n0-gpu2-nvl up", "n0-gpu5-nvl down"}));
  EXPECT_EQ(hops(topology, 5, 2), (Hops{"n0-gpu5-nvl up", "n0-gpu2-nvl down"}));
  EXPECT_TRUE(topology.route(3, 3).empty());
  EXPECT_DOUBLE_EQ(topology.route_latency(2, 5), 2e-6);
  EXPECT_EQ(topology.route_latency(3, 3), 0.0);
  EXPECT_TRUE(topology.same_node(0, 7));
}

TEST(Topology, FatTreeGoesNicToNic) {
  const Topology topology = Topology::build(test_cluster(2, FabricKind::kFatTree), 16);
  ASSERT_EQ(topology.links.size(), 32u);  // 16 NVLink + 16 NIC links
  EXPECT_EQ(hops(topology, 1, 12), (Hops{"n0-gpu1-nic up", "n1-gpu4-nic down"}));
  EXPECT_EQ(hops(topology, 12, 1), (Hops{"n1-gpu4-nic up", "n0-gpu1-nic down"}));
  EXPECT_EQ(hops(topology, 9, 10), (Hops{"n1-gpu1-nvl up", "n1-gpu2-nvl down"}));
  EXPECT_EQ(topology.links[topology.route(1, 12)[0].link].level, LinkLevel::kScaleOut);
  EXPECT_EQ(topology.links[topology.route(1, 12)[0].link].bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(topology.route_latency(1, 12), 10e-6);
  EXPECT_DOUBLE_EQ(topology.route_latency(9, 10), 2e-6);
  EXPECT_FALSE(topology.same_node(7, 8));
  EXPECT_TRUE(topology.same_node(8, 15));
}

TEST(Topology, RailForwardsCrossRailTrafficOverScaleUpFirst) {
  const Topology topology = Topology::build(test_cluster(2, FabricKind::kRail), 16);
  EXPECT_EQ(hops(topology, 3, 11), (Hops{"n0-gpu3-nic up", "n1-gpu3-nic down"}));  // same rail
  EXPECT_EQ(hops(topology, 1, 12),
            (Hops{"n0-gpu1-nvl up", "n0-gpu4-nvl down", "n0-gpu4-nic up", "n1-gpu4-nic down"}));
  EXPECT_DOUBLE_EQ(topology.route_latency(3, 11), 10e-6);
  EXPECT_DOUBLE_EQ(topology.route_latency(1, 12), 12e-6);
}

TEST(Topology, PcieCrossesTheHostBridgeBetweenSwitches) {
  const Topology topology = Topology::build(pcie_cluster(2), 8);
  ASSERT_EQ(topology.links.size(), 10u);  // 8 GPU links + 2 bridges
  EXPECT_EQ(hops(topology, 1, 2), (Hops{"n0-gpu1-pcie up", "n0-gpu2-pcie down"}));
  EXPECT_EQ(hops(topology, 1, 6),
            (Hops{"n0-gpu1-pcie up", "n0-sw0-bridge up", "n0-sw1-bridge down", "n0-gpu6-pcie down"}));
  EXPECT_EQ(hops(topology, 7, 4), (Hops{"n0-gpu7-pcie up", "n0-gpu4-pcie down"}));
  EXPECT_EQ(topology.links[topology.route(1, 6)[1].link].bandwidth, 20e9);
  EXPECT_DOUBLE_EQ(topology.route_latency(1, 2), 4e-6);
  EXPECT_DOUBLE_EQ(topology.route_latency(1, 6), 8e-6);
}

TEST(Topology, SinglePcieSwitchHasNoBridge) {
  const Topology topology = Topology::build(pcie_cluster(1), 8);
  EXPECT_EQ(topology.links.size(), 8u);
  EXPECT_EQ(hops(topology, 1, 6), (Hops{"n0-gpu1-pcie up", "n0-gpu6-pcie down"}));
}

TEST(Topology, UsesTheFirstDevicesNodeMajor) {
  const Topology one_node = Topology::build(test_cluster(2, FabricKind::kFatTree), 8);
  EXPECT_EQ(one_node.links.size(), 8u);  // the fabric is not reached
  const Topology partial = Topology::build(test_cluster(2, FabricKind::kFatTree), 12);
  EXPECT_EQ(partial.routes.size(), 144u);
  EXPECT_EQ(hops(partial, 11, 0), (Hops{"n1-gpu3-nic up", "n0-gpu0-nic down"}));
  EXPECT_TRUE(partial.same_node(8, 11));
}

TEST(Topology, RejectsDevicesOutsideTheCluster) {
  const Cluster cluster = test_cluster(2, FabricKind::kFatTree);
  EXPECT_THROW(Topology::build(cluster, 17), InputError);
  EXPECT_THROW(Topology::build(cluster, 0), InputError);
  EXPECT_NO_THROW(Topology::build(cluster, 16));
}

TEST(Topology, RejectsInconsistentClusters) {
  EXPECT_THROW(Topology::build(test_cluster(2, FabricKind::kNone), 16), InputError);
  Cluster no_nic = test_cluster(2, FabricKind::kFatTree);
  no_nic.nic_bandwidth = 0;
  EXPECT_THROW(Topology::build(no_nic, 16), InputError);
  EXPECT_THROW(Topology::build(pcie_cluster(3), 8), InputError);
}

}  // namespace
}  // namespace semsim
