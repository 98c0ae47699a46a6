#include "policies/policy_params.hpp"

#include <fmt/format.h>

#include <cmath>

namespace semsim {

long long PolicyChoice::whole_param(const std::string& key, long long min, long long max) const {
  const double value = param(key);
  if (value == std::floor(value) && value >= static_cast<double>(min) && value <= static_cast<double>(max))
    return static_cast<long long>(value);
  fail_param(key, fmt::format("a whole number in [{}, {}]", min, max));
}

double PolicyChoice::param_at_least(const std::string& key, double min) const {
  const double value = param(key);
  if (value >= min) return value;
  fail_param(key, fmt::format("at least {}", min));
}

void PolicyChoice::fail_param(const std::string& key, const std::string& requirement) const {
  const std::string message =
      fmt::format("policy '{}': parameter '{}' must be {}, got {}", name, key, requirement, param(key));
  if (key_path.empty()) throw InputError(message);
  const auto given = param_locations.find(key);
  throw InputError(fmt::format("{}: {}.{}: {}", given != param_locations.end() ? given->second : location,
                               key_path, key, message),
                   key_path + "." + key);
}

}  // namespace semsim
