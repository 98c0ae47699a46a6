#pragma once
// The dispatch accounting's counting in lanes, shared by account_dispatch and SetDispatch (not a
// public interface): groups of up to 16 devices count a token's experts per device in one word of
// 8-bit lanes (lane d: its experts served on device d), and each source's copies per destination in
// a word of such lanes, added per token without a per-device loop. A lane then holds at most 255:
// the words are flushed into the copy counts before any could overflow.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "policies/dispatch.hpp"

namespace semsim {

template <typename Lanes>
struct LaneWords {
  static constexpr int kDevices = static_cast<int>(sizeof(Lanes));
  static constexpr Lanes repeat(std::uint8_t byte) {
    Lanes word = 0;
    for (int d = 0; d < kDevices; ++d) word = word << 8 | byte;
    return word;
  }
  static constexpr Lanes kLow7 = repeat(0x7F);
  static constexpr Lanes kOnes = repeat(0x01);
  // 1 in each nonzero lane, 0 elsewhere.
  static Lanes nonzero(Lanes lanes) { return (((lanes & kLow7) + kLow7) | lanes) >> 7 & kOnes; }
  static int lane(Lanes lanes, int d) { return static_cast<int>(lanes >> (8 * d) & 0xFF); }
  static Lanes one(int d) { return Lanes{1} << (8 * d); }
  static Lanes every_device(int devices) {
    Lanes word = 0;
    for (int d = 0; d < devices; ++d) word |= one(d);
    return word;
  }
};
__extension__ using Lanes16 = unsigned __int128;
constexpr int kLaneTopK = 255;

// The copies a mode moves: DeepEP's low-latency kernels move kPerExpert's.
inline DispatchMode counted_mode(DispatchMode mode) {
  return mode == DispatchMode::kLowLatency ? DispatchMode::kPerExpert : mode;
}

// Whether copies of `mode` (counted_mode) are counted in lanes: kHierarchical's forwarding is not.
inline bool counts_in_lanes(DispatchMode mode) {
  return mode == DispatchMode::kDedup || mode == DispatchMode::kPerExpert || mode == DispatchMode::kAllGather;
}

// The copies one token from `src` adds, one lane per destination, given its experts per device
// (`lanes`): kDedup one to each other device serving any, kPerExpert one per expert there,
// kAllGather one to every other device.
template <typename Lanes>
Lanes token_copies(DispatchMode mode, Lanes lanes, int src, Lanes every_device) {
  const Lanes others = ~(Lanes{0xFF} << (8 * src));
  switch (mode) {
    case DispatchMode::kDedup:
      return LaneWords<Lanes>::nonzero(lanes) & others;
    case DispatchMode::kPerExpert:
      return lanes & others;
    case DispatchMode::kAllGather:
      return every_device & others;
    default:
      throw std::logic_error("account_dispatch: no lane counting for this dispatch mode");
  }
}

// Each source's copy counts since the last flush, one lane per destination; a token adds at most
// `per_token` to a lane.
template <typename Lanes>
class CopyLanes {
 public:
  CopyLanes(int devices, int per_token)
      : devices_(devices), tokens_per_flush_(255 / std::max(1, per_token)) {}
  void add(int src, Lanes lanes, long long* copies) {
    words_[src] += lanes;
    if (++tokens_ == tokens_per_flush_) flush(copies);
  }
  void flush(long long* copies) {
    for (int src = 0; src < devices_; ++src) {
      for (int dst = 0; dst < devices_; ++dst)
        copies[static_cast<std::size_t>(src) * devices_ + dst] += LaneWords<Lanes>::lane(words_[src], dst);
      words_[src] = 0;
    }
    tokens_ = 0;
  }

 private:
  int devices_, tokens_per_flush_, tokens_ = 0;
  Lanes words_[LaneWords<Lanes>::kDevices] = {};
};

// out.device_tokens from out.expert_tokens: each device's activations over its slots at `layer`.
void count_device_loads(const Placement& placement, int layer, LayerDispatch& out);

}  // namespace semsim
