// `semsim run`: one scenario simulated in a child process, its outputs staged and committed.
#include <chrono>
#include <iostream>
#include <memory>

#include "sim/cli/commands.hpp"
#include "sim/cli/isolated_process.hpp"
#include "sim/cli/output_files.hpp"
#include "sim/cli/staged_run.hpp"
#include "sim/cli/timeline.hpp"
#include "sim/scenario.hpp"

namespace semsim {
namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out_dir;  // default: out/<scenario name>
  long long seed = -1;  // -1: the scenario's workload.seed
  TimelineOptions timeline;
  std::string timeline_steps;  // FIRST:COUNT
};

int run_scenario(RunOptions options) {
  const auto started = std::chrono::steady_clock::now();
  const Scenario scenario = load_scenario_file(options.scenario, options.overrides, options.seed);
  const std::string out_dir = options.out_dir.empty() ? "out/" + scenario.name : options.out_dir;
  if (!options.timeline_steps.empty())
    options.timeline.steps = parse_step_window(options.timeline_steps, "--timeline-steps");
  StagedRun staged(scenario, out_dir, options.timeline);
  auto summary = nlohmann::ordered_json::parse(run_isolated([&] { return staged.simulate_and_write(); }));
  summary["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  staged.commit(summary);
  std::cout << summary_text(summary) << "Outputs in " << out_dir << "/\n";
  if (!options.timeline.path.empty())
    std::cout << "Timeline in " << options.timeline.path << " (open it in ui.perfetto.dev)\n";
  return 0;
}

}  // namespace

void add_run_command(CommandLine& cli) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = cli.add("run", "simulate a scenario and write summary.json, requests.csv, steps.csv",
                          [options] { return run_scenario(*options); });
  add_scenario_arguments(*run, options->scenario, options->overrides);
  run->add_option("--out", options->out_dir, "output folder (default: out/<scenario name>)");
  run->add_option("--seed", options->seed, "workload seed (replaces workload.seed)")
      ->check(CLI::Range(0LL, 1LL << 62));
  auto* timeline = run->add_option("--timeline", options->timeline.path,
                                   "also write a Chrome/Perfetto trace-event JSON of a window of steps");
  run->add_option("--timeline-steps", options->timeline_steps,
                  "the timeline's steps, FIRST:COUNT (default 0:10)")
      ->needs(timeline);
  run->add_option("--timeline-requests", options->timeline.max_requests,
                  "request lifetimes shown at most (default 200)")
      ->check(CLI::Range(0, 1000000))
      ->needs(timeline);
}

}  // namespace semsim
