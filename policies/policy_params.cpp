#include "policies/policy_params.hpp"

namespace semsim {

PolicyChoice read_policy_choice(const YamlInput& in, const std::vector<PolicyInfo>& known) {
  std::vector<std::string> names;
  for (const auto& info : known) names.push_back(info.name);
  const YamlInput name_node = in.is_map() ? in.required("name") : in;
  PolicyChoice choice;
  choice.name = name_node.as_choice(names);
  const PolicyInfo* info = nullptr;
  for (const auto& candidate : known)
    if (candidate.name == choice.name) info = &candidate;
  std::vector<std::string> allowed{"name"};
  for (const auto& param : info->params) {
    allowed.push_back(param.name);
    choice.params[param.name] = param.default_value;
  }
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
