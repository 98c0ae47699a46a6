#pragma once
// Walker's alias method: O(1) draws from a fixed discrete distribution.
#include <cstdint>
#include <vector>

namespace semsim {

class AliasTable {
 public:
  AliasTable() = default;
  explicit AliasTable(const std::vector<double>& weights);
  // `bits` is a uniform 64-bit value; returns an index with probability weight / sum.
  int draw(std::uint64_t bits) const;
  int size() const { return static_cast<int>(probability_.size()); }

 private:
  std::vector<double> probability_;
  std::vector<int> alias_;
};

}  // namespace semsim
