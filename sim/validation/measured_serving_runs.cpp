#include "sim/validation/measured_serving_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string_view>

#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"
#include "workloads/text_table.hpp"

namespace semsim {
namespace {

// Every column of the format; the first ones are required, the layout columns may be left out (a
// row then has no such layout). gemm_quant_mode and moe_quant_mode are read over: `precision` names
// what the simulation takes (the weights' type).
constexpr std::string_view kRequiredColumns[] = {"id",
                                                 "silicon_data_source",
                                                 "backend",
                                                 "backend_version",
                                                 "model_path",
                                                 "system",
                                                 "precision",
                                                 "mode",
                                                 "isl",
                                                 "osl",
                                                 "silicon_ttft_ms",
                                                 "silicon_tpot_ms"};
constexpr std::string_view kLayoutColumns[] = {"batch_size",        "tp_size",     "pp_size",
                                               "attention_dp_size", "moe_tp_size", "moe_ep_size"};
constexpr std::string_view kOtherColumns[] = {"gemm_quant_mode", "moe_quant_mode"};
constexpr std::string_view kPoolPrefixes[] = {"prefill_", "decode_"};

std::vector<std::string> known_columns() {
  std::vector<std::string> names(std::begin(kRequiredColumns), std::end(kRequiredColumns));
  names.insert(names.end(), std::begin(kOtherColumns), std::end(kOtherColumns));
  names.insert(names.end(), std::begin(kLayoutColumns), std::end(kLayoutColumns));
  for (std::string_view pool : kPoolPrefixes) {
    names.push_back(std::string(pool) + "num_workers");
    for (std::string_view column : kLayoutColumns) names.push_back(std::string(pool) + std::string(column));
  }
  return names;
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// The columns a header names, each checked against the format.
std::map<std::string, std::size_t> read_header(const std::vector<std::string>& header,
                                               const std::string& path, int line) {
  const std::vector<std::string> known = known_columns();
  std::map<std::string, std::size_t> columns;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (std::find(known.begin(), known.end(), header[i]) == known.end())
      fail_at_line(path, line,
                   fmt::format("column {} ('{}'): not a column of measured serving runs{}", i + 1, header[i],
                               did_you_mean(header[i], known)));
    if (!columns.emplace(header[i], i).second)
      fail_at_line(path, line, fmt::format("column {} ('{}'): named twice", i + 1, header[i]));
  }
  for (std::string_view required : kRequiredColumns)
    if (!columns.contains(std::string(required)))
      fail_at_line(path, line,
                   fmt::format("no column '{}' (required: {})", required, fmt::join(kRequiredColumns, ", ")));
  return columns;
}

// One data row's cells by column name, each error naming file, line and column.
class RowCells {
 public:
  RowCells(const std::map<std::string, std::size_t>& columns, const std::vector<std::string>& fields,
           const std::string& path, int line)
      : columns_(columns), fields_(fields), path_(path), line_(line) {}

  // "" for a column the file does not have.
  std::string text(const std::string& column) const {
    const auto found = columns_.find(column);
    return found == columns_.end() ? "" : std::string(trimmed(fields_[found->second]));
  }
  std::string required_text(const std::string& column) const {
    const std::string value = text(column);
    if (value.empty()) fail(column, "empty");
    return value;
  }
  // A whole number from 1 to `most`; nothing for a blank cell.
  std::optional<int> count(const std::string& column, long long most = 1'000'000) const {
    const std::string value = text(column);
    if (value.empty()) return std::nullopt;
    return whole_number(column, value, most);
  }
  int required_count(const std::string& column, long long most) const {
    const auto value = count(column, most);
    if (!value) fail(column, "empty");
    return *value;
  }
  double milliseconds(const std::string& column) const {
    const std::string value = required_text(column);
    const auto ms = parse_number(value);
    if (!ms || *ms <= 0 || *ms > limits::kSimulatedSeconds * 1e3)
      fail(column, fmt::format("'{}' is not a positive number of milliseconds", value));
    return *ms;
  }
  int whole_number(const std::string& column, const std::string& value, long long most) const {
    const auto number = parse_number(value);
    if (!number || *number != std::floor(*number) || *number < 1 || *number > static_cast<double>(most))
      fail(column, fmt::format("'{}' is not a whole number from 1 to {}", value, most));
    return static_cast<int>(*number);
  }
  [[noreturn]] void fail(const std::string& column, const std::string& message) const {
    fail_at_line(path_, line_, fmt::format("column {} ({}): {}", columns_.at(column) + 1, column, message));
  }

