// semsim: command-line entry point. Exit codes: 0 ok, 2 bad input, 1 internal error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "models/presets.hpp"
#include "policies/dispatch.hpp"
#include "policies/placement_policies.hpp"
#include "policies/request_scheduling.hpp"
#include "policies/token_scheduling.hpp"
#include "sim/cli/calibrate_command.hpp"
#include "sim/cli/isolated_process.hpp"
#include "sim/cli/output_files.hpp"
#include "sim/cli/place_command.hpp"
#include "sim/cli/plot_command.hpp"
#include "sim/scenario.hpp"
#include "sim/cli/staged_run.hpp"
#include "sim/cli/sweep_runner.hpp"
#include "sim/cli/trace_commands.hpp"

namespace {

using semsim::Scenario;

int run_command(const std::string& scenario_ref, std::string out_dir,
                const std::vector<std::string>& overrides, long long seed, semsim::TimelineOptions timeline,
                const std::string& timeline_steps) {
  const auto started = std::chrono::steady_clock::now();
  const Scenario scenario = semsim::load_scenario_file(scenario_ref, overrides, seed);
  if (out_dir.empty()) out_dir = "out/" + scenario.name;
  if (!timeline_steps.empty()) timeline.steps = semsim::parse_step_window(timeline_steps, "--timeline-steps");
  semsim::StagedRun staged(scenario, out_dir, timeline);
  auto summary =
      nlohmann::ordered_json::parse(semsim::run_isolated([&] { return staged.simulate_and_write(); }));
  summary["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  staged.commit(summary);
  std::cout << semsim::summary_text(summary) << "Outputs in " << out_dir << "/\n";
  if (!timeline.path.empty())
    std::cout << "Timeline in " << timeline.path << " (open it in ui.perfetto.dev)\n";
  return 0;
}

int check_command(const std::string& scenario_ref, const std::vector<std::string>& overrides) {
  const Scenario s = semsim::load_scenario_file(scenario_ref, overrides, -1);
  std::cout << fmt::format(
      "{}: ok\n  model {} ({} layers, {} MoE, {} experts top-{})\n  cluster {} ({} x {} {})\n"
      "  EP{} attention {}, {:.2f} GB weights per device, KV capacity {} tokens per {}\n"
      "  policies: placement {}{}, request scheduling {}, token scheduling {}, dispatch {} (replica choice "
      "{}); "
      "fidelity {}; "
      "calibration {}\n"
      "  workload: {} requests, seed {}\n",
      s.file, s.model.name, s.model.layers, s.model.moe_layers(), s.model.routed_experts, s.model.top_k,
      s.cluster.name, s.cluster.nodes, s.cluster.gpus_per_node, s.cluster.device.name, s.ep,
      s.attention == semsim::AttentionMode::kDataParallel ? "dp" : "tp", s.weight_bytes_per_device / 1e9,
      s.kv_capacity_tokens, s.attention == semsim::AttentionMode::kDataParallel ? "rank" : "TP group",
      s.placement.name, s.placement_file.empty() ? "" : fmt::format(" (from {})", s.placement_file),
      s.request_scheduling.name, s.token_scheduling.name, s.dispatch_name, s.replica_choice_name,
      s.fidelity == semsim::NetworkFidelity::kFlow ? "flow" : "bottleneck", s.calibration.name,
      s.workload.requests, s.workload.seed);
  return 0;
}

int sweep_command(const std::string& file, std::string out_dir, int jobs, const std::string& shard,
                  bool retry_failed, bool dry_run) {
  semsim::SweepOptions options;
  if (!shard.empty()) options.shard = semsim::SweepShard::parse(shard);
  const semsim::Sweep sweep = semsim::load_sweep(file);
  if (dry_run) {
    std::cout << fmt::format("{}: {} points; point_id {}\n", file, sweep.points.size(),
                             fmt::join(sweep.columns, " "));
    for (const auto& p : sweep.points)
      if (options.shard.contains(p.index))
        std::cout << fmt::format("{} {}{}\n", p.id, fmt::join(p.labels, " "),
                                 p.error.empty() ? "" : " (invalid: " + p.error + ")");
    return 0;
  }
  options.out_dir = out_dir.empty() ? "out/" + std::filesystem::path(file).stem().string() : out_dir;
  options.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.retry_failed = retry_failed;
  const semsim::SweepOutcome done = semsim::run_sweep(sweep, options);
  std::cout << fmt::format("{} points{}: {} done before, {} ran, {} failed; results in {}/points.csv\n",
                           done.points, shard.empty() ? "" : " in shard " + shard, done.already_done,
                           done.ran, done.failed, options.out_dir);
  return 0;
}

int merge_command(const std::string& file, const std::string& out_dir,
                  const std::vector<std::string>& shard_dirs) {
  const semsim::Sweep sweep = semsim::load_sweep(file);
  const std::size_t merged = semsim::merge_sweep(sweep, out_dir, shard_dirs);
  std::cout << fmt::format("merged {} of {} points from {} shard folders into {}/points.csv\n", merged,
                           sweep.points.size(), shard_dirs.size(), out_dir);
  if (merged < sweep.points.size())
    std::cerr << fmt::format(
        "warning: {} points are in no shard yet: run the missing shards again, then merge\n",
        sweep.points.size() - merged);
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
      std::cout << fmt::format(
          "{:<20} {:>3} layers ({:>2} MoE), {:>3} routed + {} shared experts, top-{}, hidden {}\n", name,
          m.layers, m.moe_layers(), m.routed_experts, m.shared_experts, m.top_k, m.hidden);
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

  std::string scenario_ref, out_dir, list_what, sweep_file, shard;
  std::vector<std::string> overrides, shard_dirs;
  long long seed = -1;
  semsim::TimelineOptions timeline;
  std::string timeline_steps;
  int jobs = 0;
  bool retry_failed = false, dry_run = false;

  auto* run =
      app.add_subcommand("run", "simulate a scenario and write summary.json, requests.csv, steps.csv");
  run->add_option("scenario", scenario_ref, "scenario YAML file, or 'default' for the embedded one")
      ->required();
  run->add_option("--out", out_dir, "output folder (default: out/<scenario name>)");
  run->add_option("--set", overrides, "override a scenario value: key.path=value (repeatable)");
  run->add_option("--seed", seed, "workload seed (replaces workload.seed)")
      ->check(CLI::Range(0LL, 1LL << 62));
  auto* timeline_option = run->add_option(
      "--timeline", timeline.path, "also write a Chrome/Perfetto trace-event JSON of a window of steps");
  run->add_option("--timeline-steps", timeline_steps, "the timeline's steps, FIRST:COUNT (default 0:10)")
      ->needs(timeline_option);
  run->add_option("--timeline-requests", timeline.max_requests,
                  "request lifetimes shown at most (default 200)")
      ->check(CLI::Range(0, 1000000))
      ->needs(timeline_option);

  auto* check = app.add_subcommand("check", "validate a scenario and print what it resolves to");
  check->add_option("scenario", scenario_ref, "scenario YAML file, or 'default'")->required();
  check->add_option("--set", overrides, "override a scenario value: key.path=value (repeatable)");

  auto* list = app.add_subcommand("list", "list presets and policies");
  list->add_option("what", list_what, "models | hardware | clusters | policies")
      ->required()
      ->check(CLI::IsMember({"models", "hardware", "clusters", "policies"}));

  semsim::CalibrateOptions calibrate_options;
  auto* calibrate = app.add_subcommand(
      "calibrate", "measure this machine's GPUs (CUDA/NCCL microbenchmarks) and fit a profile");
  calibrate->add_option("--out", calibrate_options.out, "profile YAML to write");
  calibrate->add_option("--raw", calibrate_options.raw,
                        "folder for the raw CSVs (default: <profile stem>-raw/ beside it)");
  calibrate->add_option("--from-raw", calibrate_options.from_raw,
                        "fit raw CSVs measured before instead of measuring");
  calibrate->add_option("--device", calibrate_options.device,
                        "device preset (default: matched from the GPU's name)");
  calibrate->add_option("--bench", calibrate_options.bench,
                        "microbenchmark executable (default: beside semsim)");
  calibrate->add_option("--budget", calibrate_options.budget, "seconds for the microbenchmarks")
      ->check(CLI::PositiveNumber);
  calibrate->add_flag("--quick", calibrate_options.quick, "coarse grids: a smoke test of every path");
  calibrate->add_option("--write-plan", calibrate_options.write_plan,
                        "only write the kernel plan of the presets here");

  auto* sweep = app.add_subcommand("sweep", "simulate every point of a sweep file, N at a time, resumably");
  sweep->add_option("sweep_file", sweep_file, "sweep YAML file (base scenario, set, series, axes)");
  sweep->add_option("-j,--jobs", jobs, "simulations at once (default: all cores)")
      ->check(CLI::Range(1, 4096));
  sweep->add_option("--out", out_dir, "output folder (default: out/<sweep file name>)");
  sweep->add_option("--shard", shard, "run only shard i of n (i/n, 0 <= i < n), e.g. one Slurm array task");
  sweep->add_flag("--retry-failed", retry_failed, "run again the points recorded as failed");
  sweep->add_flag("--dry-run", dry_run,
                  "check the sweep file and list its points (id, values) without running");
  auto* merge = sweep->add_subcommand("merge", "combine the output folders of a sharded sweep");
  merge->add_option("sweep_file", sweep_file, "the sweep YAML file the shards ran")->required();
  merge->add_option("shard_dirs", shard_dirs, "the shards' output folders")->required();
  merge->add_option("--out", out_dir, "output folder")->required();

  auto* plot = app.add_subcommand("plot", "draw the figures of a sweep's output folder (PNG and SVG)");
  plot->add_option("sweep_dir", sweep_file, "the --out folder of semsim sweep")->required();
  plot->allow_extras();
  plot->footer(
      "Options of scripts/plot-sweep, passed on: --out DIR (default SWEEP_DIR/plots), --slo-metric COLUMN "
      "(e2e_s.p99), --slo-factor F (5), --rate-column COLUMN (workload.arrival.rate), --compare-rate R");

  // Routing traces: import, fit, synth, profile (logic in sim/trace_commands.cpp).
  std::string trace_format, trace_input, trace_model, trace_out, trace_file;
  double split = 0.2;
  long long profile_seed = 1;
  auto* trace =
      app.add_subcommand("trace", "routing traces: import from other tools, fit a synthetic generator");
  trace->require_subcommand(1);
  auto* trace_import = trace->add_subcommand("import", "convert a routing dump into a checked semsim trace");
  trace_import->add_option("--from", trace_format, "deepseek-csv | llama4-json | mixtral-jsonl | sglang")
      ->required();
  trace_import->add_option("input", trace_input, "file or folder to import")->required();
  trace_import->add_option("--model", trace_model, "model preset the routing must match")->required();
  trace_import->add_option("--out", trace_out, "output trace: .semtrace (binary) or .semtrace.txt[.gz]")
      ->required();
  auto* trace_fit =
      trace->add_subcommand("fit", "fit the synthetic generator to a trace; writes params + report");
  int synth_requests = 1000;
  auto* trace_synth = trace->add_subcommand(
      "synth", "record the prompts of a synthetic-routing scenario's requests as a trace");
  trace_synth->add_option("scenario", scenario_ref, "scenario YAML file, or 'default'")->required();
  trace_synth->add_option("--set", overrides, "override a scenario value: key.path=value (repeatable)");
  trace_synth->add_option("--requests", synth_requests, "requests to record (default 1000)")
      ->check(CLI::Range(1, 10000000));
  int synth_first = 0;
  trace_synth
      ->add_option("--first-request", synth_first,
                   "id of the first recorded request (default 0); beyond a run's requests, the "
                   "trace holds requests that run never sees")
      ->check(CLI::Range(0, 100000000));
  trace_synth->add_option("--out", trace_out, "output trace: .semtrace (binary) or .semtrace.txt[.gz]")
      ->required();
  auto* profile =
      app.add_subcommand("profile", "token-expert affinity tables and Table-1 statistics of a trace");
  for (auto* command : {trace_fit, profile}) {
    command->add_option("trace", trace_file, "semsim trace (.semtrace or .semtrace.txt[.gz])")->required();
    command->add_option("--split", split, "held-out fraction of requests")->check(CLI::Range(0.01, 0.99));
    command->add_option("--seed", profile_seed, "seed of the split (and of the fit)")
        ->check(CLI::Range(0LL, 1LL << 62));
    command->add_option("--out", trace_out, "output folder")->required();
  }

  // Placement: run a policy on a routing profile; evaluate a placement file on a trace.
  semsim::PlaceOptions place_options;
  semsim::PlaceEvalOptions eval_options;
  semsim::PlaceBoundOptions bound_options;
  auto* place =
      app.add_subcommand("place", "run a placement policy on a routing profile; write a placement file");
  place->add_option("--policy", place_options.policy, "placement policy (semsim list policies)");
  place->add_option("--profile", place_options.profile, "routing profile folder (semsim profile)");
  place->add_option("--ep", place_options.ep, "devices (EP size)")->check(CLI::Range(1, 32768));
  place
      ->add_option("--devices-per-node", place_options.devices_per_node,
                   "devices per node (default: all in one)")
      ->check(CLI::Range(1, 32768));
  place->add_option("--model", place_options.model, "model preset: its expert groups (EPLB) and shape check");
  place->add_option("--param", place_options.params, "policy parameter key=value (repeatable)");
  place
      ->add_option("--lookback", place_options.lookback,
                   "inter-layer table: previous layers per key (default 2)")
      ->check(CLI::Range(1, 4));
  place
      ->add_option("--balance", place_options.balance,
                   "token load tolerance of the token table (default 1.10)")
      ->check(CLI::Range(1.0, 100.0));
  place->add_option("--out", place_options.out, "placement file to write (.gz: compressed)");
  // The evaluated requests and the bound's effort: the same options on `place eval` and `place bound`.
  auto add_evaluated_requests = [](CLI::App* command, semsim::EvaluatedRequests& requests,
                                   semsim::BoundEffort& effort) {
    command->add_option("--trace", requests.trace, "semsim trace whose requests are evaluated")->required();
    command
        ->add_option("--split", requests.split,
                     "evaluate only the requests `semsim profile --split F --seed S` held out")
        ->check(CLI::Range(0.01, 0.99));
    command->add_option("--seed", requests.seed, "seed of that split (default 1)")
        ->check(CLI::Range(0LL, 1LL << 62));
    command
        ->add_option("--balance", requests.balance,
                     "DP style: request token load per device within this x mean (default 1.10)")
        ->check(CLI::Range(1.0, 100.0));
    command
        ->add_option("--tp-batch", requests.tp_batch_tokens,
                     "TP style: tokens aligned to equal slices together (default 4096; 0: all at once)")
        ->check(CLI::Range(0, 1 << 30));
    command
        ->add_option("--bound-rounds", effort.triangle_rounds,
                     "triangle-cut rounds of the LAR upper bound (default 2; 0: looser, much faster)")
        ->check(CLI::Range(0, 20));
    command->add_option("--threads", effort.threads, "layers bounded in parallel (default: every core)")
        ->check(CLI::Range(1, 1024));
  };
  auto* place_eval =
      place->add_subcommand("eval", "LAR, imbalance, A2A bytes and LAR bounds of a placement file");
  place_eval->add_option("placement", eval_options.plan, "placement file (semsim place)")->required();
  add_evaluated_requests(place_eval, eval_options.requests, eval_options.effort);
  place_eval->add_flag("!--no-bound", eval_options.bound,
                       "skip the upper bound (semsim place bound gives it)");
  place_eval->add_flag("--json", eval_options.json, "print one JSON object instead of the table");
  auto* place_bound = place->add_subcommand(
      "bound", "upper bounds on the LAR any placement on --ep devices reaches on a trace's requests");
  add_evaluated_requests(place_bound, bound_options.requests, bound_options.effort);
  place_bound->add_option("--ep", bound_options.ep, "devices (EP size)")
      ->required()
      ->check(CLI::Range(1, 32768));
  place_bound->add_flag("--json", bound_options.json, "print one JSON object (with per-layer bounds)");

  // Every registered subcommand; anything else in first position is a typo worth naming.
  std::vector<std::string> commands;
  std::string command_list;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    command_list += (command_list.empty() ? "" : ", ") + sub->get_name();
  }
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::cerr << "error: unknown command '" << argv[1] << "'" << semsim::did_you_mean(argv[1], commands)
              << "; commands: " << command_list << " (see --help)\n";
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
    if (*run) return run_command(scenario_ref, out_dir, overrides, seed, timeline, timeline_steps);
    if (*check) return check_command(scenario_ref, overrides);
    if (*calibrate) return semsim::calibrate_command(calibrate_options);
    if (*merge) return merge_command(sweep_file, out_dir, shard_dirs);
    if (*plot) return semsim::run_plot_script(sweep_file, plot->remaining());
    if (*sweep) {
      if (sweep_file.empty())
        throw semsim::InputError("sweep: a sweep file is required (see semsim sweep --help)");
      return sweep_command(sweep_file, out_dir, jobs, shard, retry_failed, dry_run);
    }
    if (*trace_import) return semsim::trace_import_command(trace_format, trace_input, trace_model, trace_out);
    if (*trace_fit) return semsim::trace_fit_command(trace_file, split, profile_seed, trace_out);
    if (*trace_synth)
      return semsim::trace_synth_command(scenario_ref, overrides, synth_requests, synth_first, trace_out);
    if (*profile) return semsim::profile_command(trace_file, split, profile_seed, trace_out);
    if (*place_eval) return semsim::place_eval_command(eval_options);
    if (*place_bound) return semsim::place_bound_command(bound_options);
    if (*place) {
      for (const auto& [value, option] :
           {std::pair{place_options.policy.empty(), "--policy"},
            std::pair{place_options.profile.empty(), "--profile"}, std::pair{place_options.ep == 0, "--ep"},
            std::pair{place_options.out.empty(), "--out"}})
        if (value)
          throw semsim::InputError(std::string("place: ") + option +
                                   " is required (see semsim place --help)");
      return semsim::place_command(place_options);
    }
    return list_command(list_what);
  } catch (const semsim::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  }
}
