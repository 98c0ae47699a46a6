#pragma once
// Walker's alias method: O(1) draws from a fixed discrete distribution.
#include <cstdint>
#include <vector>

namespace semsim {

class AliasTable {
 public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& weights);
  // `bits` is a uniform 64-bit value; returns an index with probability weight / sum: column
  // (bits >> 32) mod size, kept with the probability of the low 32 bits as a fraction, else its alias.
  int draw(std::uint64_t bits) const {
    const int column = static_cast<int>(column_of(bits >> 32));
    const double coin = static_cast<double>(bits & 0xFFFFFFFFULL) * 0x1.0p-32;
    return coin < probability_[column] ? column : alias_[column];
  }
  int size() const { return static_cast<int>(probability_.size()); }

 private:
  // x mod size for 32-bit x by a multiplication instead of a division (Lemire, Kaser and Kurz,
  // "Faster remainder by direct computation", 2019: exact for every 32-bit x and divisor).
  // Synthetic routing draws millions of times a run; a 64-bit division is most of a draw.
  std::uint64_t column_of(std::uint64_t x) const {
    __extension__ using Wide = unsigned __int128;
    return static_cast<std::uint64_t>(static_cast<Wide>(remainder_factor_ * x) * probability_.size() >> 64);
  }

  std::vector<double> probability_;
  std::vector<int> alias_;
  std::uint64_t remainder_factor_ = 0;  // 2^64 / size, rounded up (0 for size 1: every x mod 1 is 0)
};

}  // namespace semsim
