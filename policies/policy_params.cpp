#include "policies/policy_params.hpp"

#include <fmt/format.h>

#include <cmath>

namespace semsim {

long long PolicyChoice::whole_param(const std::string& key, long long min, long long max) const {
  const double value = param(key);
  if (value == std::floor(value) && value >= static_cast<double>(min) && value <= static_cast<double>(max))
    return static_cast<long long>(value);
  const std::string message = fmt::format(
      "policy '{}': parameter '{}' must be a whole number in [{}, {}], got {}", name, key, min, max, value);
  if (key_path.empty()) throw InputError(message);
  const auto given = param_locations.find(key);
  throw InputError(fmt::format("{}: {}.{}: {}", given != param_locations.end() ? given->second : location,
                               key_path, key, message),
                   key_path + "." + key);
}

}  // namespace semsim
