#pragma once
// Every policy is chosen by name and takes named numeric parameters with defaults; the registry
// lists them so that a typo'd name or parameter is an error with a suggestion, never ignored.
#include <map>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

struct ParamSpec {
  std::string name;
  double default_value = 0;
  std::string help;
};

struct PolicyInfo {
  std::string name;
  std::string help;
  std::vector<ParamSpec> params;
};

struct PolicyChoice {
  std::string name;
  std::map<std::string, double> params;  // every declared parameter, defaults filled in

  double param(const std::string& key) const { return params.at(key); }
  // A parameter that must be a whole number in [min, max]; InputError naming policy and parameter.
  long long whole_param(const std::string& key, long long min, long long max) const;
  friend bool operator==(const PolicyChoice&, const PolicyChoice&) = default;
};

// `name` (which must be in `known`) with every parameter at its default.
PolicyChoice default_policy_choice(const std::string& name, const std::vector<PolicyInfo>& known);

// Reads `name` or `{name: N, <param>: value, ...}` and checks both against `known`.
PolicyChoice read_policy_choice(const YamlInput& in, const std::vector<PolicyInfo>& known);

}  // namespace semsim
