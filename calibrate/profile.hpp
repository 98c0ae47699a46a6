#pragma once
// A calibration profile: how close to its datasheet a device gets on each kind of work. The
// roofline cost model and the network read these numbers; `source: datasheet` profiles carry
// documented assumptions so the simulator runs before any measurement, `source: measured` ones
// come from the microbenchmarks (calibration issue) and later carry full tables.
#include <string>

#include "models/device.hpp"
#include "models/yaml_input.hpp"

namespace semsim {

struct CalibrationProfile {
  std::string name = "datasheet";
  std::string source = "datasheet";  // datasheet | measured
  std::string device;
  double gemm_efficiency = 0.70;       // fraction of dense peak FLOP/s reached by GEMM-like kernels
  double attention_efficiency = 0.45;  // fraction of BF16 peak reached by attention kernels
  double memory_efficiency = 0.80;     // fraction of HBM bandwidth reached by memory-bound kernels
  double scaleup_efficiency = 0.80;    // fraction of scale-up link bandwidth reached by NCCL all-to-all
  double scaleout_efficiency = 0.85;   // fraction of NIC bandwidth reached over the fabric
  double kernel_overhead = 4e-6;       // seconds per kernel launch (fixed cost of small kernels)
  double collective_overhead = 10e-6;  // seconds of software setup per collective

  // The defaults above, for `device` (documented in calibrate/README.md).
  static CalibrationProfile datasheet(const Device& device);
  // A profile file; its `device` must match the cluster's device.
  static CalibrationProfile from_yaml(const YamlInput& in, const Device& device);
};

}  // namespace semsim
