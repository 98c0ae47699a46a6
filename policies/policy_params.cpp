#include "policies/policy_params.hpp"

#include <fmt/format.h>

#include <cmath>

namespace semsim {

long long PolicyChoice::whole_param(const std::string& key, long long min, long long max) const {
  const double value = param(key);
  if (value != std::floor(value) || value < static_cast<double>(min) || value > static_cast<double>(max))
    throw InputError(fmt::format("policy '{}': parameter '{}' must be a whole number in [{}, {}], got {}",
                                 name, key, min, max, value));
  return static_cast<long long>(value);
}

}  // namespace semsim
