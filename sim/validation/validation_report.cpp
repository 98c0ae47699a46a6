#include "sim/validation/validation_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {
namespace fs = std::filesystem;
namespace {

std::string number(const std::optional<double>& value) {
  return value ? fmt::format("{:.6g}", *value) : "";
}

std::optional<double> error_of(const std::optional<double>& simulated, double measured) {
  if (!simulated) return std::nullopt;
  return relative_error(*simulated, measured);
}

struct Metric {
  const char* name;
  std::optional<double> SimulatedRow::*simulated;
  double MeasuredServingRun::*measured;
};
constexpr Metric kMetrics[] = {{"ttft", &SimulatedRow::ttft_ms, &MeasuredServingRun::ttft_ms},
                               {"tpot", &SimulatedRow::tpot_ms, &MeasuredServingRun::tpot_ms}};

constexpr const char* kOutputFiles[] = {"rows.csv", "summary.md", "validation.png"};
constexpr const char* kScenariosFolder = "scenarios";

void write_file(const fs::path& path, const std::string& text) {
  write_atomically(path.string(), [&](const std::string& temporary) { write_text_file(temporary, text); });
}

}  // namespace

std::string rows_csv(const std::vector<SimulatedRow>& rows) {
  std::string text = csv_line({"id", "model", "mode", "layout", "isl", "osl", "concurrency",
                               "measured_ttft_ms", "simulated_ttft_ms", "ttft_error", "measured_tpot_ms",
                               "simulated_tpot_ms", "tpot_error", "skipped"}) +
                     "\n";
  for (const SimulatedRow& row : rows) {
    const MeasuredServingRun& run = row.run;
    text += csv_line({run.id, run.model_path, run.mode, layout_label(run), std::to_string(run.isl),
                      std::to_string(run.osl), run.concurrency ? std::to_string(*run.concurrency) : "",
                      number(run.ttft_ms), number(row.ttft_ms), number(error_of(row.ttft_ms, run.ttft_ms)),
                      number(run.tpot_ms), number(row.tpot_ms), number(error_of(row.tpot_ms, run.tpot_ms)),
                      row.skipped}) +
            "\n";
  }
  return text;
}

std::string summary_markdown(const std::vector<SimulatedRow>& rows, const std::string& runs_csv) {
  std::size_t skipped = 0;
  // Per model x mode x metric, in the file's order of first appearance, then over every row.
  std::vector<std::tuple<std::string, std::string, const Metric*>> groups;
  std::map<std::tuple<std::string, std::string, const Metric*>, std::vector<double>> errors;
  std::map<std::tuple<std::string, std::string, const Metric*>, std::size_t> group_rows;
  for (const SimulatedRow& row : rows) {
    if (!row.skipped.empty()) ++skipped;
    for (const Metric& metric : kMetrics) {
      for (const auto& key : {std::tuple{row.run.model_path, row.run.mode, &metric},
                              std::tuple{std::string("all"), std::string("all"), &metric}}) {
        if (!errors.contains(key)) groups.push_back(key);
        ++group_rows[key];
        std::vector<double>& values = errors[key];
        if (const auto error = error_of(row.*(metric.simulated), row.run.*(metric.measured)))
          values.push_back(*error);
      }
    }
  }
  std::stable_partition(groups.begin(), groups.end(), [](const auto& g) { return std::get<0>(g) != "all"; });
  std::string text = fmt::format(
      "# Simulated vs measured serving runs\n\n"
      "`semsim validate serving-runs {}`: {} rows, {} simulated, {} skipped. Error: simulated mean / "
      "measured mean - 1 (bench_serving's means: TTFT, and TPOT = (E2E - TTFT) / (output tokens - 1) per "
      "request); |error| over the simulated rows.\n\n"
      "| model | mode | metric | simulated / rows | median abs error | p90 abs error | median error |\n"
      "| --- | --- | --- | ---: | ---: | ---: | ---: |\n",
      runs_csv, rows.size(), rows.size() - skipped, skipped);
  for (const auto& key : groups) {
    const std::vector<double>& values = errors[key];
    std::vector<double> magnitudes;
    for (double e : values) magnitudes.push_back(std::abs(e));
    const auto percent = [&](double value) {
      return values.empty() ? "–" : fmt::format("{:.1f} %", 100 * value);
    };
    text += fmt::format("| {} | {} | {} | {} / {} | {} | {} | {} |\n", std::get<0>(key), std::get<1>(key),
                        std::get<2>(key)->name, values.size(), group_rows[key],
                        percent(percentile(magnitudes, 50)), percent(percentile(magnitudes, 90)),
                        percent(percentile(values, 50)));
  }
  if (skipped > 0) {
    text += "\n## Skipped rows\n\n| id | reason |\n| --- | --- |\n";
    for (const SimulatedRow& row : rows)
      if (!row.skipped.empty()) text += fmt::format("| {} | {} |\n", row.run.id, row.skipped);
  }
  return text;
}

OutputFolderContents validation_folder_contents() {
  return {[](const std::string& name) {
            return std::find(std::begin(kOutputFiles), std::end(kOutputFiles), name) !=
                   std::end(kOutputFiles);
          },
          {kScenariosFolder}};
}

void write_validation_outputs(OutputStaging& staging, const std::string& out_dir,
                              const std::vector<SimulatedRow>& rows, const std::string& runs_csv) {
  const fs::path scenarios = fs::path(out_dir) / kScenariosFolder;
  try {
    fs::create_directories(scenarios);
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out '" + out_dir + "': cannot create the output folder (" + e.code().message() + ")");
  }
  // An earlier validation's scenarios of rows this one does not run (another --only) would be stale.
  std::set<std::string> written;
  for (const SimulatedRow& row : rows) {
    if (row.scenario_yaml.empty()) continue;
    const fs::path file = fs::path(out_dir) / row_scenario_file(row.run);
    write_file(file, row.scenario_yaml);
    written.insert(file.filename().string());
  }
  for (const auto& entry : fs::directory_iterator(scenarios))
    if (!written.contains(entry.path().filename().string())) fs::remove_all(entry.path());
  write_text_file(staging.staged("rows.csv"), rows_csv(rows));
  write_text_file(staging.staged("summary.md"), summary_markdown(rows, runs_csv));
  staging.commit();
}

}  // namespace semsim
