// `semsim validate serving-runs CSV --out DIR`: every measured serving run of the file simulated and
// compared (sim/validation/), the figure drawn by the embedded scripts/plot-validation.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/plot_scripts.hpp"
#include "sim/scenario_overrides.hpp"
#include "sim/validation/validation_report.hpp"

namespace semsim {
namespace {

struct ServingRunsOptions {
  std::string runs_csv;
  std::string out_dir;
  std::string only;  // a regular expression searched in each row's id
  int jobs = 0;      // 0: every core
  std::string engine_profile;
  std::vector<std::string> overrides;  // --set, in every row's scenario
  ProgressMode progress = ProgressMode::kAuto;
};

int validate_serving_runs(const ServingRunsOptions& o) {
  const std::vector<MeasuredServingRun> runs = rows_matching(read_measured_serving_runs(o.runs_csv), o.only);
  std::vector<std::string> inputs{o.runs_csv};
  if (!o.engine_profile.empty()) inputs.push_back(o.engine_profile);
  OutputStaging staging(inputs);  // the folder checked and made before the rows run
  staging.folder("--out", o.out_dir, validation_folder_contents());
  ValidationOptions options;
  for (const std::string& assignment : o.overrides) parse_override(assignment, "--set");  // malformed: exit 2
  options.overrides = o.overrides;
  options.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!o.engine_profile.empty()) {
    if (!is_file(o.engine_profile))
      throw InputError(fmt::format("--engine-profile '{}': no such file", o.engine_profile));
    options.engine_profile = std::filesystem::absolute(o.engine_profile).lexically_normal().string();
  }
  ProgressLine progress("validate", o.progress);
  options.progress = progress.callback();
  const std::vector<SimulatedRow> rows = simulate_serving_runs(runs, options);
  progress.finish();
  write_validation_outputs(staging, o.out_dir, rows, o.runs_csv);
  const auto skipped =
      std::count_if(rows.begin(), rows.end(), [](const SimulatedRow& r) { return !r.skipped.empty(); });
  const std::filesystem::path out(o.out_dir);
  std::cout << fmt::format("{} rows: {} simulated, {} skipped; {} and {}\n", rows.size(),
                           rows.size() - static_cast<std::size_t>(skipped), skipped,
                           (out / "rows.csv").string(), (out / "summary.md").string());
  const int plotted =
      run_plot_script("plot-validation", {(out / "rows.csv").string(), (out / "validation.png").string()});
  if (plotted != 0) {
    std::cerr << "validate: the figure was not drawn (scripts/plot-validation needs python3-matplotlib)\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_validate_commands(CommandLine& cli) {
  CLI::App* validate = cli.add_group("validate", "simulate measured runs and compare: serving-runs");
  auto options = std::make_shared<ServingRunsOptions>();
  CLI::App* serving_runs = cli.add(
      "serving-runs",
      "simulate every measured serving run of a CSV (aiconfigurator's silicon samples): rows.csv, "
      "summary.md, validation.png",
      [options] { return validate_serving_runs(*options); }, validate);
  serving_runs
      ->add_option("runs_csv", options->runs_csv, "the measured runs (../shared/serving-runs/README.md)")
      ->required();
  serving_runs->add_option("--out", options->out_dir, "output folder")->required();
  serving_runs->add_option("--only", options->only, "only the rows whose id matches this regular expression");
  serving_runs->add_option("--set", options->overrides,
                           "set a value in every row's scenario: key.path=value (repeatable; a what-if "
                           "across the rows, written into each row's scenario)");
  serving_runs->add_option("-j,--jobs", options->jobs, "simulations at once (default: every core)")
      ->check(CLI::Range(1, 4096));
  serving_runs->add_option("--engine-profile", options->engine_profile,
                           "calibration profile to run the rows with (its engine: section the engine's "
                           "host costs; default: the device's measured profile)");
  add_progress_option(*serving_runs, options->progress);
}

}  // namespace semsim
