#pragma once
// An accelerator with its datasheet figures (dense, no sparsity). Sources are cited in each preset.
#include <string>

#include "models/yaml_input.hpp"

namespace semsim {

struct Device {
  std::string name;
  std::string display_name;
  std::string source;
  double bf16_flops = 0;         // dense BF16 FLOP/s
  double fp8_flops = 0;          // dense FP8 FLOP/s; 0 when the device has no FP8 tensor cores
  double fp4_flops = 0;          // dense FP4 (NVFP4/MXFP4) FLOP/s; 0 when the device has no FP4 tensor cores
  double hbm_bytes = 0;          // device memory, bytes
  double hbm_bandwidth = 0;      // bytes/s
  double scaleup_bandwidth = 0;  // scale-up (NVLink/HCCS/PCIe) bytes/s per direction
  double nic_bandwidth = 0;      // bytes/s per direction of the NIC paired with one device
  // Compute units (NVIDIA SMs, Ascend AI cores) and those a communication kernel holds while it
  // runs beside compute (DeepEP's default: 24 SMs); 0 when the preset does not say.
  int compute_units = 0;
  int communication_units = 0;
  // Device memory as the driver reports it (nvidia-smi's memory.total, torch's total_memory), MiB: what
  // a serving engine sizes its memory pools against (80 GB H100s report 81,559 MiB, 85.5e9 bytes).
  // 0: the preset does not say (driver_memory_mib() is then hbm_bytes).
  double reported_memory_mib = 0;

  static constexpr double kMib = 1 << 20;
  double driver_memory_mib() const {
    return reported_memory_mib > 0 ? reported_memory_mib : hbm_bytes / kMib;
  }

  static Device from_yaml(const YamlInput& in);
};

}  // namespace semsim
