#pragma once
// The memo of a pure function of a point (x, y): the cost model asks its tables the same few
// points again and again, millions of times a run, so a hit must cost a probe of one flat table
// rather than a tree walk or a chain of nodes (std::map and std::unordered_map, whose
// std::hash<double> hashes bytes, were a tenth of a run). Points are keyed by their bits, -0 as 0.
#include <bit>
#include <cstdint>
#include <vector>

namespace semsim {

class PointMemo {
 public:
  // The value at (x, y): remembered, or `compute()` remembered. A throw from `compute` remembers
  // nothing.
  template <typename Compute>
  double get(double x, double y, Compute&& compute) {
    const std::uint64_t kx = std::bit_cast<std::uint64_t>(x + 0.0),
                        ky = std::bit_cast<std::uint64_t>(y + 0.0);
    if (!slots_.empty())
      for (std::size_t at = slot_of(kx, ky);; at = (at + 1) & (slots_.size() - 1)) {
        const Slot& slot = slots_[at];
        if (!slot.filled) break;
        if (slot.x == kx && slot.y == ky) return slot.value;
      }
    const double value = compute();
    if (2 * (size_ + 1) > slots_.size()) grow();  // at most half full: probes stay short
    insert({kx, ky, value, true});
    return value;
  }

 private:
  struct Slot {
    std::uint64_t x = 0, y = 0;
    double value = 0;
    bool filled = false;
  };

  std::size_t slot_of(std::uint64_t kx, std::uint64_t ky) const {
    std::uint64_t h = kx * 0x9E3779B97F4A7C15ULL ^ (ky + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    return static_cast<std::size_t>(h) & (slots_.size() - 1);
  }
  void insert(const Slot& slot) {
    std::size_t at = slot_of(slot.x, slot.y);
    while (slots_[at].filled) at = (at + 1) & (slots_.size() - 1);
    slots_[at] = slot;
    ++size_;
  }
  void grow() {
    std::vector<Slot> old(slots_.empty() ? 16 : 2 * slots_.size());
    old.swap(slots_);
    size_ = 0;
    for (const Slot& slot : old)
      if (slot.filled) insert(slot);
  }

  std::vector<Slot> slots_;  // a power of two of them
  std::size_t size_ = 0;
};

}  // namespace semsim
