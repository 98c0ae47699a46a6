// `semsim list`: the presets and the policies with their parameters.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "models/presets.hpp"
#include "policies/policy_registry.hpp"
#include "sim/cli/commands.hpp"

namespace semsim {
namespace {

int print_listing(const std::string& what) {
  if (what == "models") {
    for (const auto& name : preset_names(PresetKind::kModel)) {
      const auto m = model_preset(name);
      if (m.dense())
        std::cout << fmt::format("{:<20} {:>3} layers (dense), FFN {}, hidden {}\n", name, m.layers,
                                 m.dense_ffn, m.hidden);
      else
        std::cout << fmt::format(
            "{:<20} {:>3} layers ({:>2} MoE), {:>3} routed + {} shared experts, top-{}, hidden {}\n", name,
            m.layers, m.moe_layers(), m.routed_experts, m.shared_experts, m.top_k, m.hidden);
    }
  } else if (what == "hardware") {
    for (const auto& name : preset_names(PresetKind::kDevice)) std::cout << name << "\n";
  } else if (what == "clusters") {
    // The node counts and fabrics `cluster: {preset: NAME, nodes: N, fabric: KIND}` and --nodes take.
    for (const auto& name : preset_names(PresetKind::kCluster)) {
      const auto c = cluster_preset(name);
      const std::string nodes = c.fixed_nodes ? fmt::format("{} (fixed)", c.nodes)
                                              : fmt::format("1-{} (default {})", c.max_nodes, c.nodes);
      std::string fabrics;
      for (const FabricKind kind : c.fabric_choices)
        fabrics += (fabrics.empty() ? "" : " | ") + std::string(fabric_name(kind));
      std::cout << fmt::format("{:<18} nodes {:<20} x {:<3} {:<14} fabric {}\n", name, nodes, c.gpus_per_node,
                               c.device.name, fabrics);
    }
  } else {
    std::cout << policy_listing();
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
