#pragma once
// The one content hash of the project: 64-bit FNV-1a, written as 16 hex digits. It names content
// (sweep points, a sweep's expansion, the trace a profile was made from), not a security measure.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace semsim {

class ContentHash {
 public:
  void add(std::string_view bytes);
  // The values' bytes as they lie in memory (little-endian here): for arrays of plain numbers.
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  void add(std::span<const T> values) {
    add(std::string_view(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  }
  std::string hex() const;

 private:
  std::uint64_t hash_ = 14695981039346656037ull;  // FNV-1a 64 offset basis
};

std::string content_hash(std::string_view bytes);  // ContentHash of `bytes` alone

}  // namespace semsim
