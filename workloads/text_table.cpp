#include "workloads/text_table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"

namespace semsim {

void fail_at_line(const std::string& path, int line, const std::string& message) {
  throw InputError(path + ":" + std::to_string(line) + ": " + message);
}

std::vector<NumberOnLine> read_number_column(const YamlInput& file, const std::string& base_dir) {
  const std::string path = resolve_relative(file.as_string(), base_dir);
  if (const auto why = why_not_a_regular_file(path)) file.fail("file '" + path + "' " + *why);
  LineReader lines(path);
  std::vector<NumberOnLine> values;
  for (std::string_view line; lines.next(line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string text(line.substr(first, last - first + 1));
    const auto value = parse_number(text);
    if (!value) fail_at_line(path, lines.line_number(), "expected one number, got '" + text + "'");
    // As many as a run has requests: a compressed file can hold far more lines than fit.
    if (values.size() == static_cast<std::size_t>(limits::kRequests))
      fail_at_line(path, lines.line_number(), fmt::format("more than {} values", limits::kRequests));
    values.push_back({*value, lines.line_number()});
  }
  if (values.empty()) file.fail("file '" + path + "' holds no values");
  return values;
}

std::string resolve_relative(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

}  // namespace semsim
