#pragma once
// Sem-MoE's per-token device prediction (design.md, online intra-request scheduling): at MoE layer
// L a token goes to T⁽ᴸ⁾[token] when its confidence T_p beats the inter-layer table's A_p for the
// token's devices at the previous layers, else to A. Table look-ups only: O(1) per token.
#include <cstdint>
#include <span>

#include "policies/placement_plan.hpp"

namespace semsim {

enum class DeviceBasis { kTokenTable, kInterLayer, kNone };

struct TokenDevicePrediction {
  int device = -1;        // -1 with kNone: neither table knows the token or its path
  double confidence = 0;  // T_p or A_p of the table used
  DeviceBasis basis = DeviceBasis::kNone;
};

// `previous_devices[0]` is the token's majority device at layer-1 (observable once that layer's
// gate has run), [1] at layer-2, ...
inline TokenDevicePrediction predict_token_device(const PlacementPlan& plan, int layer, std::int32_t token,
                                                  std::span<const int> previous_devices) {
  const TokenDeviceTable& table = plan.token_devices;
  int t_device = -1;
  double t_confidence = 0;
  if (!table.empty() && token >= 0 && static_cast<std::size_t>(token) < table.device[layer].size()) {
    t_device = table.device[layer][token];
    t_confidence = table.confidence[layer][token];
  }
  const DevicePrediction a = plan.inter_layer.predict(layer, previous_devices);
  if (t_device >= 0 && (a.device < 0 || t_confidence > a.confidence))
    return {t_device, t_confidence, DeviceBasis::kTokenTable};
  if (a.device >= 0) return {a.device, a.confidence, DeviceBasis::kInterLayer};
  return {};
}

}  // namespace semsim
