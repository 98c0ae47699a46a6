#pragma once
// Input/output lengths in tokens: fixed, uniform, lognormal (clamped), or sampled from a file.
#include <random>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

struct LengthDistribution {
  static constexpr int kMaxLength = 1 << 22;  // the longest prompt or output a workload may give
  enum class Kind { kFixed, kUniform, kLognormal, kFile };
  Kind kind = Kind::kFixed;
  int value = 1;                 // kFixed
  int min = 1, max = 1;          // kUniform bounds; kLognormal clamp
  double median = 1, sigma = 0;  // kLognormal: exp(N(log median, sigma))
  std::vector<int> samples;      // kFile: drawn uniformly with replacement

  static LengthDistribution from_yaml(const YamlInput& in, const std::string& base_dir);
  int draw(std::mt19937_64& rng) const;
  int upper_bound() const;  // the longest length this can produce
  double mean() const;      // the mean length drawn (a lognormal's before its clamp, within it)
};

}  // namespace semsim
