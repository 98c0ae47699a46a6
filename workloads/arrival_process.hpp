#pragma once
// When requests arrive: Poisson, gamma (burstiness by coefficient of variation), fixed rate, or
// timestamps read from a file.
#include <random>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

struct ArrivalProcess {
  enum class Kind { kPoisson, kGamma, kFixed, kTrace };
  Kind kind = Kind::kPoisson;
  double rate = 1.0;                // requests per second (not used by kTrace)
  double cv = 1.0;                  // kGamma: coefficient of variation of inter-arrival times
  std::vector<double> trace_times;  // kTrace: read and checked when the scenario is loaded

  // `base_dir` resolves relative trace paths (the scenario's folder).
  static ArrivalProcess from_yaml(const YamlInput& in, const std::string& base_dir);
  // Arrival times of `count` requests (kTrace: the file's first `count`), non-decreasing from 0.
  std::vector<double> arrival_times(int count, std::mt19937_64& rng) const;
};

}  // namespace semsim
