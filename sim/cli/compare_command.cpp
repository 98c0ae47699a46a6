// `semsim compare A B...`: run folders (`semsim run --out`) or sweep folders (`semsim sweep --out`)
// side by side, the first the baseline, with what bounds each run (sim/outputs/comparison.hpp). Every
// folder is read and checked before anything is written.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/comparison.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/outputs/points_csv.hpp"
#include "sim/outputs/summary_json.hpp"
#include "sim/runs/sweep_points_csv.hpp"

namespace semsim {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct CompareOptions {
  std::vector<std::string> folders;
  std::string json_file;
  std::vector<std::string> metrics;  // empty: every one for runs, the headline ones for sweeps
  bool all_points = false;
};

// Whether `folder` holds a sweep's outputs (points.csv) or a run's (summary.json).
bool is_sweep_folder(const std::string& folder) {
  if (!fs::is_directory(folder)) throw InputError(folder + ": no such folder");
  if (fs::exists(fs::path(folder) / "points.csv")) return true;
  if (fs::exists(fs::path(folder) / "summary.json")) return false;
  throw InputError(folder +
                   ": not a semsim output folder: it holds neither summary.json (what `semsim run --out` "
                   "writes) nor points.csv (what `semsim sweep --out` writes)");
}

FlatSummary read_run_summary(const std::string& folder) {
  const std::string path = (fs::path(folder) / "summary.json").string();
  Json summary;
  try {
    summary = Json::parse(read_text_file(path));
  } catch (const Json::exception& e) {
    throw InputError(path + ": not valid JSON (" + e.what() + ")");
  }
  for (const char* key : {"simulated_seconds", "steps", "phase_share"})
    if (!summary.is_object() || !summary.contains(key))
      throw InputError(fmt::format("{}: not a semsim run summary: no '{}'", path, key));
  return flatten_summary(summary);
}

SweepResults read_sweep(const std::string& folder) {
  const std::string path = (fs::path(folder) / "points.csv").string();
  const PointsRows rows = read_points_csv(path);
  const std::optional<PointsColumns> columns = points_columns(rows.header);
  if (!columns)
    throw InputError(path +
                     ":1: not a semsim sweep's points.csv: expected the header point_id,status, the sweep's "
                     "columns, the summary metrics (from 'scenario'), error");
  SweepResults sweep;
  sweep.label_columns = columns->sweep_columns;
  sweep.torn_rows = rows.torn;
  const std::size_t labels = columns->sweep_columns.size();
  for (const std::string& row : rows.rows) {  // whole rows, of the header's width (read_points_csv)
    const std::vector<std::string> fields = split_csv_line(row);
    SweepPointResult point;
    point.labels.assign(fields.begin() + 2, fields.begin() + 2 + static_cast<std::ptrdiff_t>(labels));
    point.ok = fields[1] == "ok";
    point.error = fields.back();
    if (point.ok)
      for (std::size_t m = 0; m < columns->metrics.size(); ++m)
        point.summary.emplace_back(columns->metrics[m], metric_value(fields[2 + labels + m]));
    sweep.points.push_back(std::move(point));
  }
  return sweep;
}

Comparison compare_folders(const std::vector<std::string>& folders) {
  const bool sweeps = is_sweep_folder(folders.front());
  for (const std::string& folder : folders)
    if (is_sweep_folder(folder) != sweeps)
      throw InputError(fmt::format(
          "compare: {} is a {} folder but {} a {} folder: compare runs with runs, sweeps with sweeps",
          folders.front(), sweeps ? "sweep" : "run", folder, sweeps ? "run" : "sweep"));
  if (sweeps) {
    std::vector<SweepResults> results;
    for (const std::string& folder : folders) results.push_back(read_sweep(folder));
    return compare_sweeps(folders, results);
  }
  std::vector<FlatSummary> summaries;
  for (const std::string& folder : folders) summaries.push_back(read_run_summary(folder));
  return compare_runs(folders, summaries);
}

int compare(const CompareOptions& options) {
  OutputStaging staging(options.folders);
  const std::string json_file =
      options.json_file.empty() ? "" : staging.staged_at("--json", options.json_file);
  Comparison comparison = compare_folders(options.folders);
  const bool every_metric = options.metrics == std::vector<std::string>{"all"};
  if (!options.metrics.empty() && !every_metric) keep_metrics(comparison, options.metrics);
  if (!json_file.empty()) {
    write_text_file(json_file, comparison_json(comparison).dump(2) + "\n");
    staging.commit();
  }
  // The JSON holds every metric unless --metrics chose; a sweep's text, the headline ones.
  const std::vector<std::string> headline = headline_metrics(comparison);
  if (options.metrics.empty() && comparison.sweeps && !options.all_points && !headline.empty())
    keep_metrics(comparison, headline);
  std::cout << comparison_text(comparison, options.all_points);
  return 0;
}

}  // namespace

void add_compare_command(CommandLine& cli) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = cli.add("compare",
                              "run folders or sweep folders side by side (the first the baseline): every "
                              "summary metric with its delta, and what bounds each run",
                              [options] { return compare(*options); });
  command
      ->add_option("folders", options->folders,
                   "output folders of semsim run --out, or of semsim sweep --out")
      ->required()
      ->expected(2, -1);
  command->add_option("--json", options->json_file, "also write the comparison as JSON to this file");
  command
      ->add_option(
          "--metrics", options->metrics,
          "the metrics to compare, summary.json key paths (e.g. throughput_tok_s.output,ttft_s.p99), "
          "or all; default: every one for runs, the headline ones for sweeps")
      ->delimiter(',');
  command->add_flag("--all-points", options->all_points,
                    "sweeps: every point's table (with every metric unless --metrics) instead of a summary "
                    "per series and the points that differ most");
}

}  // namespace semsim
