// `semsim check`: validates a scenario and prints what it resolves to, without simulating.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/run_plan.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_checks.hpp"

namespace semsim {
namespace {

const char* origin_name(SettingOrigin origin) {
  switch (origin) {
    case SettingOrigin::kScenario:
      return "scenario";
    case SettingOrigin::kEngineDefault:
      return "SGLang default";
    case SettingOrigin::kSemsimDefault:
      break;
  }
  return "semsim default; SGLang derives its own from the KV pool";
}

// The engine's settings, each with where its value came from, and the profile's costs.
std::string engine_settings_text(const Scenario& s) {
  const EngineSettings& e = s.engine;
  const EngineCosts& c = s.calibration->engine;
  return fmt::format(
      "  engine {}: cuda_graph_max_bs {} ({}), overlap_schedule {} ({}), max_batch_tokens {} ({}), "
      "max_running_requests {} ({}), mem_fraction_static {:g} ({}) of {:g} MiB\n"
      "  engine costs ({}): step {:g} s, per request in a step {:g} s, eager per layer {:g} s, graph replay "
      "{:g} s, per request {:g} s\n",
      name_of(kEngineNames, e.name), e.cuda_graph_max_bs, origin_name(e.cuda_graph_max_bs_from),
      e.overlap_schedule, origin_name(e.overlap_schedule_from), s.serving.max_batch_tokens,
      origin_name(e.max_batch_tokens_from), s.serving.max_running_requests,
      origin_name(e.max_running_requests_from), s.serving.memory_fraction,
      origin_name(e.memory_fraction_from), s.cluster.device.driver_memory_mib(), s.calibration->name,
      c.step_seconds, c.request_step_seconds, c.eager_layer_seconds, c.graph_step_seconds, c.request_seconds);
}

// A dense model has no expert slots to count and no placement to run.
std::string model_shape(const MoeModel& m) {
  return m.dense() ? fmt::format("{} layers, dense FFN {}", m.layers, m.dense_ffn)
                   : fmt::format("{} layers, {} MoE, {} experts top-{}", m.layers, m.moe_layers(),
                                 m.routed_experts, m.top_k);
}

std::string expert_slots(const Scenario& s, const MemoryPlan& memory) {
  return s.model.dense() ? "none (dense model)"
                         : fmt::format("{} per MoE layer ({} redundant), at most {} per device",
                                       memory.physical_slots_per_layer, memory.redundant_experts,
                                       memory.most_slots_per_device);
}

void describe(const Scenario& s, const RunPlan& plan) {
  std::cout << fmt::format(
      "  model {} ({})\n  cluster {} ({} x {} {})\n"
      "  {} attention {}, {:.2f} GB weights per device, KV capacity {} tokens per {}\n"
      "  expert slots: {}\n"
      "  policies: placement {}{}, request scheduling {}, token scheduling {}, dispatch {} (replica choice "
      "{}); "
      "fidelity {}; "
      "calibration {}\n"
      "  workload: {} requests{}{}, seed {}\n",
      s.model.name, model_shape(s.model), s.cluster.name, s.cluster.nodes, s.cluster.gpus_per_node,
      s.cluster.device.name,
      s.model.dense() ? fmt::format("{} devices,", s.ep)
      : s.experts_tensor_parallel()
          ? fmt::format("experts TP{} (a slice of every expert per device)", s.moe_tp)
          : fmt::format("EP{}", s.ep),
      attention_name(s.attention), plan.memory.weight_bytes_per_device / 1e9, plan.memory.kv_capacity_tokens,
      s.attention == AttentionMode::kDataParallel ? "rank" : "TP group", expert_slots(s, plan.memory),
      s.model.dense() ? "none (dense model)" : s.placement.name,
      s.placement_file.empty() ? "" : fmt::format(" (from {})", s.placement_file), s.request_scheduling.name,
      s.token_scheduling.name, s.experts_tensor_parallel() ? "none" : s.dispatch_name, s.replica_choice_name,
      name_of(kNetworkFidelityNames, s.fidelity), s.calibration->describe_source(), s.workload.requests,
      s.workload.request_log
          ? fmt::format(" from {} ({}; arrivals: {})", s.workload.request_log->file,
                        s.workload.request_log->format_name(), s.workload.request_log->arrivals_description())
          : "",
      s.workload.concurrency > 0
          ? fmt::format(" in a closed loop of {} concurrent (each sent when one finishes)",
                        s.workload.concurrency)
          : "",
      s.workload.seed);
  if (s.engine.on()) std::cout << engine_settings_text(s);
  if (const SpeculativeDecoding& spec = s.serving.speculative; spec.on()) {
    std::string rates;
    for (const double rate : spec.acceptance.rates)
      rates += (rates.empty() ? "" : ", ") + fmt::format("{:g}", rate);
    std::cout << fmt::format(
        "  speculative decoding: {}{}, {} draft tokens, acceptance {} ({}), draft weights {:.3g} GB per "
        "device\n",
        name_of(kSpeculativeMethodNames, spec.method),
        spec.draft_model ? " with " + spec.draft_model->name : "", spec.tokens,
        spec.acceptance.kind == AcceptanceKind::kTrace
            ? "from " + spec.acceptance.trace_file
            : name_of(kAcceptanceKindNames, spec.acceptance.kind) + std::string(" ") + rates,
        spec.acceptance.source, plan.memory.draft_weight_bytes_per_device / 1e9);
  }
  if (s.serving.prefix_cache)
    std::cout << fmt::format("  prefix cache: per rank, blocks of {} tokens ({}){}\n",
                             s.workload.prefix_block_tokens(),
                             s.workload.prefix.on() ? "workload.prefix" : "the request log's hash_ids",
                             s.serving.pool == ServingPool::kDecode ? "; a decode pool keeps none" : "");
  // What a placement policy run here reported (a placement file's report is its own, in the file).
  if (s.placement_file.empty() && !plan.placement->solver.empty()) {
    std::cout << fmt::format("  placement solver ({:.3f} s):", plan.placement->solver_seconds);
    for (const auto& [key, value] : plan.placement->solver)
      std::cout << fmt::format(" {} {:.6g}", key, value);
    std::cout << "\n";
  }
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
  for (const std::string& warning : idle_nodes_warnings(s)) std::cerr << "warning: " << warning << "\n";
  if (s.deployment) {
    const Deployment& deployment = *s.deployment;
    const DeploymentPlan plan = build_deployment_run(s);
    std::cout << s.file << ": ok\n";
    std::cout << fmt::format("  {} instances on {}, {} node{} each, router {}\n", deployment.instances,
                             s.cluster.name, deployment.instance_nodes(),
                             deployment.instance_nodes() == 1 ? "" : "s", deployment.router.name);
    for (int i = 0; i < deployment.instances; ++i) {
      const int first = i * deployment.instance_nodes();
      const int last = first + deployment.instance_nodes() - 1;
      std::cout << fmt::format(
          "instance {}, {}:\n", i,
          first == last ? fmt::format("node {}", first) : fmt::format("nodes {}-{}", first, last));
      const Scenario& instance = *deployment.instance[i];
      if (!instance.disaggregation) {
        describe(instance, plan.instances[i]);
        continue;
      }
      std::cout << fmt::format("prefill pool, its first {} node(s):\n",
                               instance.disaggregation->prefill_nodes());
      describe(*instance.disaggregation->prefill, plan.instances[i]);
      std::cout << "decode pool, the nodes after them:\n";
      describe(*instance.disaggregation->decode, plan.decode[i]);
    }
    return 0;
  }
  if (!s.disaggregation) {
    const RunPlan plan = build_run(s);  // what a run builds, its placement and memory plan included
    std::cout << s.file << ": ok\n";
    describe(s, plan);
    return 0;
  }
  const Disaggregation& pools = *s.disaggregation;
  const DisaggregatedPlan plan = build_disaggregated_run(s);
  std::cout << s.file << ": ok\n";
  std::cout << fmt::format(
      "  disaggregated on {}: KV caches move {}, the decode rank reserves them {}\n", s.cluster.name,
      pools.kv_transfer == KvTransferMode::kWhole ? "whole" : "layer by layer",
      pools.decode_kv == DecodeKv::kPreallocated ? "before the prefill (pre-allocated)" : "when they land");
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
