#pragma once
// One simulation with its output files, staged in the output folder: the child process simulates
// and writes the CSV files, then the parent writes summary.json and renames everything into place,
// so the folder never holds a partial run (see OutputStaging).
#include <nlohmann/json.hpp>
#include <string>

#include "sim/dp_serving_loop.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/outputs/timeline.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {

// What `semsim run` adds to a run's outputs: per-request goodput SLOs (summary.json's
// request_goodput) and a bench_serving result JSON file.
struct BenchServingOptions {
  GoodputSlos goodput;
  std::string result_json;  // "" for none
};

// `semsim run --export-steps FILE --steps FIRST:COUNT`: the work of a window of steps
// (sim/step_exporter.hpp).
struct StepExportOptions {
  std::string path;  // "" for none
  StepWindow steps{0, kDefaultTimelineSteps, std::nullopt};
};

class StagedRun {
 public:
  // With a timeline path, the trace of its window of steps is staged beside that path; so are the
  // result JSON file and the step export. Every output is checked here, before the simulation:
  // none may be another, or one of `inputs` (the files the scenario was read from).
  StagedRun(const Scenario& scenario, const std::string& out_dir, TimelineOptions timeline = {},
            BenchServingOptions bench = {}, StepExportOptions exported = {},
            std::vector<std::string> inputs = {});

  // For the child process (SimGrid allows one Engine per process): builds the run (placement
  // included), simulates, writes the CSV outputs the scenario asks for, and returns summary.json's
  // text with wall_seconds set to the time that took (what a sweep's per-point summary.json keeps).
  // `progress` hears how far the serving loop got.
  std::string simulate_and_write(const ServingProgress& progress = {}) const;
  std::string simulate_disaggregated_and_write(const ServingProgress& progress) const;
  std::string simulate_deployment_and_write(const ServingProgress& progress) const;

  // For the parent: writes `summary` as summary.json and renames every output into the folder.
  void commit(const nlohmann::ordered_json& summary);

 private:
  // The request, step and layer CSVs the scenario asks for, of `run`.
  void write_run_csvs(const RunResult& run) const;

  const Scenario& scenario_;
  OutputStaging staging_;
  std::string requests_csv_;  // "" when the scenario turns the file off
  std::string steps_csv_;
  std::string layers_csv_;
  // A disaggregated run's: the decode pool's steps and layers go to steps.csv and layers.csv.
  std::string prefill_steps_csv_, prefill_layers_csv_, kv_transfers_csv_;
  std::string summary_json_;
  std::string resolved_scenario_;
  TimelineOptions timeline_;
  std::string timeline_json_;
  GoodputSlos goodput_;
  std::string result_json_;  // the staged path; "" for none
  StepExportOptions export_;
  std::string export_file_;  // the staged path; "" for none
};

}  // namespace semsim
