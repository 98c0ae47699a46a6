// `semsim run`: one scenario simulated in a child process, its outputs staged and committed.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/console_summary.hpp"
#include "sim/outputs/staged_run.hpp"
#include "sim/outputs/timeline.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/runs/progress.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_checks.hpp"
#include "sim/step_exporter.hpp"

namespace semsim {
namespace {

struct RunOptions {
  ScenarioArguments scenario;
  std::string out_dir;  // default: out/<scenario name>
  long long seed = -1;  // -1: the scenario's workload.seed
  TimelineOptions timeline;
  std::string timeline_steps;        // FIRST:COUNT
  std::string timeline_at;           // SECONDS[:COUNT]
  std::vector<std::string> goodput;  // METRIC:MS
  std::string result_json;
  StepExportOptions exported;
  std::string export_steps;  // FIRST:COUNT
  ProgressMode progress = ProgressMode::kAuto;
};

// vLLM's --goodput: METRIC:MS pairs, METRIC one of ttft, tpot, e2el, MS a non-negative number.
GoodputSlos parse_goodput(const std::vector<std::string>& pairs) {
  const std::vector<std::string> metrics{"ttft", "tpot", "e2el"};
  const std::string expected = "expected METRIC:MS, METRIC one of ttft, tpot, e2el and MS milliseconds";
  GoodputSlos slos;
  for (const std::string& pair : pairs) {
    auto bad = [&](const std::string& why) {
      return InputError(fmt::format("--goodput '{}': {}; {}", pair, why, expected));
    };
    const std::size_t colon = pair.find(':');
    if (colon == std::string::npos || pair.find(':', colon + 1) != std::string::npos)
      throw bad("not one METRIC:MS pair");
    const std::string metric = pair.substr(0, colon), value = pair.substr(colon + 1);
    std::optional<double>* slo = metric == "ttft"   ? &slos.ttft_ms
                                 : metric == "tpot" ? &slos.tpot_ms
                                 : metric == "e2el" ? &slos.e2el_ms
                                                    : nullptr;
    if (slo == nullptr)
      throw bad(fmt::format("unknown metric '{}'{}", metric, did_you_mean(metric, metrics)));
    double ms = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() || !std::isfinite(ms))
      throw bad(fmt::format("'{}' is not a number of milliseconds", value));
    if (ms < 0) throw bad("an SLO is not negative");
    if (*slo) throw bad(fmt::format("{} is given twice", metric));
    *slo = ms;
  }
  return slos;
}

// In the simulating process: simulates with a progress line. The run ends once every request has
// completed or at serving.time_limit, whichever comes first, so its progress is the further of the
// two: completions keep pace with arrivals under a steady load (and are all there is to go by when
// requests arrive at once), and simulated time is exact when the limit ends the run.
std::string simulate_showing_progress(const StagedRun& staged, const Scenario& scenario, ProgressMode mode) {
  ProgressLine line("run", mode);
  if (!line.shown()) return staged.simulate_and_write();
  const double limit = scenario.serving.time_limit;
  double now = 0;
  std::size_t completed = 0, requests = 0;
  auto state = [&] {
    return fmt::format("{}/{} requests done, {:.2f} s simulated", completed, requests, now);
  };
  const std::string summary =
      staged.simulate_and_write([&](double simulated, std::size_t done, std::size_t all) {
        now = simulated, completed = done, requests = all;
        const double fraction = std::max(all > 0 ? static_cast<double>(done) / static_cast<double>(all) : 1.0,
                                         limit > 0 ? simulated / limit : 0.0);
        line.update("serving", fraction, state);
      });
  line.finish(state());
  return summary;
}

int run_scenario(RunOptions options) {
  const auto started = std::chrono::steady_clock::now();
  // Bad options stop the run before anything is loaded or written.
  BenchServingOptions bench{parse_goodput(options.goodput), options.result_json};
  const std::vector<std::string> scenario_file = options.scenario.scenario == "default"
                                                     ? std::vector<std::string>{}
                                                     : std::vector{options.scenario.scenario};
  if (!bench.result_json.empty()) check_output_file("--result-json", bench.result_json, scenario_file);
  if (!options.timeline.path.empty()) check_output_file("--timeline", options.timeline.path, scenario_file);
  if (!options.exported.path.empty())
    check_output_file("--export-steps", options.exported.path, scenario_file);
  const Scenario scenario = options.scenario.load(options.seed);
  for (const std::string& warning : idle_nodes_warnings(scenario))
    std::cerr << "warning: " << warning << "\n";
  if (scenario.disaggregation && !options.timeline.path.empty())
    throw InputError(
        fmt::format("--timeline: {} is disaggregated; a timeline records one server's steps, so "
                    "run one pool alone (serving.pool: prefill or decode) for its timeline",
                    scenario.file));
  if (scenario.deployment && (!options.timeline.path.empty() || !options.exported.path.empty()))
    throw InputError(
        fmt::format("{}: {} has {} instances; a timeline or a step export records one server's "
                    "steps, so run the scenario without its deployment for it",
                    options.timeline.path.empty() ? "--export-steps" : "--timeline", scenario.file,
                    scenario.deployment->instances));
  const std::string out_dir = options.out_dir.empty() ? "out/" + scenario.name : options.out_dir;
  if (!options.timeline_steps.empty())
    options.timeline.steps = parse_step_window(options.timeline_steps, "--timeline-steps");
  if (!options.timeline_at.empty()) {
    options.timeline.steps = parse_time_window(options.timeline_at, "--timeline-at");
    check_window_start(options.timeline.steps, scenario.serving.time_limit);
  }
  if (!options.exported.path.empty()) {
    check_exportable(scenario);
    if (!options.export_steps.empty())
      options.exported.steps = parse_step_window(options.export_steps, "--steps");
  }
  StagedRun staged(scenario, out_dir, options.timeline, bench, options.exported,
                   scenario_input_files(scenario));
  auto summary = nlohmann::ordered_json::parse(
      run_isolated([&] { return simulate_showing_progress(staged, scenario, options.progress); }));
  summary["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  staged.commit(summary);
  std::cout << summary_text(summary) << "Outputs in " << out_dir << "/\n";
  if (!options.timeline.path.empty())
    std::cout << "Timeline in " << options.timeline.path << " (open it in ui.perfetto.dev)\n";
  if (!options.result_json.empty()) std::cout << "bench_serving result in " << options.result_json << "\n";
  if (!options.exported.path.empty()) std::cout << "Step export in " << options.exported.path << "\n";
  return 0;
}

}  // namespace

void add_run_command(CommandLine& cli) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run = cli.add("run", "simulate a scenario and write summary.json, requests.csv, steps.csv",
                          [options] { return run_scenario(*options); });
  add_scenario_arguments(*run, options->scenario);
  run->add_option("--out", options->out_dir, "output folder (default: out/<scenario name>)");
  run->add_option("--seed", options->seed, "workload seed (replaces workload.seed)")
      ->check(CLI::Range(0LL, 1LL << 62));
  auto* timeline = run->add_option("--timeline", options->timeline.path,
                                   "also write a Chrome/Perfetto trace-event JSON of a window of steps");
  auto* steps = run->add_option("--timeline-steps", options->timeline_steps,
                                "the timeline's steps, FIRST:COUNT (default 0:10)")
                    ->needs(timeline);
  run->add_option("--timeline-at", options->timeline_at,
                  "the timeline's steps by time, SECONDS[:COUNT]: COUNT steps (default 10) from the first "
                  "that starts at or after SECONDS of simulated time")
      ->needs(timeline)
      ->excludes(steps);
  run->add_option("--timeline-requests", options->timeline.max_requests,
                  "request lifetimes shown at most (default 200)")
      ->check(CLI::Range(0, 1000000))
      ->needs(timeline);
  run->add_option(
         "--goodput", options->goodput,
         "per-request goodput SLOs, as vLLM's bench_serving: METRIC:MS ... with METRIC ttft, tpot or "
         "e2el (any subset); completed requests per second meeting every one")
      ->expected(1, 3);
  run->add_option("--result-json", options->result_json,
                  "also write the results as SGLang's / vLLM's bench_serving save them (one JSON line)");
  auto* exported = run->add_option("--export-steps", options->exported.path,
                                   "also write the work of a window of steps, per rank, with the simulated "
                                   "phase times (what `semsim live` replays; calibrate/live/README.md)");
  run->add_option("--steps", options->export_steps, "the export's steps, FIRST:COUNT (default 0:10)")
      ->needs(exported);
  add_progress_option(*run, options->progress);
}

}  // namespace semsim
