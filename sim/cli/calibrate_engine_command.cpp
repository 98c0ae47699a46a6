// `semsim calibrate engine --runs CSV --device PRESET --out PROFILE.yaml`: the device's engine costs
// fitted to its measured serving runs (sim/validation/engine_calibration.hpp), the kernels' timings
// left as measured.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/interruption.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/runs/progress.hpp"
#include "sim/validation/engine_calibration.hpp"

namespace semsim {
namespace {

struct EngineCommand {
  std::string runs_csv;
  std::string device;
  std::string out;
  std::string only;  // a regular expression searched in each row's id
  int jobs = 0;      // 0: every core
  ProgressMode progress = ProgressMode::kAuto;
};

int calibrate_engine_command(const EngineCommand& c) {
  const auto started = std::chrono::steady_clock::now();
  EngineCalibrationOptions options;
  options.device = device_option(c.device);
  options.runs_csv = c.runs_csv;
  options.out = c.out;
  options.jobs = c.jobs > 0 ? c.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::filesystem::path out(c.out);
  if (out.extension() != ".yaml")
    throw InputError(fmt::format("--out '{}': a profile is a .yaml file", c.out));
  std::vector<MeasuredServingRun> runs = rows_matching(read_measured_serving_runs(c.runs_csv), c.only);
  const std::string system = system_of_device(options.device.name);
  std::erase_if(runs, [&](const MeasuredServingRun& run) { return run.system != system; });
  if (runs.empty())
    throw InputError(fmt::format("{}: no row of system '{}' (device {}){}", c.runs_csv, system,
                                 options.device.name, c.only.empty() ? "" : " matches --only"));
  // The outputs, checked and made before the rows run: the folder of the runs' tables (made with the
  // folders above it, which a failure removes again when empty), then the profile and engine-fit.md
  // beside it, staged and put in place together.
  OutputStaging staging({c.runs_csv});
  const std::string runs_folder = engine_runs_folder(c.out);
  const bool new_runs_folder = !path_exists(runs_folder);
  staging.folder("--out", runs_folder, {[](const std::string&) { return false; }, {"tables", "folds"}});
  // A runs folder this calibration made holds only its tables: a failure or an interruption removes it.
  std::optional<RemovedOnInterruption> made_here;
  if (new_runs_folder) made_here.emplace(runs_folder, RemovedOnInterruption::Kind::kTree);
  const std::string report = (out.parent_path() / "engine-fit.md").string();
  options.profile_file = staging.staged_at("--out", c.out);
  options.report_file = staging.staged_at("--out", report);
  ProgressLine progress("calibrate engine", c.progress);
  options.progress = progress.callback();
  EngineCalibration calibration;
  try {
    calibration = calibrate_engine(runs, options);
  } catch (...) {
    std::error_code ignored;
    if (new_runs_folder) std::filesystem::remove_all(runs_folder, ignored);
    throw;
  }
  progress.finish();
  staging.commit();
  std::cout << engine_fit_markdown(calibration, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format("\n{} rows in {:.0f} s; wrote {} and {}\n", runs.size(), seconds, c.out, report);
  return 0;
}

}  // namespace

void add_calibrate_engine_command(CommandLine& cli, CLI::App* calibrate) {
  auto c = std::make_shared<EngineCommand>();
  CLI::App* command = cli.add(
      "engine",
      "fit the serving engine's host costs (a profile's engine: section) to measured serving runs, "
      "leaving each configuration out in turn",
      [c] { return calibrate_engine_command(*c); }, calibrate);
  command->add_option("--runs", c->runs_csv, "the measured runs (../shared/serving-runs/README.md)")
      ->required();
  command
      ->add_option("--device", c->device, "device preset; its rows (system h100_sxm for h100-sxm) are fitted")
      ->required();
  command->add_option("--out", c->out, "profile YAML to write: the device's measured profile, engine: fitted")
      ->required();
  command->add_option("--only", c->only, "only the rows whose id matches this regular expression");
  command->add_option("-j,--jobs", c->jobs, "simulations at once (default: every core)")
      ->check(CLI::Range(1, 4096));
  add_progress_option(*command, c->progress);
}

}  // namespace semsim
