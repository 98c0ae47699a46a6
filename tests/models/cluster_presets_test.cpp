// Cluster presets: the presets that existed before presets took a node count, field by field, and
// the node-count and fabric parameters (`cluster: {preset: NAME, nodes: N, fabric: KIND}`).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/presets.hpp"
#include "models/topology.hpp"

namespace semsim {
namespace {

// Every field a run reads, at full precision.
std::string cluster_fields(const Cluster& c) {
  const Device& d = c.device;
  return fmt::format(
      "{} nodes={} gpus_per_node={} scaleup={} scaleup_bw={:.17g} scaleup_lat={:.17g} pcie_switches={} "
      "host_bridge={:.17g} fabric={} nic={:.17g} net_lat={:.17g} | device {} bf16={:.17g} fp8={:.17g} "
      "hbm={:.17g} hbm_bw={:.17g} scaleup={:.17g} nic={:.17g} cu={} comm={}",
      c.name, c.nodes, c.gpus_per_node, static_cast<int>(c.scaleup), c.scaleup_bandwidth, c.scaleup_latency,
      c.pcie_switches, c.host_bridge_bandwidth, static_cast<int>(c.fabric), c.nic_bandwidth,
      c.network_latency, d.name, d.bf16_flops, d.fp8_flops, d.hbm_bytes, d.hbm_bandwidth, d.scaleup_bandwidth,
      d.nic_bandwidth, d.compute_units, d.communication_units);
}

// `cluster: VALUE` of a scenario, as load_scenario reads it.
Cluster scenario_cluster(const std::string& value) {
  const YamlInput doc = YamlInput::parse("cluster: " + value + "\n", "s.yaml");
  return load_cluster(doc.required("cluster"), "");
}

// The message of the InputError reading `cluster: VALUE` raises ("" when it reads).
std::string cluster_error(const std::string& value) {
  try {
    scenario_cluster(value);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every preset that existed before presets took a node count, as the build before that change
// read it (cluster_fields): results/ and the golden tests name them, so they must not change.
const std::vector<std::pair<std::string, std::string>> kPresetsBeforeNodeCounts = {
    {"a100-1x8",
     "a100-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=300000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=0 nic=25000000000 net_lat=0 | device a100-sxm-80gb "
     "bf16=312000000000000 fp8=0 hbm=80000000000 hbm_bw=2039000000000 scaleup=300000000000 nic=25000000000 "
     "cu=108 comm=24"},
    {"ascend-910b-1x8",
     "ascend-910b-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=196000000000 "
     "scaleup_lat=9.9999999999999995e-07 pcie_switches=1 host_bridge=0 fabric=0 nic=25000000000 net_lat=0 | "
     "device ascend-910b bf16=320000000000000 fp8=0 hbm=64000000000 hbm_bw=1600000000000 "
     "scaleup=196000000000 nic=25000000000 cu=0 comm=0"},
    {"b200-1x8",
     "b200-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=900000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=0 nic=50000000000 net_lat=0 | device b200 bf16=2250000000000000 "
     "fp8=4500000000000000 hbm=180000000000 hbm_bw=8000000000000 scaleup=900000000000 nic=50000000000 cu=148 "
     "comm=24"},
    {"h100-1x8",
     "h100-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=450000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=0 nic=50000000000 net_lat=0 | device h100-sxm "
     "bf16=989500000000000 fp8=1979000000000000 hbm=80000000000 hbm_bw=3350000000000 scaleup=450000000000 "
     "nic=50000000000 cu=132 comm=24"},
    {"h100-pcie-8x",
     "h100-pcie-8x nodes=1 gpus_per_node=8 scaleup=1 scaleup_bw=52000000000 "
     "scaleup_lat=1.9999999999999999e-06 pcie_switches=2 host_bridge=32000000000 fabric=0 nic=50000000000 "
     "net_lat=0 | device h100-pcie bf16=756500000000000 fp8=1513000000000000 hbm=80000000000 "
     "hbm_bw=2000000000000 scaleup=64000000000 nic=50000000000 cu=114 comm=24"},
    {"h200-1x8",
     "h200-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=450000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=0 nic=50000000000 net_lat=0 | device h200-sxm "
     "bf16=989500000000000 fp8=1979000000000000 hbm=141000000000 hbm_bw=4800000000000 scaleup=450000000000 "
     "nic=50000000000 cu=132 comm=24"},
    {"h200-2x8",
     "h200-2x8 nodes=2 gpus_per_node=8 scaleup=0 scaleup_bw=450000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=1 nic=50000000000 net_lat=2.5000000000000002e-06 | device "
     "h200-sxm bf16=989500000000000 fp8=1979000000000000 hbm=141000000000 hbm_bw=4800000000000 "
     "scaleup=450000000000 nic=50000000000 cu=132 comm=24"},
    {"h200-32x8-rail",
     "h200-32x8-rail nodes=32 gpus_per_node=8 scaleup=0 scaleup_bw=450000000000 "
     "scaleup_lat=9.9999999999999995e-07 pcie_switches=1 host_bridge=0 fabric=2 nic=50000000000 "
     "net_lat=3.0000000000000001e-06 | device h200-sxm bf16=989500000000000 fp8=1979000000000000 "
     "hbm=141000000000 hbm_bw=4800000000000 scaleup=450000000000 nic=50000000000 cu=132 comm=24"},
    {"h800-1x8",
     "h800-1x8 nodes=1 gpus_per_node=8 scaleup=0 scaleup_bw=200000000000 scaleup_lat=9.9999999999999995e-07 "
     "pcie_switches=1 host_bridge=0 fabric=0 nic=50000000000 net_lat=0 | device h800-sxm "
     "bf16=989500000000000 fp8=1979000000000000 hbm=80000000000 hbm_bw=3350000000000 scaleup=200000000000 "
     "nic=50000000000 cu=132 comm=24"},
};

TEST(ClusterPresets, OldNamesGiveTheClustersTheyGaveBefore) {
  for (const auto& [name, fields] : kPresetsBeforeNodeCounts) {
    EXPECT_EQ(cluster_fields(cluster_preset(name)), fields) << name;
    // The map form at the preset's own size and fabric is the same cluster, name included.
    EXPECT_EQ(cluster_fields(scenario_cluster("{preset: " + name + "}")), fields) << name;
  }
  EXPECT_EQ(cluster_fields(scenario_cluster("{preset: h200-2x8, nodes: 2, fabric: fat_tree}")),
            kPresetsBeforeNodeCounts[6].second);
  EXPECT_EQ(cluster_fields(scenario_cluster("{preset: h200-32x8-rail, nodes: 32}")),
            kPresetsBeforeNodeCounts[7].second);
}

TEST(ClusterPresets, OldPresetsHaveTheirOwnNodeCountOnly) {
  for (const auto& [name, fields] : kPresetsBeforeNodeCounts) {
    const Cluster c = cluster_preset(name);
    EXPECT_TRUE(c.fixed_nodes) << name;
    EXPECT_EQ(c.max_nodes, c.nodes) << name;
    EXPECT_EQ(c.fabric_choices, std::vector<FabricKind>{c.fabric}) << name;
  }
}

// `{preset: X, nodes: N}` is N nodes of X's gpus_per_node devices, with X's links.
TEST(ClusterPresets, NodesGiveThatManyNodesOfThePresetsDevicesAndLinks) {
  const std::vector<std::pair<std::string, std::vector<int>>> presets = {{"h800-ib", {1, 4, 18, 2048}},
                                                                         {"h100-ib", {1, 2, 256}},
                                                                         {"h200-ib", {1, 2, 32, 256}},
                                                                         {"gb200-nvl72", {1, 2, 28}},
                                                                         {"cloudmatrix384", {1, 2, 5}}};
  for (const auto& [name, counts] : presets) {
    const Cluster preset = cluster_preset(name);
    EXPECT_FALSE(preset.fixed_nodes) << name;
    EXPECT_EQ(preset.nodes, 1) << name;
    EXPECT_EQ(preset.max_nodes, counts.back()) << name;
    for (const int nodes : counts) {
      const Cluster c = scenario_cluster(fmt::format("{{preset: {}, nodes: {}}}", name, nodes));
      SCOPED_TRACE(name + " at " + std::to_string(nodes) + " nodes");
      EXPECT_EQ(c.nodes, nodes);
      EXPECT_EQ(c.gpus_per_node, preset.gpus_per_node);
      EXPECT_EQ(c.devices(), nodes * preset.gpus_per_node);
      EXPECT_EQ(c.name, nodes == 1 ? name : fmt::format("{}-{}x{}", name, nodes, preset.gpus_per_node));
      // Only the size and the name differ from the preset.
      Cluster same_size = c;
      same_size.nodes = preset.nodes;
      same_size.name = preset.name;
      EXPECT_EQ(cluster_fields(same_size), cluster_fields(preset));
      EXPECT_EQ(c.fabric, preset.fabric);
    }
  }
}

TEST(ClusterPresets, TheFabricIsChosenAmongThePresetsChoices) {
  const Cluster rail = scenario_cluster("{preset: h800-ib, nodes: 4}");
  EXPECT_EQ(rail.fabric, FabricKind::kRail);
  const Cluster fat_tree = scenario_cluster("{preset: h800-ib, nodes: 4, fabric: fat_tree}");
  EXPECT_EQ(fat_tree.fabric, FabricKind::kFatTree);
  EXPECT_EQ(fat_tree.name, "h800-ib-4x8-fat_tree");
  EXPECT_EQ(fat_tree.nic_bandwidth, rail.nic_bandwidth);
  EXPECT_EQ(fat_tree.network_latency, rail.network_latency);
  // The preset's default fabric named explicitly is the preset's cluster.
  EXPECT_EQ(scenario_cluster("{preset: gb200-nvl72, fabric: rail}").name, "gb200-nvl72");
  EXPECT_EQ(scenario_cluster("{preset: gb200-nvl72, nodes: 2, fabric: fat_tree}").fabric,
            FabricKind::kFatTree);
  EXPECT_EQ(cluster_preset("cloudmatrix384").fabric_choices, std::vector<FabricKind>{FabricKind::kFatTree});
}

// The topology of a sized preset: its nodes' NVSwitch and NIC links, rail traffic forwarded over
// NVSwitch to the destination's rail first (PXN), fat-tree traffic straight onto the fabric.
TEST(ClusterPresets, ASizedPresetsTopologyHasItsNodesLinks) {
  const Cluster rail = scenario_cluster("{preset: h800-ib, nodes: 4}");
  const Topology t = Topology::build(rail, 32);
  ASSERT_EQ(t.links.size(), 64u);  // 32 NVSwitch ports, 32 NICs
  int nics = 0;
  for (const TopologyLink& link : t.links) {
    if (link.level == LinkLevel::kScaleOut) {
      ++nics;
      EXPECT_EQ(link.bandwidth, 50e9) << link.name;
    } else {
      EXPECT_EQ(link.bandwidth, 200e9) << link.name;  // H800 NVLink, 400 GB/s bidirectional
    }
  }
  EXPECT_EQ(nics, 32);
  EXPECT_EQ(t.route(0, 9).size(), 4u);  // GPU 0 of node 0 to GPU 1 of node 1: over GPU 1's rail
  EXPECT_EQ(t.route(0, 8).size(), 2u);  // same rail: NIC to NIC
  const Topology fat_tree =
      Topology::build(scenario_cluster("{preset: h800-ib, nodes: 4, fabric: fat_tree}"), 32);
  EXPECT_EQ(fat_tree.route(0, 9).size(), 2u);
  // One NVL72 rack is one scale-up domain: 72 GPUs, no NIC on the way.
  const Topology rack = Topology::build(cluster_preset("gb200-nvl72"), 72);
  EXPECT_EQ(rack.links.size(), 72u);
  EXPECT_TRUE(rack.same_node(0, 71));
  const Topology supernode = Topology::build(cluster_preset("cloudmatrix384"), 384);
  EXPECT_EQ(supernode.links.size(), 384u);
  EXPECT_EQ(supernode.route(0, 383).size(), 2u);
}

// The scale-up domains and links the new presets' notes cite.
TEST(ClusterPresets, NewPresetsHaveTheirCitedDomainsAndLinks) {
  struct Expected {
    const char* name;
    const char* device;
    int gpus_per_node;
    double scaleup_bandwidth;
    double nic_bandwidth;
    FabricKind fabric;
  };
  for (const Expected& e :
       {Expected{"h800-ib", "h800-sxm", 8, 200e9, 50e9, FabricKind::kRail},
        Expected{"h100-ib", "h100-sxm", 8, 450e9, 50e9, FabricKind::kRail},
        Expected{"h200-ib", "h200-sxm", 8, 450e9, 50e9, FabricKind::kRail},
        Expected{"gb200-nvl72", "gb200", 72, 900e9, 50e9, FabricKind::kRail},
        Expected{"cloudmatrix384", "ascend-910c", 384, 392e9, 50e9, FabricKind::kFatTree}}) {
    const Cluster c = cluster_preset(e.name);
    SCOPED_TRACE(e.name);
    EXPECT_EQ(c.device.name, e.device);
    EXPECT_EQ(c.gpus_per_node, e.gpus_per_node);
    EXPECT_EQ(c.scaleup, ScaleUpKind::kNvSwitch);
    EXPECT_EQ(c.scaleup_bandwidth, e.scaleup_bandwidth);
    EXPECT_EQ(c.nic_bandwidth, e.nic_bandwidth);
    EXPECT_EQ(c.fabric, e.fabric);
  }
  const Device gb200 = cluster_preset("gb200-nvl72").device;
  EXPECT_EQ(gb200.bf16_flops, 2.5e15);
  EXPECT_EQ(gb200.fp8_flops, 5.0e15);
  EXPECT_EQ(gb200.hbm_bytes, 186e9);
  const Device ascend = cluster_preset("cloudmatrix384").device;
  EXPECT_EQ(ascend.bf16_flops, 752e12);
  EXPECT_EQ(ascend.fp8_flops, 0);  // no FP8: FP8 work runs at the BF16 rate
  EXPECT_EQ(ascend.hbm_bytes, 128e9);
}

// The H20 (the Sem-MoE paper's class of machine) against its sources, as the preset file cites
// them: 148 TFLOPS BF16 and 296 FP8 dense, 96 GB HBM3 at 4.0 TB/s, NVLink 4 (900 GB/s
// bidirectional), 78 SMs; the node is the paper's 8 x 96 GB with > 400 GB/s links.
TEST(ClusterPresets, H20NodeIsThePapersMachineClass) {
  const Cluster node = cluster_preset("h20-1x8");
  EXPECT_EQ(node.nodes, 1);
  EXPECT_EQ(node.gpus_per_node, 8);
  EXPECT_EQ(node.scaleup, ScaleUpKind::kNvSwitch);
  EXPECT_EQ(node.scaleup_bandwidth, 450e9);
  EXPECT_GT(node.scaleup_bandwidth, 400e9);
  const Device& h20 = node.device;
  EXPECT_EQ(h20.name, "h20");
  EXPECT_EQ(h20.bf16_flops, 148e12);
  EXPECT_EQ(h20.fp8_flops, 296e12);
  EXPECT_EQ(h20.hbm_bytes, 96e9);
  EXPECT_EQ(h20.hbm_bandwidth, 4.0e12);
  EXPECT_EQ(h20.compute_units, 78);
  // Far less compute than the H200 it is compared with, more bandwidth per FLOP.
  const Device h200 = cluster_preset("h200-1x8").device;
  EXPECT_LT(h20.bf16_flops / h200.bf16_flops, 0.16);
  EXPECT_GT(h20.hbm_bandwidth / h20.bf16_flops, 4 * h200.hbm_bandwidth / h200.bf16_flops);
}

// A bad node count or fabric is one error at its key, naming the preset and what it allows.
TEST(ClusterPresets, BadNodeCountsAndFabricsAreErrorsAtTheirKeys) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{preset: h800-ib, nodes: 0}", "s.yaml:1:35: cluster.nodes: a cluster has at least 1 node, got 0"},
      {"{preset: h800-ib, nodes: -1}", "s.yaml:1:35: cluster.nodes: a cluster has at least 1 node, got -1"},
      {"{preset: h800-ib, nodes: 2.5}", "s.yaml:1:35: cluster.nodes: expected an integer, got '2.5'"},
      {"{preset: h800-ib, nodes: four}", "s.yaml:1:35: cluster.nodes: expected an integer, got 'four'"},
      {"{preset: h800-ib, nodes: [4]}", "s.yaml:1:35: cluster.nodes: expected an integer, got a list"},
      {"{preset: h800-ib, nodes: 2049}",
       "s.yaml:1:35: cluster.nodes: preset 'h800-ib' (<preset clusters/h800-ib.yaml>) supports 1 to 2048 "
       "nodes "
       "(max_nodes), got 2049"},
      {"{preset: gb200-nvl72, nodes: 29}",
       "s.yaml:1:39: cluster.nodes: preset 'gb200-nvl72' (<preset clusters/gb200-nvl72.yaml>) supports 1 to "
       "28 "
       "nodes (max_nodes), got 29"},
      {"{preset: h200-32x8-rail, nodes: 16}",
       "s.yaml:1:42: cluster.nodes: preset 'h200-32x8-rail' (<preset clusters/h200-32x8-rail.yaml>) has a "
       "fixed "
       "node count of 32 (it gives no max_nodes), got 16"},
      {"{preset: h800-1x8, nodes: 2}",
       "s.yaml:1:36: cluster.nodes: preset 'h800-1x8' (<preset clusters/h800-1x8.yaml>) has no fabric, so it "
       "is one node; 2 nodes need a preset with a fabric (semsim list clusters)"},
      {"{preset: h800-1x8, nodes: 0}", "s.yaml:1:36: cluster.nodes: a cluster has at least 1 node, got 0"},
      {"{preset: h800-ib, fabric: torus}",
       "s.yaml:1:36: cluster.fabric: unknown value 'torus'; valid: none, fat_tree, rail"},
      {"{preset: h800-ib, fabric: none}",
       "s.yaml:1:36: cluster.fabric: preset 'h800-ib' (<preset clusters/h800-ib.yaml>) offers the fabric "
       "rail or "
       "fat_tree, not none"},
      {"{preset: h200-1x8, fabric: rail}",
       "s.yaml:1:37: cluster.fabric: preset 'h200-1x8' (<preset clusters/h200-1x8.yaml>) offers the fabric "
       "none, "
       "not rail"},
      {"{preset: h800-ib, node: 4}", "s.yaml:1:28: cluster.node: unknown key 'node' (did you mean 'nodes'?)"},
      {"{nodes: 4}", "s.yaml:1:10: cluster: missing required key 'preset'"},
      {"{preset: {preset: h800-ib}}", "s.yaml:1:19: cluster.preset: expected a string"},
      {"{preset: h800-ibx, nodes: 4}",
       "s.yaml:1:19: cluster.preset: unknown preset 'h800-ibx' (did you mean 'h800-ib'?)"},
  };
  for (const auto& [value, expected] : cases) {
    const std::string error = cluster_error(value);
    EXPECT_TRUE(error.starts_with(expected)) << value << "\n  got:  " << error << "\n  want: " << expected;
  }
}

}  // namespace
}  // namespace semsim
