#pragma once
// The memo of a pure function of a point (x, y): the cost model asks its tables the same points
// again and again, millions of times a run, so a hit must cost one probe of a small flat table
// rather than a tree walk or a chain of nodes. Some operators are asked at points that never
// repeat (decode attention at a batch's mean context): an unbounded memo grew by every one of them,
// and its look-ups missed the cache (std::map and std::unordered_map, whose std::hash<double>
// hashes bytes, were a fifth of a run). So the memo is a fixed cache of sets of four slots (two
// cache lines), each set's least recently used point evicted for a new one. Direct-mapped (one
// slot a set), the reference run's decode attention, 1,870 points asked 238,790 times, each again
// after a thousand others, recomputed 19,865 times: a third of its points shared a slot with
// another; four ways recompute about 2,300. Points are keyed by their bits, -0 as 0.
#include <algorithm>
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
    Set* set = sets_.empty() ? nullptr : &sets_[set_of(kx, ky)];
    if (set)
      for (int way = 0; way < kWays; ++way) {
        const Slot& slot = set->ways[way];
        if (!slot.filled) break;  // the ways fill in order
        if (slot.x != kx || slot.y != ky) continue;
        const Slot hit = slot;  // to the front: the set's ways by last use
        std::copy_backward(set->ways, set->ways + way, set->ways + way + 1);
        set->ways[0] = hit;
        return hit.value;
      }
    const double value = compute();
    if (!set) {
      sets_.resize(kSets);  // allocated on first use: most tables are never asked
      set = &sets_[set_of(kx, ky)];
    }
    std::copy_backward(set->ways, set->ways + kWays - 1,
                       set->ways + kWays);  // the last used longest ago goes
    set->ways[0] = {kx, ky, value, true};
    return value;
  }

 private:
  static constexpr int kWays = 4;
  static constexpr std::size_t kSets = std::size_t{1} << 10;  // 128 KiB a memo in use
  struct Slot {
    std::uint64_t x = 0, y = 0;
    double value = 0;
    bool filled = false;
  };
  struct alignas(64) Set {
    Slot ways[kWays];  // most recently used first
  };

  // MurmurHash3's finaliser over both keys: the low bits of a double of a small integer are all
  // zero, so every bit must reach the low ones the table is indexed by.
  static std::size_t set_of(std::uint64_t kx, std::uint64_t ky) {
    std::uint64_t h = kx ^ std::rotl(ky, 32) ^ ky >> 7;
    h = (h ^ h >> 33) * 0xFF51AFD7ED558CCDULL;
    h = (h ^ h >> 33) * 0xC4CEB9FE1A85EC53ULL;
    return static_cast<std::size_t>(h ^ h >> 33) & (kSets - 1);
  }

  std::vector<Set> sets_;
};

}  // namespace semsim
