#include "models/cluster.hpp"

namespace semsim {

Cluster Cluster::from_yaml(const YamlInput& in,
                           const std::function<Device(const YamlInput&)>& resolve_device) {
  in.expect_map(
      {"kind", "name", "display_name", "device", "nodes", "gpus_per_node", "scaleup", "fabric", "notes"});
  if (in.required("kind").as_string() != "cluster") in.required("kind").fail("expected 'cluster'");
  Cluster c;
  c.name = in.required("name").as_string();
  c.display_name = in.get_string("display_name", c.name);
  c.device = resolve_device(in.required("device"));
  c.device_name = c.device.name;
  c.nodes = static_cast<int>(in.required("nodes").as_int_in(1, 4096));
  c.gpus_per_node = static_cast<int>(in.required("gpus_per_node").as_int_in(1, 72));

  const YamlInput scaleup = in.required("scaleup");
  scaleup.expect_map({"kind", "bandwidth", "latency", "pcie_switches", "host_bridge_bandwidth"});
  c.scaleup = scaleup.required("kind").as_choice({"nvswitch", "pcie"}) == "pcie" ? ScaleUpKind::kPcie
                                                                                 : ScaleUpKind::kNvSwitch;
  c.scaleup_bandwidth =
      scaleup.get_double_in("bandwidth", c.device.scaleup_bandwidth, limits::kBytesPerSecond);
  c.scaleup_latency = scaleup.required("latency").as_double_in(0, 1e-3);
  if (c.scaleup == ScaleUpKind::kPcie) {
    c.pcie_switches = static_cast<int>(scaleup.get_int_in("pcie_switches", 1, 1, c.gpus_per_node));
    if (c.gpus_per_node % c.pcie_switches != 0)
      scaleup.required("pcie_switches").fail("must divide gpus_per_node");
    c.host_bridge_bandwidth =
        c.pcie_switches > 1 ? scaleup.required("host_bridge_bandwidth").as_double_in(limits::kBytesPerSecond)
                            : 0.0;
  } else {
    for (const char* key : {"pcie_switches", "host_bridge_bandwidth"})
      if (scaleup.has(key)) scaleup.required(key).fail("only PCIe scale-up domains take this key");
  }

  const auto fabric = in.optional("fabric");
  if (fabric) {
    fabric->expect_map({"kind", "nic_bandwidth", "latency"});
    const std::string kind = fabric->required("kind").as_choice({"none", "fat_tree", "rail"});
    c.fabric = kind == "rail"       ? FabricKind::kRail
               : kind == "fat_tree" ? FabricKind::kFatTree
                                    : FabricKind::kNone;
    c.nic_bandwidth = fabric->get_double_in("nic_bandwidth", c.device.nic_bandwidth, limits::kBytesPerSecond);
    c.network_latency =
        c.fabric == FabricKind::kNone ? 0.0 : fabric->required("latency").as_double_in(0, 1e-2);
  }
  if (c.nodes > 1 && c.fabric == FabricKind::kNone)
    in.fail("a cluster of " + std::to_string(c.nodes) + " nodes needs a fabric (fat_tree or rail)");
  return c;
}

}  // namespace semsim
