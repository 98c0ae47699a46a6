// `semsim check`: validates a scenario and prints what it resolves to, without simulating.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/run_plan.hpp"
#include "sim/scenario.hpp"

namespace semsim {
namespace {

void describe(const Scenario& s, const RunPlan& plan) {
  std::cout << fmt::format(
      "  model {} ({} layers, {} MoE, {} experts top-{})\n  cluster {} ({} x {} {})\n"
      "  EP{} attention {}, {:.2f} GB weights per device, KV capacity {} tokens per {}\n"
      "  expert slots: {} per MoE layer ({} redundant), at most {} per device\n"
      "  policies: placement {}{}, request scheduling {}, token scheduling {}, dispatch {} (replica choice "
      "{}); "
      "fidelity {}; "
      "calibration {}\n"
      "  workload: {} requests{}{}, seed {}\n",
      s.model.name, s.model.layers, s.model.moe_layers(), s.model.routed_experts, s.model.top_k,
      s.cluster.name, s.cluster.nodes, s.cluster.gpus_per_node, s.cluster.device.name, s.ep,
      attention_name(s.attention), plan.memory.weight_bytes_per_device / 1e9, plan.memory.kv_capacity_tokens,
      s.attention == AttentionMode::kDataParallel ? "rank" : "TP group", plan.memory.physical_slots_per_layer,
      plan.memory.redundant_experts, plan.memory.most_slots_per_device, s.placement.name,
      s.placement_file.empty() ? "" : fmt::format(" (from {})", s.placement_file), s.request_scheduling.name,
      s.token_scheduling.name, s.dispatch_name, s.replica_choice_name,
      name_of(kNetworkFidelityNames, s.fidelity), s.calibration->name, s.workload.requests,
      s.workload.request_log
          ? fmt::format(" from {} ({}; arrivals: {})", s.workload.request_log->file,
                        s.workload.request_log->format_name(), s.workload.request_log->arrivals_description())
          : "",
      s.workload.concurrency > 0
          ? fmt::format(" in a closed loop of {} concurrent (each sent when one finishes)",
                        s.workload.concurrency)
          : "",
      s.workload.seed);
  if (s.serving.batching != Batching::kMixed)
    std::cout << "  batching " << name_of(kBatchingNames, s.serving.batching)
              << ": a step prefills only when it can, else decodes every running request\n";
  if (const auto& groups = plan.notes.group_limit) {
    std::cout << "  replayed trace: " << group_limit_counts(*groups) << "\n";
    const std::string warning = group_limit_warning(*groups, s.workload.trace_file_as_written);
    if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  }
}

int check_scenario(const ScenarioArguments& arguments) {
  const Scenario s = arguments.load();
  if (!s.disaggregation) {
    const RunPlan plan = build_run(s);  // what a run builds, its placement and memory plan included
    std::cout << s.file << ": ok\n";
    describe(s, plan);
    return 0;
  }
  const Disaggregation& pools = *s.disaggregation;
  const DisaggregatedPlan plan = build_disaggregated_run(s);
  std::cout << s.file << ": ok\n";
  std::cout << fmt::format("  disaggregated on {}: KV caches move {}\n", s.cluster.name,
                           pools.kv_transfer == KvTransferMode::kWhole ? "whole" : "layer by layer");
  std::cout << fmt::format("prefill pool, nodes 0-{}:\n", pools.prefill_nodes() - 1);
  describe(*pools.prefill, plan.prefill);
  std::cout << fmt::format("decode pool, nodes {}-{}:\n", pools.prefill_nodes(),
                           pools.prefill_nodes() + pools.decode->cluster.nodes - 1);
  describe(*pools.decode, plan.decode);
  return 0;
}

}  // namespace

void add_check_command(CommandLine& cli) {
  auto arguments = std::make_shared<ScenarioArguments>();
  CLI::App* check = cli.add("check", "validate a scenario and print what it resolves to",
                            [arguments] { return check_scenario(*arguments); });
  add_scenario_arguments(*check, *arguments);
}

}  // namespace semsim
