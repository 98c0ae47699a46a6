#pragma once
// Reads one number per line from a text file, plain or gzip ('#' comments and blank lines skipped;
// at most limits::kRequests values); every error names the file and line. Used for arrival
// timestamps and length samples.
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

struct NumberOnLine {
  double value = 0;
  int line = 0;  // 1-based line in the file
};

// `file` is the scenario value naming the file: a missing file is reported at that key.
std::vector<NumberOnLine> read_number_column(const YamlInput& file, const std::string& base_dir);

// "path:line: message" — for values that are numbers but not acceptable ones.
[[noreturn]] void fail_at_line(const std::string& path, int line, const std::string& message);

// `path` as given when absolute or when there is no base folder; otherwise relative to `base_dir`
// (a scenario's files are found next to the scenario).
std::string resolve_relative(const std::string& path, const std::string& base_dir);

}  // namespace semsim
