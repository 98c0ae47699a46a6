#pragma once
// Reads one number per line from a small text file ('#' comments and blank lines skipped); every
// error names the file and line. Used for arrival timestamps and length samples.
#include <string>
#include <vector>

namespace semsim {

std::vector<double> read_number_column(const std::string& path);

// `path` as given when absolute or when there is no base folder; otherwise relative to `base_dir`
// (a scenario's files are found next to the scenario).
std::string resolve_relative(const std::string& path, const std::string& base_dir);

}  // namespace semsim
