// `semsim plot DIR`: runs the embedded scripts/plot-sweep (sim/cli/plot_scripts.hpp).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "models/input_error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/plot_scripts.hpp"
#include "sim/runs/child_process.hpp"

namespace semsim {
namespace plot_script_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

int run_plot_script(std::string_view script, const std::vector<std::string>& args) {
  const auto& scripts = plot_script_data::embedded_files();
  const auto embedded =
      std::find_if(scripts.begin(), scripts.end(), [&](const auto& f) { return f.first == script; });
  if (embedded == scripts.end()) throw std::logic_error("no embedded plot script " + std::string(script));
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> command{python, "-c", std::string(embedded->second)};
  command.insert(command.end(), args.begin(), args.end());
  return ChildProcess::run_program(command).wait().shell_code();
}

namespace {

// The script's exit status; InputError when `sweep_dir` holds no points.csv.
int plot_sweep(const std::string& sweep_dir, const std::vector<std::string>& script_args) {
  if (!std::filesystem::exists(std::filesystem::path(sweep_dir) / "points.csv"))
    throw InputError(sweep_dir + ": no points.csv here (plot takes the --out folder of semsim sweep)");
  std::vector<std::string> args{sweep_dir};
  args.insert(args.end(), script_args.begin(), script_args.end());
  return run_plot_script("plot-sweep", args);
}

}  // namespace

void add_plot_command(CommandLine& cli) {
  struct PlotOptions {
    std::string sweep_dir;
    CLI::App* command = nullptr;  // what is left on its command line goes to the script
  };
  auto options = std::make_shared<PlotOptions>();
  CLI::App* plot = cli.add("plot", "draw the figures of a sweep's output folder (PNG and SVG)", [options] {
    return plot_sweep(options->sweep_dir, options->command->remaining());
  });
  options->command = plot;
  plot->add_option("sweep_dir", options->sweep_dir, "the --out folder of semsim sweep")->required();
  plot->allow_extras();
  plot->footer(
      "Options of scripts/plot-sweep, passed on: --out DIR (default SWEEP_DIR/plots), --slo-metric COLUMN "
      "(e2e_s.p99), --slo-factor F (5), --rate-column COLUMN (workload.arrival.rate), --compare-rate R");
}

}  // namespace semsim
