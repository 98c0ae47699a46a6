// `semsim plot DIR`: runs scripts/plot-sweep, embedded in the executable so that it works from any
// folder, with Debian's /usr/bin/python3 (where python3-matplotlib is installed), or else the first
// python3 on PATH.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>

#include "models/input_error.hpp"
#include "sim/cli/child_process.hpp"
#include "sim/cli/commands.hpp"

namespace semsim {
namespace plot_script_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

namespace {

// The script's exit status; InputError when `sweep_dir` holds no points.csv.
int run_plot_script(const std::string& sweep_dir, const std::vector<std::string>& script_args) {
  if (!std::filesystem::exists(std::filesystem::path(sweep_dir) / "points.csv"))
    throw InputError(sweep_dir + ": no points.csv here (plot takes the --out folder of semsim sweep)");
  const auto& scripts = plot_script_data::embedded_files();
  const std::string script(std::find_if(scripts.begin(), scripts.end(), [](const auto& f) {
                             return f.first == "plot-sweep";
                           })->second);
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> args{python, "-c", script, sweep_dir};
  args.insert(args.end(), script_args.begin(), script_args.end());
  return ChildProcess::run_program(args).wait().shell_code();
}

}  // namespace

void add_plot_command(CommandLine& cli) {
  struct PlotOptions {
    std::string sweep_dir;
    CLI::App* command = nullptr;  // what is left on its command line goes to the script
  };
  auto options = std::make_shared<PlotOptions>();
  CLI::App* plot = cli.add("plot", "draw the figures of a sweep's output folder (PNG and SVG)", [options] {
    return run_plot_script(options->sweep_dir, options->command->remaining());
  });
  options->command = plot;
  plot->add_option("sweep_dir", options->sweep_dir, "the --out folder of semsim sweep")->required();
  plot->allow_extras();
  plot->footer(
      "Options of scripts/plot-sweep, passed on: --out DIR (default SWEEP_DIR/plots), --slo-metric COLUMN "
      "(e2e_s.p99), --slo-factor F (5), --rate-column COLUMN (workload.arrival.rate), --compare-rate R");
}

}  // namespace semsim
