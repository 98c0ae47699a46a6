#include "sim/validation/serving_run_validation.hpp"

#include <poll.h>

#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <cerrno>
#include <deque>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "models/input_error.hpp"
#include "models/yaml_input.hpp"
#include "sim/outputs/disaggregated_summary.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_overrides.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"
#include "sim/validation/serving_run_scenario.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;

// In the child (loading a scenario unpacks its measured profile, so rows load in parallel too): the
// run's requests end to end (a disaggregated run's as its decode pool ends them), their mean TTFT
// and TPOT in milliseconds (null over no requests), and the caller's details of the run.
std::string simulate_means(const MeasuredServingRun& run, const std::string& yaml,
                           const ValidationOptions& options) {
  const Scenario scenario = load_scenario(yaml, row_scenario_file(run), "");
  std::optional<DisaggregatedResult> pools;
  std::optional<RunResult> server;
  if (scenario.disaggregation)
    pools = simulate_disaggregated(scenario, build_disaggregated_run(scenario));
  else
    server = simulate(scenario, build_run(scenario));
  const Summary summary = summarize(pools ? end_to_end(*pools) : *server);
  const auto mean_ms = [](const Distribution& d) { return d.count > 0 ? Json(d.mean * 1e3) : Json(); };
  Json means{{"ttft_ms", mean_ms(summary.ttft)}, {"tpot_ms", mean_ms(summary.tpot)}};
  if (options.details)
    means["details"] =
        options.details(RowRun{run, scenario, server ? &*server : nullptr, pools ? &*pools : nullptr});
  return means.dump();
}

std::optional<double> optional_number(const Json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

// The row's scenario with `overrides` set in it, as the file a rerun reads: its leading comment, a
// line naming the values set, then the document.
std::string with_overrides(const std::string& yaml, const std::vector<std::string>& overrides,
                           const std::string& file) {
  YAML::Node document = YAML::Load(yaml);
  std::string comments, set;
  std::istringstream lines(yaml);
  for (std::string line; std::getline(lines, line) && line.starts_with("#");) comments += line + "\n";
  for (const std::string& assignment : overrides) {
    apply_override(document, parse_override(assignment, file), file);
    set += (set.empty() ? "" : ", ") + assignment;
  }
  YamlInput::unmark_overrides(document);  // values of the file now, not of a --set
  YAML::Emitter out;
  out << document;
  return comments + "# with validate --set " + set + "\n" + out.c_str() + "\n";
}

struct RunningRow {
  std::size_t index;
  IsolatedProcess child;
};

// Waits for a running row to finish and records it.
void collect_one(std::vector<RunningRow>& running, std::vector<SimulatedRow>& rows) {
  std::vector<pollfd> fds;
  for (const RunningRow& r : running) fds.push_back({r.child.result_fd(), POLLIN, 0});
  while (::poll(fds.data(), fds.size(), -1) < 0)
    if (errno != EINTR) throw std::runtime_error("poll() failed");
  for (std::size_t i = 0; i < running.size(); ++i) {
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    RunningRow finished = std::move(running[i]);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    SimulatedRow& row = rows[finished.index];
    try {
      const Json means = Json::parse(finished.child.wait());
      row.ttft_ms = optional_number(means["ttft_ms"]);
      row.tpot_ms = optional_number(means["tpot_ms"]);
      if (means.contains("details")) row.details = means["details"].get<std::string>();
      if (!row.ttft_ms) row.skipped = "the run completed no request";
    } catch (const InputError& e) {
      row.skipped = one_line(e.what());
    } catch (const std::exception& e) {
      row.skipped = "the simulation failed: " + one_line(e.what());
    }
    return;
  }
}

}  // namespace

std::string row_scenario_file(const MeasuredServingRun& run) {
  return "scenarios/" + run.id + ".yaml";
}

double relative_error(double simulated, double measured) {
  return simulated / measured - 1;
}

std::vector<SimulatedRow> simulate_serving_runs(const std::vector<MeasuredServingRun>& runs,
                                                const ValidationOptions& options) {
  std::vector<SimulatedRow> rows;
  std::deque<std::size_t> queue;
  for (const MeasuredServingRun& run : runs) {
    SimulatedRow& row = rows.emplace_back();
    row.run = run;
    const RowScenario scenario = row_scenario(run, options.engine_profile);
    row.scenario_yaml = scenario.yaml;
    row.skipped = scenario.skipped;
    if (row.skipped.empty() && !options.overrides.empty()) {
      try {
        row.scenario_yaml = with_overrides(scenario.yaml, options.overrides, row_scenario_file(run));
      } catch (const InputError& e) {
        row.skipped = one_line(e.what());
      }
    }
    if (scenario.skipped.empty()) queue.push_back(rows.size() - 1);
  }
  ProgressCounter counter(options.progress, "row", static_cast<long long>(queue.size()));
  std::vector<RunningRow> running;
  const auto jobs = static_cast<std::size_t>(std::max(1, options.jobs));
  while (!queue.empty() || !running.empty()) {
    while (running.size() < jobs && !queue.empty()) {
      const std::size_t index = queue.front();
      queue.pop_front();
      const SimulatedRow& row = rows[index];
      running.push_back({index, IsolatedProcess::start([&row, &options] {
                           return simulate_means(row.run, row.scenario_yaml, options);
                         })});
    }
    collect_one(running, rows);
    counter.finished_one();
  }
  return rows;
}

}  // namespace semsim
