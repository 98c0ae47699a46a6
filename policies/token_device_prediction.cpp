#include "policies/token_device_prediction.hpp"

namespace semsim {

TokenDevicePrediction predict_token_device(const PlacementPlan& plan, int layer, std::int32_t token,
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
