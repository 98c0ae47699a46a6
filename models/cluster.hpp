#pragma once
// A cluster: nodes of identical devices joined by a scale-up domain, nodes joined by a fabric.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/device.hpp"

namespace semsim {

enum class ScaleUpKind { kNvSwitch, kPcie };
// kNone: single node. kFatTree: non-blocking fabric, any NIC reaches any NIC directly.
// kRail: rail-optimized; GPU g of every node sits on rail switch g; cross-rail traffic is first
// forwarded over the scale-up domain to the GPU on the destination rail (NCCL's PXN).
enum class FabricKind { kNone, kFatTree, kRail };

// "none", "fat_tree", "rail": the names preset files and scenarios use.
const char* fabric_name(FabricKind kind);

struct Cluster {
  std::string name;
  std::string display_name;
  std::string device_name;
  Device device;
  int nodes = 1;
  int gpus_per_node = 8;
  ScaleUpKind scaleup = ScaleUpKind::kNvSwitch;
  double scaleup_bandwidth = 0;  // per GPU per direction (defaults to the device's)
  double scaleup_latency = 0;    // seconds, per hop
  // PCIe boxes: GPUs hang off `pcie_switches` switches joined through the host bridge.
  int pcie_switches = 1;
  double host_bridge_bandwidth = 0;  // bytes/s per direction between PCIe switches
  FabricKind fabric = FabricKind::kNone;
  double nic_bandwidth = 0;    // per GPU per direction (defaults to the device's)
  double network_latency = 0;  // seconds, per hop

  // What a scenario may choose (`cluster: {preset: NAME, nodes: N, fabric: KIND}`): a node count in
  // [1, max_nodes], or exactly `nodes` for a preset without max_nodes; a fabric among fabric_choices.
  int default_nodes = 1;  // the preset's `nodes`
  int max_nodes = 1;
  bool fixed_nodes = true;  // the preset gives no max_nodes
  FabricKind default_fabric = FabricKind::kNone;
  std::vector<FabricKind> fabric_choices;  // the preset's fabric.kind first
  std::string preset;                      // the preset's own name
  std::string preset_file;                 // where it was read from, for errors about the choice

  int devices() const { return nodes * gpus_per_node; }

  // `resolve_device` turns the file's `device` value (a preset name or path) into a Device.
  static Cluster from_yaml(const YamlInput& in,
                           const std::function<Device(const YamlInput&)>& resolve_device);

  // This preset at the node count and fabric a scenario chose: `nodes` and `fabric` are the
  // scenario's keys (absent: the preset's own), and errors are raised at them. The name is the
  // preset's, with the node count and fabric appended where they differ from the preset's.
  Cluster sized(const std::optional<YamlInput>& nodes, const std::optional<YamlInput>& fabric) const;
};

}  // namespace semsim
