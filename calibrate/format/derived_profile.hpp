#pragma once
// A measured profile for a device of the same silicon as a measured one but other links (the H800
// is an H100 SXM, same GH100 compute and HBM, with NVLink at 400 instead of 900 GB/s): its kernels
// take what the measured device's take; what moves over NVLink is rescaled to its links.
#include "calibrate/format/profile.hpp"
#include "models/device.hpp"

namespace semsim {

// `source` (measured on `source_device`) for `target`:
// - every kernel table but DeepEP's, unchanged (same SMs, tensor cores, clocks and HBM);
// - DeepEP's tables dropped: their kernels are NVLink-bound on the slower link, so the engine prices
//   them as any device without DeepEP tables (sim/ep_kernels.hpp: the measured H100/H200 link
//   model at the device's SM share, NVLink capped at the device's calibrated link);
// - NCCL's fits: each level's bus bandwidth scaled by the target's link over the source's (NVLink
//   for scaleup, the NIC for scaleout), alpha and the bandwidth-factor curve kept (the protocol and
//   its small-message costs do not change with the link rate), efficiency kept (it is a fraction);
// - efficiencies, overheads and engine costs kept; residuals kept but DeepEP's.
// The name, device and notes say where it came from.
CalibrationProfile derive_profile(const CalibrationProfile& source, const Device& source_device,
                                  const Device& target);

}  // namespace semsim
