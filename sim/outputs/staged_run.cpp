#include "sim/outputs/staged_run.hpp"

#include "sim/run_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <sstream>

#include "models/input_error.hpp"
#include "sim/outputs/bench_serving_json.hpp"
#include "sim/outputs/deployment_summary.hpp"
#include "sim/outputs/disaggregated_summary.hpp"
#include "sim/outputs/run_csvs.hpp"
#include "sim/outputs/summary_json.hpp"
#include "sim/outputs/version.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"
#include "sim/step_exporter.hpp"

namespace semsim {
namespace {

// What `semsim run` writes into --out.
bool is_run_file(const std::string& file_name) {
  static const char* const kRunFiles[] = {
      "summary.json", "scenario.resolved.yaml", "requests.csv",       "steps.csv",
      "layers.csv",   "prefill_steps.csv",      "prefill_layers.csv", "kv_transfers.csv"};
  return std::find(std::begin(kRunFiles), std::end(kRunFiles), file_name) != std::end(kRunFiles);
}

double seconds_since(std::chrono::steady_clock::time_point started) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

StagedRun::StagedRun(const Scenario& scenario, const std::string& out_dir, TimelineOptions timeline,
                     BenchServingOptions bench, StepExportOptions exported, std::vector<std::string> inputs)
    : scenario_(scenario),
      staging_(std::move(inputs)),
      timeline_(std::move(timeline)),
      goodput_(bench.goodput),
      export_(std::move(exported)) {
  // The files outside the folder first: a bad one is found before the folder is made.
  if (!timeline_.path.empty()) timeline_json_ = staging_.staged_at("--timeline", timeline_.path);
  if (!bench.result_json.empty()) result_json_ = staging_.staged_at("--result-json", bench.result_json);
  if (!export_.path.empty()) export_file_ = staging_.staged_at("--export-steps", export_.path);
  staging_.folder("--out", out_dir, {is_run_file, {}});
  auto staged_if = [&](bool written, const char* name) { return written ? staging_.staged(name) : ""; };
  requests_csv_ = staged_if(scenario.write_requests_csv, "requests.csv");
  steps_csv_ = staged_if(scenario.write_steps_csv, "steps.csv");
  layers_csv_ = staged_if(scenario.write_layers_csv, "layers.csv");
  // One disaggregated server's pools (a deployment of disaggregated instances writes its decode pools'
  // steps and layers, instance by instance, as a deployment does).
  const bool pools = scenario.disaggregation && !scenario.deployment;
  prefill_steps_csv_ = staged_if(pools && scenario.write_steps_csv, "prefill_steps.csv");
  prefill_layers_csv_ = staged_if(pools && scenario.write_layers_csv, "prefill_layers.csv");
  kv_transfers_csv_ = staged_if(pools, "kv_transfers.csv");
  summary_json_ = staging_.staged("summary.json");
  resolved_scenario_ = staging_.staged("scenario.resolved.yaml");
}

std::string StagedRun::simulate_disaggregated_and_write(const ServingProgress& progress) const {
  const auto started = std::chrono::steady_clock::now();
  const DisaggregatedPlan plan = build_disaggregated_run(scenario_);
  const DisaggregatedResult run = simulate_disaggregated(scenario_, plan, progress);
  const double simulation_seconds = seconds_since(started);
  write_run_csvs(run.decode);
  if (!prefill_steps_csv_.empty()) write_steps_csv(prefill_steps_csv_, run.prefill);
  if (!prefill_layers_csv_.empty()) write_layers_csv(prefill_layers_csv_, run.prefill);
  write_kv_transfers_csv(kv_transfers_csv_, run);
  const RunResult requests = end_to_end(run);
  if (!result_json_.empty())
    write_text_file(result_json_,
                    bench_serving_json(scenario_, requests, summarize(requests, goodput_)).dump() + "\n");
  nlohmann::ordered_json summary = disaggregated_summary_json(scenario_, plan, run, goodput_);
  summary["wall_seconds"] = simulation_seconds;
  return summary.dump();
}

std::string StagedRun::simulate_deployment_and_write(const ServingProgress& progress) const {
  const auto started = std::chrono::steady_clock::now();
  const DeploymentPlan plan = build_deployment_run(scenario_);
  const DeploymentResult run = simulate_deployment(scenario_, plan, progress);
  const double simulation_seconds = seconds_since(started);
  const RunResult merged = merged_deployment(run);
  write_run_csvs(merged);
  if (!result_json_.empty())
    write_text_file(result_json_,
                    bench_serving_json(scenario_, merged, summarize(merged, goodput_)).dump() + "\n");
  // A disaggregated instance's requests end in its decode pool: the summary's keys are that pool's.
  nlohmann::ordered_json summary = deployment_summary_json(
      scenario_, plan.decode.empty() ? plan.instances.front().memory : plan.decode.front().memory, run,
      goodput_);
  summary["wall_seconds"] = simulation_seconds;
  return summary.dump();
}

std::string StagedRun::simulate_and_write(const ServingProgress& progress) const {
  if (scenario_.deployment) return simulate_deployment_and_write(progress);
  if (scenario_.disaggregation) return simulate_disaggregated_and_write(progress);
  const auto started = std::chrono::steady_clock::now();
  const RunPlan plan = build_run(scenario_);
  const RunResult run = simulate(scenario_, plan, timeline_json_.empty() ? StepWindow{} : timeline_.steps,
                                 progress, export_file_.empty() ? StepWindow{} : export_.steps);
  if (!timeline_json_.empty()) check_window_recorded(timeline_.steps, run);
  if (!export_file_.empty()) {
    if (run.exported_steps.empty())
      throw InputError(fmt::format("--steps {}:{}: the run has {} steps", export_.steps.first,
                                   export_.steps.count, run.steps.size()));
    StepExport data = step_export_header(scenario_, export_.steps);
    data.steps = run.exported_steps;
    std::ostringstream text;
    write_step_export(text, data);
    write_text_file(export_file_, text.str());
  }
  const double simulation_seconds = seconds_since(started);
  write_run_csvs(run);
  if (!timeline_json_.empty()) write_text_file(timeline_json_, timeline_json(run, timeline_).dump() + "\n");
  const Summary metrics = summarize(run, goodput_);
  // One line, as SGLang appends its results to a JSONL file and vLLM writes one JSON object.
  if (!result_json_.empty())
    write_text_file(result_json_, bench_serving_json(scenario_, run, metrics).dump() + "\n");
  nlohmann::ordered_json summary = summary_json(scenario_, plan.memory, metrics);
  summary["wall_seconds"] = simulation_seconds;
  return summary.dump();
}

void StagedRun::write_run_csvs(const RunResult& run) const {
  if (!requests_csv_.empty()) write_requests_csv(requests_csv_, run);
  if (!steps_csv_.empty()) write_steps_csv(steps_csv_, run);
  if (!layers_csv_.empty()) write_layers_csv(layers_csv_, run);
}

void StagedRun::commit(const nlohmann::ordered_json& summary) {
  write_text_file(summary_json_, summary.dump(2) + "\n");
  write_text_file(
      resolved_scenario_,
      fmt::format(
          "# The scenario of this run as semsim {} ran it, from {}: every --set and the seed\n"
          "# applied, relative file paths made absolute. `semsim run` of this file runs it again.\n{}",
          semsim_version(), scenario_.file, resolved_scenario_yaml(scenario_)));
  staging_.commit();
}

}  // namespace semsim
