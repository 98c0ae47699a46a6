// `semsim sweep` (every point of a sweep file, N at a time, resumably) and `semsim sweep merge` (the
// output folders of a sharded sweep combined).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "models/input_error.hpp"
#include "sim/cli/commands.hpp"
#include "sim/runs/sweep_runner.hpp"

namespace semsim {
namespace {

struct SweepCommandOptions {
  std::string file;
  std::string out_dir;  // sweep: default out/<sweep file name>
  int jobs = 0;         // 0: every core
  std::string shard;    // i/n
  bool retry_failed = false;
  bool force = false;
  bool dry_run = false;
  double point_timeout = 0;
  ProgressMode progress = ProgressMode::kAuto;
  std::vector<std::string> shard_dirs;  // merge
};

// The whole number in environment variable `name`, nothing when it is unset; InputError when malformed.
std::optional<long long> environment_integer(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  const auto value = parse_number(text);
  if (!value || *value != std::floor(*value) || *value < 0 || *value > 1e9)
    throw InputError(
        fmt::format("{}='{}': not a whole number (the sweep takes its shard from the Slurm array "
                    "task; --shard i/n overrides it)",
                    name, text));
  return static_cast<long long>(*value);
}

// --shard when given, else the Slurm array task's: task SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT,
// counted from SLURM_ARRAY_TASK_MIN (an array may start at 1), so that an array's script needs no
// --shard. An array with gaps (a step or a list of ids) has no such shard and is refused.
SweepShard sweep_shard(const std::string& option) {
  if (!option.empty()) return SweepShard::parse(option);
  const auto id = environment_integer("SLURM_ARRAY_TASK_ID");
  const auto count = environment_integer("SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return {};
  const long long first = environment_integer("SLURM_ARRAY_TASK_MIN").value_or(0);
  const long long last = environment_integer("SLURM_ARRAY_TASK_MAX").value_or(first + *count - 1);
  if (*count < 1 || *id < first || *id > last || last - first + 1 != *count)
    throw InputError(fmt::format(
        "SLURM_ARRAY_TASK_ID={} of SLURM_ARRAY_TASK_COUNT={} (ids {} to {}): not one of {} consecutive array "
        "task ids, so it names no shard; give --shard i/n",
        *id, *count, first, last, *count));
  SweepShard shard;
  shard.index = static_cast<int>(*id - first);
  shard.count = static_cast<int>(*count);
  std::cerr << fmt::format(
      "sweep: shard {}/{} from the Slurm array task (SLURM_ARRAY_TASK_ID={}, SLURM_ARRAY_TASK_COUNT={}); "
      "--shard overrides it\n",
      shard.index, shard.count, *id, *count);
  return shard;
}

int sweep_points(const SweepCommandOptions& o) {
  if (o.file.empty()) throw InputError("sweep: a sweep file is required (see semsim sweep --help)");
  SweepOptions options;
  options.shard = sweep_shard(o.shard);
  const Sweep sweep = load_sweep(o.file);
  if (o.dry_run) {
    std::cout << fmt::format("{}: {} points; point_id {}\n", o.file, sweep.points.size(),
                             fmt::join(sweep.columns, " "));
    for (const auto& p : sweep.points)
      if (options.shard.contains(p.index))
        std::cout << fmt::format("{} {}{}\n", p.id, fmt::join(p.labels, " "),
                                 p.error.empty() ? "" : " (invalid: " + p.error + ")");
    return 0;
  }
  options.out_dir = o.out_dir.empty() ? "out/" + std::filesystem::path(o.file).stem().string() : o.out_dir;
  options.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.retry_failed = o.retry_failed;
  options.force = o.force;
  options.point_timeout = o.point_timeout;
  options.progress = o.progress;
  const SweepOutcome done = run_sweep(sweep, options);
  const bool sharded = !o.shard.empty() || options.shard.count > 1;
  std::cout << fmt::format(
      "{} points{}: {} done before, {} ran, {} failed; results in {}/points.csv\n", done.points,
      sharded ? fmt::format(" in shard {}/{}", options.shard.index, options.shard.count) : "",
      done.already_done, done.ran, done.failed, options.out_dir);
  return 0;
}

int merge_shards(const SweepCommandOptions& o) {
  const Sweep sweep = load_sweep(o.file);
  const std::size_t merged = merge_sweep(sweep, o.out_dir, o.shard_dirs);
  std::cout << fmt::format("merged {} of {} points from {} shard folders into {}/points.csv\n", merged,
                           sweep.points.size(), o.shard_dirs.size(), o.out_dir);
  if (merged == sweep.points.size()) return 0;
  // The points found are merged, but the sweep is not whole: say so in the exit code too, so a
  // script (or the Slurm merge job) cannot take it for complete.
  std::cerr << fmt::format(
      "error: incomplete merge: {} of {} points are in no shard yet: run the missing shards again, then "
      "merge\n",
      sweep.points.size() - merged, sweep.points.size());
  return kIncompleteExitCode;
}

}  // namespace

void add_sweep_commands(CommandLine& cli) {
  auto options = std::make_shared<SweepCommandOptions>();
  CLI::App* sweep_command = cli.add("sweep", "simulate every point of a sweep file, N at a time, resumably",
                                    [options] { return sweep_points(*options); });
  // Not required here: `sweep merge` takes its own.
  sweep_command->add_option("sweep_file", options->file,
                            "sweep YAML file (base scenario, set, series, axes)");
  sweep_command->add_option("-j,--jobs", options->jobs, "simulations at once (default: all cores)")
      ->check(CLI::Range(1, 4096));
  sweep_command->add_option("--out", options->out_dir, "output folder (default: out/<sweep file name>)");
  sweep_command->add_option("--shard", options->shard,
                            "run only shard i of n (i/n, 0 <= i < n); default in a Slurm array task: "
                            "its task id of the array's task count");
  sweep_command->add_flag("--retry-failed", options->retry_failed, "run again the points recorded as failed");
  sweep_command->add_flag(
      "--force", options->force,
      "--out holds points this sweep does not have as recorded (a value edited, a point removed): remove "
      "those and keep the rest");
  sweep_command
      ->add_option("--point-timeout", options->point_timeout,
                   "wall-clock seconds a point may run; one still running then is killed and recorded as "
                   "failed (default: no limit)")
      ->check(real_range(1e-3, 1e9));
  sweep_command->add_flag("--dry-run", options->dry_run,
                          "check the sweep file and list its points (id, values) without running");
  add_progress_option(*sweep_command, options->progress);

  CLI::App* merge_command = cli.add(
      "merge", "combine the output folders of a sharded sweep", [options] { return merge_shards(*options); },
      sweep_command);
  merge_command->add_option("sweep_file", options->file, "the sweep YAML file the shards ran")->required();
  merge_command->add_option("shard_dirs", options->shard_dirs, "the shards' output folders")->required();
  merge_command->add_option("--out", options->out_dir, "output folder")->required();
}

}  // namespace semsim
