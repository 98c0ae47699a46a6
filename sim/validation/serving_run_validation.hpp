#pragma once
// Measured serving runs simulated: each row as its scenario (serving_run_scenario.hpp), loaded as
// any scenario is, run in a child process of its own (SimGrid: one engine per process), N at a
// time, and its mean TTFT and TPOT taken as bench_serving computes them (sim/serving_metrics.hpp).
// A row that cannot be expressed, whose scenario does not load (a key this semsim lacks, a layout it
// refuses) or whose run fails is `skipped` with the reason; none is dropped. Callable from code with
// the calibration profile to run the rows with (the engine fit runs rows under candidate profiles).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/progress.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/validation/measured_serving_runs.hpp"

namespace semsim {

// A row's simulation as its child process has it: one server's run, or a disaggregated run's pools.
struct RowRun {
  const MeasuredServingRun& run;
  const Scenario& scenario;
  const RunResult* server = nullptr;
  const DisaggregatedResult* pools = nullptr;
};

struct ValidationOptions {
  int jobs = 1;                // simulations at once
  std::string engine_profile;  // the rows' calibration profile (absolute path); empty: measured
  // "key.path=value" values set in every row's scenario (a what-if across the rows; `semsim run
  // --set`'s syntax): its written scenario has them, a row whose scenario refuses one is skipped.
  std::vector<std::string> overrides;
  ProgressCallback progress;  // rows done of the rows to run
  // Run in each row's child after its simulation, to keep more of the run than its means (the engine
  // fit's step tables): its text lands in SimulatedRow::details.
  std::function<std::string(const RowRun&)> details;
};

struct SimulatedRow {
  MeasuredServingRun run;
  std::string scenario_yaml;               // the row's scenario; empty when it cannot be expressed
  std::optional<double> ttft_ms, tpot_ms;  // simulated means (tpot: none with one output token)
  std::string skipped;                     // why the row has no simulated values
  std::string details;                     // ValidationOptions::details' text, when it was given
};

// Where a row's scenario is written beside the results, relative to the output folder: load errors
// name it.
std::string row_scenario_file(const MeasuredServingRun& run);

// The rows in their order, whatever `jobs`.
std::vector<SimulatedRow> simulate_serving_runs(const std::vector<MeasuredServingRun>& runs,
                                                const ValidationOptions& options);

// The signed relative error of a simulated value: simulated / measured - 1.
double relative_error(double simulated, double measured);

}  // namespace semsim
