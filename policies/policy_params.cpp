#include "policies/policy_params.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace semsim {

namespace {

const PolicyInfo& info_named(const std::string& name, const std::vector<PolicyInfo>& known) {
  for (const auto& info : known)
    if (info.name == name) return info;
  throw std::logic_error("policy '" + name + "' is not registered");
}

}  // namespace

long long PolicyChoice::whole_param(const std::string& key, long long min, long long max) const {
  const double value = param(key);
  if (value != std::floor(value) || value < static_cast<double>(min) || value > static_cast<double>(max))
    throw InputError(fmt::format("policy '{}': parameter '{}' must be a whole number in [{}, {}], got {}",
                                 name, key, min, max, value));
  return static_cast<long long>(value);
}

PolicyChoice default_policy_choice(const std::string& name, const std::vector<PolicyInfo>& known) {
  PolicyChoice choice{name, {}};
  for (const auto& param : info_named(name, known).params) choice.params[param.name] = param.default_value;
  return choice;
}

PolicyChoice read_policy_choice(const YamlInput& in, const std::vector<PolicyInfo>& known) {
  std::vector<std::string> names;
  for (const auto& info : known) names.push_back(info.name);
  const YamlInput name_node = in.is_map() ? in.required("name") : in;
  PolicyChoice choice = default_policy_choice(name_node.as_choice(names), known);
  const PolicyInfo* info = &info_named(choice.name, known);
  std::vector<std::string> allowed{"name"};
  for (const auto& param : info->params) allowed.push_back(param.name);
  if (in.is_map()) {
    in.expect_map(allowed);
    for (const auto& param : info->params)
      if (const auto value = in.optional(param.name)) choice.params[param.name] = value->as_double();
  } else if (!in.is_scalar()) {
    in.fail("expected a policy name or a map with 'name' and parameters");
  }
  return choice;
}

}  // namespace semsim
