#pragma once
// A cluster: nodes of identical devices joined by a scale-up domain, nodes joined by a fabric.
#include <functional>
#include <string>

#include "models/device.hpp"

namespace semsim {

enum class ScaleUpKind { kNvSwitch, kPcie };
// kNone: single node. kFatTree: non-blocking fabric, any NIC reaches any NIC directly.
// kRail: rail-optimized; GPU g of every node sits on rail switch g; cross-rail traffic is first
// forwarded over the scale-up domain to the GPU on the destination rail (NCCL's PXN).
enum class FabricKind { kNone, kFatTree, kRail };

struct Cluster {
  std::string name;
  std::string display_name;
  std::string device_name;
  Device device;
  int nodes = 1;
  int gpus_per_node = 8;
  ScaleUpKind scaleup = ScaleUpKind::kNvSwitch;
  double scaleup_bandwidth = 0;   // per GPU per direction (defaults to the device's)
  double scaleup_latency = 0;     // seconds, per hop
  // PCIe boxes: GPUs hang off `pcie_switches` switches joined through the host bridge.
  int pcie_switches = 1;
  double host_bridge_bandwidth = 0;  // bytes/s per direction between PCIe switches
  FabricKind fabric = FabricKind::kNone;
  double nic_bandwidth = 0;       // per GPU per direction (defaults to the device's)
  double network_latency = 0;     // seconds, per hop

  int devices() const { return nodes * gpus_per_node; }

  // `resolve_device` turns the file's `device` value (a preset name or path) into a Device.
  static Cluster from_yaml(const YamlInput& in, const std::function<Device(const YamlInput&)>& resolve_device);
};

}  // namespace semsim
