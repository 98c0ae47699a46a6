#include "calibrate/import/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <string_view>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"

namespace semsim {
namespace {

// The collective a "<name>_perf" word names, or "".
std::string collective_named_in(const std::string& text) {
  const std::pair<const char*, const char*> names[] = {{"all_reduce_perf", "all_reduce"},
                                                       {"all_gather_perf", "all_gather"},
                                                       {"reduce_scatter_perf", "reduce_scatter"},
                                                       {"alltoall_perf", "all_to_all"}};
  for (const auto& [word, collective] : names)
    if (text.find(word) != std::string::npos) return collective;
  return "";
}

// Whitespace-separated fields of a line and the column each starts at (1-based).
std::vector<std::pair<std::string, int>> fields_of(std::string_view line) {
  std::vector<std::pair<std::string, int>> fields;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    fields.emplace_back(std::string(line.substr(start, i - start)), static_cast<int>(start) + 1);
  }
  return fields;
}

const std::vector<std::string> kColumns{
    "size",  "count", "type",          "redop",          "root",           "time",          "algbw",
    "busbw", "wrong", "in_place_time", "in_place_algbw", "in_place_busbw", "in_place_wrong"};

// What a log says about its run outside its result lines.
struct LogHeader {
  std::string collective, gpu, version;
  int ranks = 0;
};

// Takes from `text` what it says about the run (NCCL's version, the collective, a device of "Using
// devices"); false for a result line.
bool read_header_line(const std::string& text, LogHeader& header) {
  // NCCL prints its version itself (NCCL_DEBUG=VERSION, or INFO) on a line of its own, uncommented.
  if (const auto at = text.find("NCCL version "); at != std::string::npos) {
    std::istringstream words(text.substr(at + 13));
    words >> header.version;
    header.version = header.version.substr(0, header.version.find('+'));
    return true;
  }
  if (!text.starts_with("#")) return false;
  if (const std::string named = collective_named_in(text); !named.empty()) header.collective = named;
  if (text.find(" Rank ") != std::string::npos && text.find(" device ") != std::string::npos) {
    ++header.ranks;
    const auto bracket = text.find(']');
    if (bracket != std::string::npos && bracket + 2 < text.size()) header.gpu = text.substr(bracket + 2);
  }
  return true;
}

// Result line `number` of `path`: its fields and, unless its message is empty, the point of its
// out-of-place time (kernel and shape are set once the whole log, and so the ranks, are read).
MeasuredRow result_row(const std::vector<std::pair<std::string, int>>& fields, const std::string& path,
                       int number) {
  if (fields.size() != kColumns.size() && fields.size() != 9)
    throw InputError(
        fmt::format("{}:{}:1: expected {} fields (size count type redop root time algbw busbw "
                    "#wrong, then the same in place), got {}",
                    path, number, kColumns.size(), fields.size()));
  auto value = [&](std::size_t i) {
    const auto parsed = parse_number(fields[i].first);
    if (!parsed || *parsed < 0 || (i == 5 && !(*parsed > 0)))
      throw InputError(
          fmt::format("{}:{}:{}: column '{}': expected a {} number, got '{}'", path, number, fields[i].second,
                      kColumns[i], i == 5 ? "positive" : "non-negative", fields[i].first),
          kColumns[i]);
    return *parsed;
  };
  MeasuredRow row;
  row.line = number;
  for (const auto& [field, column] : fields) row.fields.push_back(field);
  row.fields.resize(kColumns.size());
  // What a calibration profile holds (what `run` reads back), so that nothing imported is refused later.
  auto measured = [&](std::size_t i, double unit_seconds) {
    const double scaled = value(i) * unit_seconds;
    if (scaled > 0 && !limits::kMeasuredValue.contains(scaled))
      throw InputError(
          fmt::format("{}:{}:{}: column '{}': expected a number in [{:g}, {:g}], got '{}'", path, number,
                      fields[i].second, kColumns[i], limits::kMeasuredValue.min / unit_seconds,
                      limits::kMeasuredValue.max / unit_seconds, fields[i].first),
          kColumns[i]);
    return scaled;
  };
  MeasuredPoint p;
  p.shape = "";  // set by the caller, once the ranks are known
  p.x = measured(0, 1);
  value(1);
  p.seconds = measured(5, 1e-6);
  p.implementation = "NCCL";
  p.dtype = fields[2].first;
  if (!(p.x > 0)) {
    row.skipped = "empty message";
  } else {
    row.points.push_back(p);
  }
  return row;
}

}  // namespace

MeasuredTable read_nccl_tests_log(const std::string& path) {
  MeasuredTable table;
  table.path = path;
  table.kind = "nccl_tests";
  table.columns = kColumns;
  LineReader reader(path);
  LogHeader header;
  header.collective = collective_named_in(std::filesystem::path(path).filename().string());
  std::string_view line;
  while (reader.next(line)) {
    if (read_header_line(std::string(line), header)) continue;
    const auto fields = fields_of(line);
    if (!fields.empty()) table.rows.push_back(result_row(fields, path, reader.line_number()));
  }
  const auto& [collective, gpu, version, ranks] = header;
  if (collective.empty())
    throw InputError(
        path +
        ": which collective is this? No 'Collective test starting: X_perf' line; name the "
        "file after the test (all_reduce_perf.log, all_gather_perf.log, reduce_scatter_perf.log, "
        "alltoall_perf.log)");
  if (ranks < 2)
    throw InputError(
        fmt::format("{}: {} ranks in 'Using devices' (a collective needs 2 or more)", path, ranks));
  if (table.rows.empty()) throw InputError(path + ": no result lines");
  for (MeasuredRow& row : table.rows)
    for (MeasuredPoint& p : row.points) {
      p.kernel = "nccl_" + collective;
      p.shape = fmt::format("ranks={}", ranks);
      p.ranks = ranks;
    }
  table.provenance["framework"] = {"nccl-tests"};
  table.provenance["version"] = {version.empty() ? "unknown" : version};
  table.provenance["device"] = {gpu};
  table.provenance["op_name"] = {collective};
  table.provenance["kernel_source"] = {"NCCL"};
  return table;
}

}  // namespace semsim
