#pragma once
// Every policy is chosen by name and takes named numeric parameters with defaults; the registry
// (policies/policy_registry.hpp) declares them, so that a typo'd name or parameter is an error with a
// suggestion, never ignored.
#include <map>
#include <string>

#include "models/input_error.hpp"

namespace semsim {

struct ParamSpec {
  std::string name;
  double default_value = 0;
  std::string help;
};

struct PolicyChoice {
  std::string name;
  std::map<std::string, double> params;  // every declared parameter, defaults filled in

  // Where a scenario gave the choice (empty for a command line's): its key path and "file:line:column",
  // and each parameter it gave's, so that a parameter checked only when used is an error at its value.
  std::string key_path = {};
  std::string location = {};
  std::map<std::string, std::string> param_locations = {};

  double param(const std::string& key) const { return params.at(key); }
  // A parameter that must be a whole number in [min, max]; InputError naming policy and parameter
  // (and where the scenario gave it).
  long long whole_param(const std::string& key, long long min, long long max) const;
  // A parameter that must be at least `min`; the same InputError otherwise.
  double param_at_least(const std::string& key, double min) const;
  [[noreturn]] void fail_param(const std::string& key, const std::string& requirement) const;
  friend bool operator==(const PolicyChoice& a, const PolicyChoice& b) {
    return a.name == b.name && a.params == b.params;
  }
};

}  // namespace semsim
