#pragma once
// Counter-based randomness: a value is a pure function of (seed, keys), so a token's routing does
// not depend on which step or batch it happens to be simulated in, and policies are compared on
// exactly the same routing.
#include <cstdint>

namespace semsim {

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash_keys(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0,
                               std::uint64_t c = 0) {
  return splitmix64(splitmix64(splitmix64(seed ^ splitmix64(a)) ^ b) ^ c);
}

// One mixing round for two keys: cheaper than hash_keys, for the per-token, per-layer hot path.
inline std::uint64_t mix_keys(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return splitmix64(seed ^ (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL));
}

// The splitmix64 sequence as a UniformRandomBitGenerator: for inner loops where mt19937_64 costs
// more than the work it feeds.
class SplitMix64 {
 public:
  using result_type = std::uint64_t;
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    const std::uint64_t x = state_;
    state_ += 0x9E3779B97F4A7C15ULL;
    return splitmix64(x);
  }

 private:
  std::uint64_t state_;
};

// Uniform in [0, 1) from the top 53 bits.
inline double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace semsim
