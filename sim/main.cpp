// semsim: command-line entry point. Exit codes: 0 ok, 2 bad input, 1 internal error.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "models/presets.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement_policies.hpp"
#include "policies/request_scheduling.hpp"
#include "policies/token_scheduling.hpp"
#include "sim/isolated_process.hpp"
#include "sim/output_files.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/trace_commands.hpp"

namespace {

using semsim::Scenario;

int run_command(const std::string& scenario_ref, std::string out_dir, const std::vector<std::string>& overrides,
                long long seed) {
  const auto started = std::chrono::steady_clock::now();
  const Scenario scenario = semsim::load_scenario_file(scenario_ref, overrides, seed);
  if (out_dir.empty()) out_dir = "out/" + scenario.name;
  semsim::OutputStaging staging(out_dir);
  const std::string requests_csv = scenario.write_requests_csv ? staging.staged("requests.csv") : "";
  const std::string steps_csv = scenario.write_steps_csv ? staging.staged("steps.csv") : "";
  const std::string summary_json = staging.staged("summary.json");

  const std::string payload = semsim::run_isolated([&] {
    const semsim::RunResult run = semsim::simulate(scenario);
    if (!requests_csv.empty()) semsim::write_requests_csv(requests_csv, run);
    if (!steps_csv.empty()) semsim::write_steps_csv(steps_csv, run);
    return semsim::summary_json(scenario, semsim::summarize(run)).dump();
  });
  auto summary = nlohmann::ordered_json::parse(payload);
  summary["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  semsim::write_text_file(summary_json, summary.dump(2) + "\n");
  staging.commit();
  std::cout << semsim::summary_text(summary) << "Outputs in " << out_dir << "/\n";
  return 0;
}

int check_command(const std::string& scenario_ref, const std::vector<std::string>& overrides) {
  const Scenario s = semsim::load_scenario_file(scenario_ref, overrides, -1);
  std::cout << fmt::format(
      "{}: ok\n  model {} ({} layers, {} MoE, {} experts top-{})\n  cluster {} ({} x {} {})\n"
      "  EP{} attention {}, {:.2f} GB weights per device, KV capacity {} tokens per rank\n"
      "  policies: placement {}, request scheduling {}, dispatch {}; fidelity {}; calibration {}\n"
      "  workload: {} requests, seed {}\n",
      s.file, s.model.name, s.model.layers, s.model.moe_layers(), s.model.routed_experts, s.model.top_k,
      s.cluster.name, s.cluster.nodes, s.cluster.gpus_per_node, s.cluster.device.name, s.ep,
      s.attention == semsim::AttentionMode::kDataParallel ? "dp" : "tp", s.weight_bytes_per_device / 1e9,
      s.kv_capacity_tokens, s.placement.name, s.request_scheduling.name, s.dispatch_name,
      s.fidelity == semsim::NetworkFidelity::kFlow ? "flow" : "bottleneck", s.calibration.name, s.workload.requests,
      s.workload.seed);
  return 0;
}

void print_policies(const std::string& kind, const std::vector<semsim::PolicyInfo>& policies) {
  std::cout << kind << ":\n";
  for (const auto& p : policies) {
    std::cout << fmt::format("  {:<18} {}\n", p.name, p.help);
    for (const auto& param : p.params)
      std::cout << fmt::format("      {}={} {}\n", param.name, param.default_value, param.help);
  }
}

int list_command(const std::string& what) {
  if (what == "models") {
    for (const auto& name : semsim::preset_names(semsim::PresetKind::kModel)) {
      const auto m = semsim::model_preset(name);
      std::cout << fmt::format("{:<20} {:>3} layers ({:>2} MoE), {:>3} routed + {} shared experts, top-{}, hidden {}\n",
                               name, m.layers, m.moe_layers(), m.routed_experts, m.shared_experts, m.top_k, m.hidden);
    }
  } else if (what == "hardware") {
    for (const auto& name : semsim::preset_names(semsim::PresetKind::kDevice)) std::cout << name << "\n";
  } else if (what == "clusters") {
    for (const auto& name : semsim::preset_names(semsim::PresetKind::kCluster)) {
      const auto c = semsim::cluster_preset(name);
      std::cout << fmt::format("{:<18} {} x {} {}\n", name, c.nodes, c.gpus_per_node, c.device.name);
    }
  } else {
    print_policies("placement", semsim::placement_policies());
    print_policies("request_scheduling", semsim::request_scheduling_policies());
    print_policies("token_scheduling", semsim::token_scheduling_policies());
    print_policies("dispatch", semsim::dispatch_modes());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"semsim: simulate MoE serving with expert parallelism on GPU/NPU clusters (SimGrid)"};
  app.set_version_flag("--version", std::string("semsim ") + SEMSIM_VERSION);
  app.require_subcommand(1);

  std::string scenario_ref, out_dir, list_what;
  std::vector<std::string> overrides;
  long long seed = -1;

  auto* run = app.add_subcommand("run", "simulate a scenario and write summary.json, requests.csv, steps.csv");
  run->add_option("scenario", scenario_ref, "scenario YAML file, or 'default' for the embedded one")->required();
  run->add_option("--out", out_dir, "output folder (default: out/<scenario name>)");
  run->add_option("--set", overrides, "override a scenario value: key.path=value (repeatable)");
  run->add_option("--seed", seed, "workload seed (replaces workload.seed)")->check(CLI::Range(0LL, 1LL << 62));

  auto* check = app.add_subcommand("check", "validate a scenario and print what it resolves to");
  check->add_option("scenario", scenario_ref, "scenario YAML file, or 'default'")->required();
  check->add_option("--set", overrides, "override a scenario value: key.path=value (repeatable)");

  auto* list = app.add_subcommand("list", "list presets and policies");
  list->add_option("what", list_what, "models | hardware | clusters | policies")
      ->required()
      ->check(CLI::IsMember({"models", "hardware", "clusters", "policies"}));

  // Routing traces: import, fit, profile (logic in sim/trace_commands.cpp).
  std::string trace_format, trace_input, trace_model, trace_out, trace_file;
  double split = 0.2;
  long long profile_seed = 1;
  auto* trace = app.add_subcommand("trace", "routing traces: import from other tools, fit a synthetic generator");
  trace->require_subcommand(1);
  auto* trace_import = trace->add_subcommand("import", "convert a routing dump into a checked semsim trace");
  trace_import->add_option("--from", trace_format, "deepseek-csv | llama4-json | mixtral-jsonl | sglang")->required();
  trace_import->add_option("input", trace_input, "file or folder to import")->required();
  trace_import->add_option("--model", trace_model, "model preset the routing must match")->required();
  trace_import->add_option("--out", trace_out, "output trace: .semtrace (binary) or .semtrace.txt[.gz]")->required();
  auto* trace_fit = trace->add_subcommand("fit", "fit the synthetic generator to a trace; writes params + report");
  auto* profile = app.add_subcommand("profile", "token-expert affinity tables and Table-1 statistics of a trace");
  for (auto* command : {trace_fit, profile}) {
    command->add_option("trace", trace_file, "semsim trace (.semtrace or .semtrace.txt[.gz])")->required();
    command->add_option("--split", split, "held-out fraction of requests")->check(CLI::Range(0.01, 0.99));
    command->add_option("--seed", profile_seed, "seed of the split (and of the fit)")->check(CLI::Range(0LL, 1LL << 62));
    command->add_option("--out", trace_out, "output folder")->required();
  }

  const std::vector<std::string> commands{"run", "check", "list", "trace", "profile"};
  if (argc > 1 && argv[1][0] != '-' && std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::cerr << "error: unknown command '" << argv[1] << "'" << semsim::did_you_mean(argv[1], commands)
              << "; commands: run, check, list, trace, profile (see --help)\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    if (*run) return run_command(scenario_ref, out_dir, overrides, seed);
    if (*check) return check_command(scenario_ref, overrides);
    if (*trace_import) return semsim::trace_import_command(trace_format, trace_input, trace_model, trace_out);
    if (*trace_fit) return semsim::trace_fit_command(trace_file, split, profile_seed, trace_out);
    if (*profile) return semsim::profile_command(trace_file, split, profile_seed, trace_out);
    return list_command(list_what);
  } catch (const semsim::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
