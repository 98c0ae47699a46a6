// `semsim list`: the presets and the policies with their parameters.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "models/presets.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement_policies.hpp"
#include "policies/request_scheduling.hpp"
#include "policies/token_scheduling.hpp"
#include "sim/cli/commands.hpp"

namespace semsim {
namespace {

void print_policies(const std::string& kind, const std::vector<PolicyInfo>& policies) {
  std::cout << kind << ":\n";
  for (const auto& p : policies) {
    std::cout << fmt::format("  {:<18} {}\n", p.name, p.help);
    for (const auto& param : p.params)
      std::cout << fmt::format("      {}={} {}\n", param.name, param.default_value, param.help);
  }
}

int print_listing(const std::string& what) {
  if (what == "models") {
    for (const auto& name : preset_names(PresetKind::kModel)) {
      const auto m = model_preset(name);
      std::cout << fmt::format(
          "{:<20} {:>3} layers ({:>2} MoE), {:>3} routed + {} shared experts, top-{}, hidden {}\n", name,
          m.layers, m.moe_layers(), m.routed_experts, m.shared_experts, m.top_k, m.hidden);
    }
  } else if (what == "hardware") {
    for (const auto& name : preset_names(PresetKind::kDevice)) std::cout << name << "\n";
  } else if (what == "clusters") {
    for (const auto& name : preset_names(PresetKind::kCluster)) {
      const auto c = cluster_preset(name);
      std::cout << fmt::format("{:<18} {} x {} {}\n", name, c.nodes, c.gpus_per_node, c.device.name);
    }
  } else {
    print_policies("placement", placement_policies());
    print_policies("request_scheduling", request_scheduling_policies());
    print_policies("token_scheduling", token_scheduling_policies());
    print_policies("dispatch", dispatch_modes());
  }
  return 0;
}

}  // namespace

void add_list_command(CommandLine& cli) {
  auto what = std::make_shared<std::string>();
  CLI::App* list_command =
      cli.add("list", "list presets and policies", [what] { return print_listing(*what); });
  list_command->add_option("what", *what, "models | hardware | clusters | policies")
      ->required()
      ->check(CLI::IsMember({"models", "hardware", "clusters", "policies"}));
}

}  // namespace semsim
