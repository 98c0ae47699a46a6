#pragma once
// Presets the tests of several folders price against, made once.
#include "models/presets.hpp"

namespace semsim::test {

// The H200 SXM of the h200-1x8 cluster preset.
inline const Device& h200() {
  static const Device device = cluster_preset("h200-1x8").device;
  return device;
}

// The B200 of the b200-1x8 cluster preset (FP4 tensor cores).
inline const Device& b200() {
  static const Device device = cluster_preset("b200-1x8").device;
  return device;
}

}  // namespace semsim::test
