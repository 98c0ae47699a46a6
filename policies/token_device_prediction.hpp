#pragma once
// Sem-MoE's per-token device prediction (design.md, online intra-request scheduling): at MoE layer
// L a token goes to T⁽ᴸ⁾[token] when its confidence T_p beats the inter-layer table's A_p for the
// token's devices at the previous layers, else to A. Table look-ups only: O(1) per token.
#include <cstddef>
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

// One MoE layer's tables resolved once, so that predicting a token (per token, per layer in the
// Attention-TP reshuffle) is two table reads and selects, without branches on the tables' values.
class LayerDevicePredictor {
 public:
  // `history`: how many previous devices each prediction is given.
  LayerDevicePredictor(const PlacementPlan& plan, int layer, std::size_t history)
      : key_length_(plan.inter_layer.key_length(layer, history)), inter_layer_(plan.inter_layer) {
    if (!plan.token_devices.empty()) {
      token_device_ = plan.token_devices.device[layer].data();
      token_confidence_ = plan.token_devices.confidence[layer].data();
      vocabulary_ = plan.token_devices.device[layer].size();
    }
    if (key_length_ > 0) next_ = plan.inter_layer.next[layer].data();
  }

  // Token ids are random accesses into vocabulary-sized tables: callers fetch a few tokens ahead.
  void prefetch(std::int32_t token) const {
    const std::size_t index = vocabulary_index(token);
    if (index < vocabulary_) {
      __builtin_prefetch(token_device_ + index);
      __builtin_prefetch(token_confidence_ + index);
    }
  }

  // `previous[0]` is the token's majority device at layer-1 (observable once that layer's gate has
  // run), [1] at layer-2, ...
  TokenDevicePrediction predict(std::int32_t token, std::span<const int> previous) const {
    const std::size_t index = vocabulary_index(token);
    int t_device = -1;
    float t_confidence = 0;
    if (index < vocabulary_) t_device = token_device_[index], t_confidence = token_confidence_[index];
    InterLayerTable::Entry a;
    if (key_length_ > 0) a = next_[inter_layer_.key_index(previous.first(key_length_))];
    // T when it knows the token and beats A (or A knows nothing), else A; as selects, not branches:
    // which side wins is data-dependent and unpredictable.
    const bool a_known = a.device >= 0;
    const bool use_t = (t_device >= 0) & (!a_known | (t_confidence > a.confidence));
    return {use_t ? t_device : a.device, use_t ? t_confidence : (a_known ? a.confidence : 0.0F),
            use_t ? DeviceBasis::kTokenTable : (a_known ? DeviceBasis::kInterLayer : DeviceBasis::kNone)};
  }

 private:
  // Negative ids (identity unknown) map past any vocabulary.
  static std::size_t vocabulary_index(std::int32_t token) {
    return static_cast<std::size_t>(static_cast<std::uint32_t>(token));
  }

  const std::int16_t* token_device_ = nullptr;
  const float* token_confidence_ = nullptr;
  std::size_t vocabulary_ = 0;
  std::size_t key_length_;
  const InterLayerTable& inter_layer_;
  const InterLayerTable::Entry* next_ = nullptr;
};

// One token's prediction; see LayerDevicePredictor::predict.
inline TokenDevicePrediction predict_token_device(const PlacementPlan& plan, int layer, std::int32_t token,
                                                  std::span<const int> previous_devices) {
  return LayerDevicePredictor(plan, layer, previous_devices.size()).predict(token, previous_devices);
}

}  // namespace semsim
