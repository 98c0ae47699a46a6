#pragma once
// The memo of a pure function of a point (x, y): the cost model asks its tables the same points
// again and again, millions of times a run, so a hit must cost one probe of a small flat table
// rather than a tree walk or a chain of nodes. Some operators are asked at points that never
// repeat (decode attention at a batch's mean context): an unbounded memo grew by every one of them,
// and its look-ups missed the cache (std::map and std::unordered_map, whose std::hash<double>
// hashes bytes, were a fifth of a run). So the memo is a fixed direct-mapped cache: a point
// evicts the one in its slot. Points are keyed by their bits, -0 as 0.
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
    const std::size_t at = slot_of(kx, ky);
    if (!slots_.empty() && slots_[at].filled && slots_[at].x == kx && slots_[at].y == ky)
      return slots_[at].value;
    const double value = compute();
    if (slots_.empty()) slots_.resize(kSlots);  // allocated on first use: most tables are never asked
    slots_[at] = {kx, ky, value, true};
    return value;
  }

 private:
  static constexpr std::size_t kSlots = std::size_t{1} << 12;  // 128 KiB a memo in use
  struct Slot {
    std::uint64_t x = 0, y = 0;
    double value = 0;
    bool filled = false;
  };

  // MurmurHash3's finaliser over both keys: the low bits of a double of a small integer are all
  // zero, so every bit must reach the low ones the table is indexed by.
  static std::size_t slot_of(std::uint64_t kx, std::uint64_t ky) {
    std::uint64_t h = kx ^ std::rotl(ky, 32) ^ ky >> 7;
    h = (h ^ h >> 33) * 0xFF51AFD7ED558CCDULL;
    h = (h ^ h >> 33) * 0xC4CEB9FE1A85EC53ULL;
    return static_cast<std::size_t>(h ^ h >> 33) & (kSlots - 1);
  }

  std::vector<Slot> slots_;
};

}  // namespace semsim
