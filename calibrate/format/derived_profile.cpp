#include "calibrate/format/derived_profile.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace semsim {

CalibrationProfile derive_profile(const CalibrationProfile& source, const Device& source_device,
                                  const Device& target) {
  CalibrationProfile derived = source;
  derived.name = target.name + "-measured";
  derived.device = target.name;
  const auto deepep = [](const std::string& name) { return name.starts_with("deepep_"); };
  std::erase_if(derived.kernels, [&](const KernelTable& table) { return deepep(table.kernel); });
  std::erase_if(derived.residuals, [&](const FamilyResiduals& r) { return deepep(r.family); });
  for (const auto& [family, weight] : source.cross_shape_weights)
    if (deepep(family)) derived.cross_shape_weights.erase(family);
  const double scaleup = target.scaleup_bandwidth / source_device.scaleup_bandwidth;
  const double scaleout = target.nic_bandwidth / source_device.nic_bandwidth;
  for (CollectiveFit& fit : derived.collectives)
    fit.bus_bandwidth *= fit.level == "scaleup" ? scaleup : scaleout;
  derived.notes = fmt::format(
      "Derived from {} (measured on the {}): the same silicon with other links. Kernel tables are the "
      "{}'s; NCCL's bus bandwidths are scaled by the links (NVLink x{:.4g}, NIC x{:.4g}), their alpha and "
      "bandwidth-factor curves kept; DeepEP's tables are left out (NVLink-bound: priced by the measured "
      "H100/H200 link model at the device's SM share, capped by its link). {}",
      source.name, source_device.display_name, source_device.display_name, scaleup, scaleout, source.notes);
  return derived;
}

}  // namespace semsim