 private:
  const std::map<std::string, std::size_t>& columns_;
  const std::vector<std::string>& fields_;
  const std::string& path_;
  int line_;
};

MeasuredLayout read_layout(const RowCells& cells, const std::string& prefix) {
  MeasuredLayout layout;
  layout.batch_size = cells.count(prefix + "batch_size", limits::kRequests);
  if (!prefix.empty()) layout.workers = cells.count(prefix + "num_workers");
  layout.tp = cells.count(prefix + "tp_size");
  layout.pp = cells.count(prefix + "pp_size");
  layout.attention_dp = cells.count(prefix + "attention_dp_size");
  layout.moe_tp = cells.count(prefix + "moe_tp_size");
  layout.moe_ep = cells.count(prefix + "moe_ep_size");
  return layout;
}

// `silicon_concurrency=N` among the source's `key=value` items separated by ';'.
std::optional<int> concurrency_in_source(const RowCells& cells) {
  constexpr std::string_view kKey = "silicon_concurrency=";
  const std::string source = cells.text("silicon_data_source");
  std::optional<int> concurrency;
  for (std::size_t begin = 0; begin <= source.size();) {
    const std::size_t end = std::min(source.find(';', begin), source.size());
    const std::string_view item = trimmed(std::string_view(source).substr(begin, end - begin));
    if (item.starts_with(kKey)) {
      if (concurrency) cells.fail("silicon_data_source", "silicon_concurrency given twice");
      concurrency =
          cells.whole_number("silicon_data_source", std::string(item.substr(kKey.size())), limits::kRequests);
    }
    begin = end + 1;
  }
  return concurrency;
}

bool is_file_name_safe(const std::string& id) {
  return std::all_of(id.begin(), id.end(),
                     [](char c) {
                       return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                              c == '.' || c == '_' || c == '-';
                     }) &&
         id != "." && id != "..";
}

MeasuredServingRun read_row(const RowCells& cells, int line) {
  MeasuredServingRun run;
  run.line = line;
  run.id = cells.required_text("id");
  if (!is_file_name_safe(run.id))
    cells.fail("id",
               fmt::format("'{}': an id is letters, digits, '.', '_' and '-' (it names files)", run.id));
  run.source = cells.text("silicon_data_source");
  run.backend = cells.required_text("backend");
  run.backend_version = cells.text("backend_version");
  run.model_path = cells.required_text("model_path");
  run.system = cells.required_text("system");
  run.precision = cells.text("precision");
  run.mode = cells.required_text("mode");
  run.isl = cells.required_count("isl", limits::kRequestTokens);
  run.osl = cells.required_count("osl", limits::kRequestTokens);
  run.concurrency = concurrency_in_source(cells);
  run.server = read_layout(cells, "");
  run.prefill = read_layout(cells, "prefill_");
  run.decode = read_layout(cells, "decode_");
  run.ttft_ms = cells.milliseconds("silicon_ttft_ms");
  run.tpot_ms = cells.milliseconds("silicon_tpot_ms");
  return run;
}

std::string layout_words(const MeasuredLayout& layout, bool with_workers) {
  std::string words = layout.tp ? fmt::format("tp{}", *layout.tp) : "tp?";
  if (layout.pp.value_or(1) > 1) words += fmt::format(" pp{}", *layout.pp);
  if (layout.attention_dp.value_or(1) > 1) words += fmt::format(" dp{}", *layout.attention_dp);
  if (layout.moe_tp.value_or(1) * layout.moe_ep.value_or(1) > 1)
    words += fmt::format(" moe tp{} ep{}", layout.moe_tp.value_or(1), layout.moe_ep.value_or(1));
  if (with_workers && layout.workers.value_or(1) > 1) words = fmt::format("{} x {}", *layout.workers, words);
  return words;
}

}  // namespace

std::string layout_label(const MeasuredServingRun& run, bool with_workers) {
  if (run.mode == "disagg")
    return fmt::format("prefill {} / decode {}", layout_words(run.prefill, with_workers),
                       layout_words(run.decode, with_workers));
  return layout_words(run.server, with_workers);
}

std::vector<MeasuredServingRun> rows_matching(std::vector<MeasuredServingRun> runs, const std::string& only) {
  if (only.empty()) return runs;
  std::regex pattern;
  try {
    pattern = std::regex(only, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--only '{}': not a regular expression ({})", only, e.what()));
  }
  std::erase_if(runs, [&](const MeasuredServingRun& run) { return !std::regex_search(run.id, pattern); });
  if (runs.empty()) throw InputError(fmt::format("--only '{}': no row's id matches", only));
  return runs;
}

std::vector<MeasuredServingRun> read_measured_serving_runs(const std::string& path) {
  if (!is_file(path)) throw InputError(path + ": no such file (a CSV of measured serving runs)");
  LineReader reader(path);
  std::vector<MeasuredServingRun> runs;
  std::map<std::string, std::size_t> columns;
  std::size_t header_size = 0;
  std::map<std::string, int> id_lines;
  std::string_view line;
  while (reader.next(line)) {
    if (trimmed(line).empty()) continue;
    const int number = reader.line_number();
    bool unterminated = false;
    const std::vector<std::string> fields = split_csv_line(std::string(line), &unterminated);
    if (unterminated) fail_at_line(path, number, "a quoted field is not closed");
    if (header_size == 0) {
      columns = read_header(fields, path, number);
      header_size = fields.size();
      continue;
    }
    if (fields.size() != header_size)
      fail_at_line(path, number, fmt::format("{} fields, but the header has {}", fields.size(), header_size));
    const RowCells cells(columns, fields, path, number);
    runs.push_back(read_row(cells, number));
    const auto [first, inserted] = id_lines.emplace(runs.back().id, number);
    if (!inserted)
      cells.fail("id", fmt::format("'{}' is the id of line {} too", runs.back().id, first->second));
  }
  if (header_size == 0) throw InputError(path + ": empty (expected a header line and a row per run)");
  return runs;
}

}  // namespace semsim
