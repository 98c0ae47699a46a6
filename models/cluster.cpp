#include "models/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace semsim {
namespace {

constexpr FabricKind kFabricKinds[] = {FabricKind::kNone, FabricKind::kFatTree, FabricKind::kRail};

FabricKind fabric_kind(const std::string& name) {
  for (const FabricKind kind : kFabricKinds)
    if (name == fabric_name(kind)) return kind;
  throw std::logic_error("unknown fabric kind '" + name + "'");  // callers pass an as_choice() result
}

// "rail or fat_tree"
std::string list_of(const std::vector<FabricKind>& kinds) {
  std::string out;
  for (std::size_t i = 0; i < kinds.size(); ++i)
    out += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + std::string(fabric_name(kinds[i]));
  return out;
}

}  // namespace

const char* fabric_name(FabricKind kind) {
  switch (kind) {
    case FabricKind::kFatTree:
      return "fat_tree";
    case FabricKind::kRail:
      return "rail";
    default:
      return "none";
  }
}

Cluster Cluster::from_yaml(const YamlInput& in,
                           const std::function<Device(const YamlInput&)>& resolve_device) {
  in.expect_map({"kind", "name", "display_name", "device", "nodes", "max_nodes", "gpus_per_node", "scaleup",
                 "fabric", "notes"});
  if (in.required("kind").as_string() != "cluster") in.required("kind").fail("expected 'cluster'");
  Cluster c;
  c.name = in.required("name").as_string();
  c.display_name = in.get_string("display_name", c.name);
  c.device = resolve_device(in.required("device"));
  c.device_name = c.device.name;
  c.nodes = static_cast<int>(in.required("nodes").as_int_in(1, limits::kClusterNodes));
  c.gpus_per_node = static_cast<int>(in.required("gpus_per_node").as_int_in(1, limits::kDevicesPerNode));

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
    fabric->expect_map({"kind", "choices", "nic_bandwidth", "latency"});
    c.fabric = fabric_kind(fabric->required("kind").as_choice({"none", "fat_tree", "rail"}));
    c.nic_bandwidth = fabric->get_double_in("nic_bandwidth", c.device.nic_bandwidth, limits::kBytesPerSecond);
    c.network_latency =
        c.fabric == FabricKind::kNone ? 0.0 : fabric->required("latency").as_double_in(0, 1e-2);
  }
  // The fabrics a scenario may pick: the default first, then the others the preset offers.
  c.fabric_choices = {c.fabric};
  if (const auto choices = fabric ? fabric->optional("choices") : std::nullopt) {
    if (c.fabric == FabricKind::kNone) choices->fail("a preset without a fabric has no fabric to choose");
    if (!choices->is_sequence()) choices->fail("expected a list of fabric kinds (fat_tree, rail)");
    bool has_default = false;
    for (const YamlInput& item : choices->items()) {
      const FabricKind kind = fabric_kind(item.as_choice({"fat_tree", "rail"}));
      has_default = has_default || kind == c.fabric;
      if (kind != c.fabric &&
          std::find(c.fabric_choices.begin(), c.fabric_choices.end(), kind) != c.fabric_choices.end())
        item.fail(fmt::format("'{}' is listed twice", fabric_name(kind)));
      if (kind != c.fabric) c.fabric_choices.push_back(kind);
    }
    if (!has_default)
      choices->fail(fmt::format("must include the default fabric kind '{}'", fabric_name(c.fabric)));
  }
  if (c.nodes > 1 && c.fabric == FabricKind::kNone)
    in.fail("a cluster of " + std::to_string(c.nodes) + " nodes needs a fabric (fat_tree or rail)");
  c.max_nodes = c.nodes;
  if (const auto max_nodes = in.optional("max_nodes")) {
    c.max_nodes = static_cast<int>(max_nodes->as_int_in(c.nodes, limits::kClusterNodes));
    if (c.max_nodes > 1 && c.fabric == FabricKind::kNone)
      max_nodes->fail("a preset without a fabric (fat_tree or rail) is one node only");
    c.fixed_nodes = false;
  }
  c.default_nodes = c.nodes;
  c.default_fabric = c.fabric;
  c.preset = c.name;
  c.preset_file = in.file();
  return c;
}

Cluster Cluster::sized(const std::optional<YamlInput>& nodes, const std::optional<YamlInput>& fabric) const {
  Cluster c = *this;
  const std::string which = fmt::format("preset '{}' ({})", preset, preset_file);
  if (fabric) {
    const FabricKind kind = fabric_kind(fabric->as_choice({"none", "fat_tree", "rail"}));
    if (std::find(fabric_choices.begin(), fabric_choices.end(), kind) == fabric_choices.end())
      fabric->fail(
          fmt::format("{} offers the fabric {}, not {}", which, list_of(fabric_choices), fabric_name(kind)));
    c.fabric = kind;
  }
  if (nodes) {
    const long long n = nodes->as_int();
    if (n < 1) nodes->fail(fmt::format("a cluster has at least 1 node, got {}", n));
    if (c.fabric == FabricKind::kNone && n > 1)
      nodes->fail(
          fmt::format("{} has no fabric, so it is one node; {} nodes need a preset with a fabric "
                      "(semsim list clusters)",
                      which, n));
    if (fixed_nodes && n != default_nodes)
      nodes->fail(fmt::format("{} has a fixed node count of {} (it gives no max_nodes), got {}", which,
                              default_nodes, n));
    if (n > max_nodes)
      nodes->fail(fmt::format("{} supports 1 to {} nodes (max_nodes), got {}", which, max_nodes, n));
    c.nodes = static_cast<int>(n);
  }
  // Summaries and comparisons name the cluster: another size or fabric is another name.
  if (c.nodes != default_nodes || c.fabric != default_fabric) {
    c.name = fmt::format("{}-{}x{}", preset, c.nodes, c.gpus_per_node);
    if (c.fabric != default_fabric) c.name += std::string("-") + fabric_name(c.fabric);
  }
  return c;
}

}  // namespace semsim
