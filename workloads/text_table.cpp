#include "workloads/text_table.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/input_error.hpp"

namespace semsim {

std::vector<double> read_number_column(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::vector<double> values;
  std::string line;
  for (int line_number = 1; std::getline(in, line); ++line_number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(first, last - first + 1);
    const auto value = parse_number(text);
    if (!value)
      throw InputError(path + ":" + std::to_string(line_number) + ": expected one number, got '" + text + "'");
    values.push_back(*value);
  }
  if (values.empty()) throw InputError(path + ": no values in file");
  return values;
}

std::string resolve_relative(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

}  // namespace semsim
