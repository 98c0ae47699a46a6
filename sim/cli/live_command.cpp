// `semsim live EXPORT --out DIR`: replays a step export's kernels on this machine's GPUs with
// semsim-live (calibrate/live/, built with CUDA); `semsim compare-live`: scores the simulator against
// such replays. No replay binary, or no GPU, is an InputError (exit 2) and leaves nothing behind.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "calibrate/replay/step_export.hpp"
#include "models/input_error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/plot_scripts.hpp"
#include "sim/outputs/live_comparison.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/runs/child_process.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

struct LiveOptions {
  std::string export_file;
  std::string out_dir;
  std::string binary;  // default: semsim-live beside semsim
  int rank = 0;
  int repeats = 5;
};

int replay(const LiveOptions& options) {
  const StepExport data = read_step_export(options.export_file);  // bad input stops here
  if (options.rank >= data.ranks)
    throw InputError(fmt::format("--rank {}: the export has {} ranks", options.rank, data.ranks));
  // The replay writes into a staging folder inside --out; its files are put in place once it has
  // finished, and a failure leaves --out as it was.
  OutputStaging staging({options.export_file});
  staging.folder("--out", options.out_dir,
                 {[](const std::string& name) { return name == "steps.csv" || name == "checks.csv"; }, {}});
  std::error_code ignored;
  const std::string binary =
      options.binary.empty()
          ? (fs::read_symlink("/proc/self/exe", ignored).parent_path() / "semsim-live").string()
          : options.binary;
  if (!fs::exists(binary))
    throw InputError("live: no replay binary " + binary +
                     ": this semsim was built without CUDA; build it with -DSEMSIM_WITH_CUDA=ON on a GPU "
                     "machine (scripts/live-device does), or pass --binary PATH");
  const fs::path staged = fs::absolute(staging.staged("steps.csv")).parent_path();
  staging.staged("checks.csv");
  const int code = ChildProcess::run_program({fs::absolute(binary).string(), options.export_file, "--out",
                                              staged.string(), "--rank", std::to_string(options.rank),
                                              "--repeats", std::to_string(options.repeats)})
                       .wait()
                       .shell_code();
  if (code == 3)
    throw InputError("live: no CUDA GPU on this machine (the replay found none); run it on a GPU machine");
  if (code == 2) throw InputError("live: the replay refused its input (see above)");
  if (code != 0)
    throw std::runtime_error(fmt::format("live: {} exited with {}; nothing was written", binary, code));
  staging.commit();
  std::cout << "Live results in " << options.out_dir << "/\n";
  return 0;
}

struct CompareLiveOptions {
  std::vector<std::string> pairs;  // EXPORT LIVE_DIR ...
  std::string out_dir;
};

int compare(const CompareLiveOptions& options) {
  if (options.pairs.size() % 2 != 0)
    throw InputError("compare-live: expected EXPORT LIVE_DIR pairs; got an odd number of paths");
  OutputStaging staging(options.pairs);  // the folder checked and made before the comparison
  staging.folder("--out", options.out_dir, live_comparison_folder_contents());
  std::vector<LiveRun> runs;
  for (std::size_t i = 0; i < options.pairs.size(); i += 2)
    runs.push_back({read_step_export(options.pairs[i]), options.pairs[i + 1]});
  const LiveComparison comparison = compare_live(runs);
  write_live_comparison(comparison, staging);
  std::cout << "phase      rows  median |err|  p90 |err|\n";
  for (const ErrorSummary& s : comparison.summary)
    std::cout << fmt::format("{:<10} {:>4}  {:>10.1f}%  {:>8.1f}%\n", s.phase, s.rows, 100 * s.median,
                             100 * s.p90);
  // The figures, by the embedded scripts/plot-live, as `semsim plot` draws a sweep's.
  const int code = run_plot_script("plot-live", {options.out_dir});
  if (code != 0) {
    std::cerr << "compare-live: the plots could not be drawn (scripts/plot-live exited with " << code
              << "); the tables are in " << options.out_dir << "/\n";
    return 1;
  }
  std::cout << "Comparison in " << options.out_dir << "/ (summary.md, plots/)\n";
  return 0;
}

}  // namespace

void add_live_commands(CommandLine& cli) {
  auto live = std::make_shared<LiveOptions>();
  CLI::App* replay_command =
      cli.add("live", "replay a step export's kernels on this machine's GPUs, timing each phase",
              [live] { return replay(*live); });
  replay_command->add_option("export", live->export_file, "a file `semsim run --export-steps` wrote")
      ->required();
  replay_command
      ->add_option("--out", live->out_dir,
                   "folder for steps.csv and checks.csv (new, empty, or an earlier replay's, replaced)")
      ->required();
  replay_command
      ->add_option("--rank", live->rank, "with one GPU, the rank whose compute phases run (default 0)")
      ->check(CLI::Range(0, 4095));
  replay_command
      ->add_option("--repeats", live->repeats, "timed trials per phase (default 5; the median is kept)")
      ->check(CLI::Range(1, 1000));
  replay_command->add_option("--binary", live->binary,
                             "the replay executable (default: semsim-live beside semsim)");

  auto compare_options = std::make_shared<CompareLiveOptions>();
  CLI::App* compare_command =
      cli.add("compare-live", "simulated vs live phase times of replayed exports: tables and plots",
              [compare_options] { return compare(*compare_options); });
  compare_command
      ->add_option("pairs", compare_options->pairs,
                   "EXPORT LIVE_DIR, one pair per request rate (the throughput curve has a point per pair)")
      ->required();
  compare_command->add_option("--out", compare_options->out_dir, "folder for the tables and plots/")
      ->required();
}

}  // namespace semsim
