#pragma once
// `semsim calibrate engine`: a device's engine costs (calibrate/format/engine_costs.hpp) fitted to its
// measured serving runs. Each row runs once (serving_run_validation.hpp) with the measured profile's
// costs; its fixed sequence of steps is re-timed for candidate costs (calibrate/fit/engine_fit.hpp);
// configurations (model x mode x layout) are left out one at a time, fitted on the others and
// simulated again with that fold's costs. Method: calibrate/README.md, "Fitting the engine costs".
#include <optional>
#include <string>
#include <vector>

#include "calibrate/fit/engine_fit.hpp"
#include "models/device.hpp"
#include "sim/validation/serving_run_validation.hpp"

namespace semsim {

// The row's configuration: model, mode and layout without worker counts, e.g.
// "Qwen/Qwen3-32B agg tp2", "deepseek-ai/DeepSeek-R1 disagg prefill tp16 / decode tp16".
std::string configuration_of(const MeasuredServingRun& run);

// The CSV's `system` of a device preset: h100-sxm <-> h100_sxm.
std::string system_of_device(const std::string& device);

// Leave-one-configuration-out: per configuration, the indices (into `configurations`) of the rows it
// holds out and of those it trains on. In the order the configurations first appear.
struct EngineFold {
  std::string configuration;
  std::vector<std::size_t> held_out, training;
};
std::vector<EngineFold> leave_one_configuration_out(const std::vector<std::string>& configurations);

// In a row's child: its run as a re-timing table (JSON text; the measured means are the parent's to
// set). When `tables_dir` is given, writes the run's steps.csv and requests.csv (a disaggregated
// run's prefill_steps.csv too) into tables_dir/ID/.
std::string retiming_table_json(const RowRun& row, const std::string& tables_dir);
RetimingTable retiming_table_from_json(const std::string& text);

struct EngineCalibrationOptions {
  Device device;
  std::string runs_csv;  // named in the report
  std::string out;       // PROFILE.yaml, as the report names it
  // Where the profile and engine-fit.md are written (the command's staged files of PROFILE.yaml and
  // the engine-fit.md beside it).
  std::string profile_file, report_file;
  int jobs = 1;  // simulations at once
  ProgressCallback progress;
};

// The folder of a profile's runs' tables and fold profiles: <profile stem>-runs/ beside it.
std::string engine_runs_folder(const std::string& profile);

// A row of the report.
struct CalibratedRow {
  MeasuredServingRun run;
  std::string configuration;
  std::string skipped;                                         // why it is not in the fit
  double default_ttft_ms = 0, default_tpot_ms = 0;             // simulated with the measured profile's costs
  std::optional<double> retimed_ttft_ms, retimed_tpot_ms;      // its fold's costs, re-timed
  std::optional<double> simulated_ttft_ms, simulated_tpot_ms;  // its fold's costs, simulated again
};

struct EngineCalibration {
  EngineCosts start;              // the measured profile's costs: the simulations' and the search's start
  EngineFit all;                  // on every row
  std::vector<EngineFold> folds;  // indices into rows
  std::vector<std::optional<EngineFit>> fold_fits;  // none: nothing left to train on
  std::vector<CalibratedRow> rows;
};

// Runs the rows (the device's, already filtered), fits, evaluates the folds; writes the profile (the
// device's measured profile with the fitted `engine:`) and its report to options.profile_file and
// options.report_file, and the runs' tables into engine_runs_folder(options.out).
EngineCalibration calibrate_engine(const std::vector<MeasuredServingRun>& runs,
                                   const EngineCalibrationOptions& options);

// The report: fitted costs (all rows, per fold) and what they mean, bounds hit, per configuration the
// held-out median and p90 |error|, per row measured / re-timed / simulated.
std::string engine_fit_markdown(const EngineCalibration& calibration,
                                const EngineCalibrationOptions& options);

}  // namespace semsim
