#pragma once
// Sem-MoE's token→device table T with confidence T_p (design.md, "Sem-MoE, precisely"): per MoE
// layer and vocabulary token, the device the token's hidden state should be on when the layer
// starts, and how sure the profile is (the share of the token's profiled activations that device
// hosts).
#include <cstdint>
#include <vector>

namespace semsim {

struct TokenDeviceTable {
  std::vector<std::vector<std::int16_t>> device;  // [layer][token]; -1: no entry (token unprofiled)
  std::vector<std::vector<float>> confidence;     // [layer][token] in [0, 1]; 0 without an entry

  bool empty() const { return device.empty(); }
  friend bool operator==(const TokenDeviceTable&, const TokenDeviceTable&) = default;
};

}  // namespace semsim
