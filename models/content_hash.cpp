#include "models/content_hash.hpp"

#include <fmt/format.h>

namespace semsim {

void ContentHash::add(std::string_view bytes) {
  for (const char c : bytes) {
    hash_ ^= static_cast<unsigned char>(c);
    hash_ *= 1099511628211ull;  // FNV-1a 64 prime
  }
}

std::string ContentHash::hex() const {
  return fmt::format("{:016x}", hash_);
}

std::string content_hash(std::string_view bytes) {
  ContentHash hash;
  hash.add(bytes);
  return hash.hex();
}

}  // namespace semsim
