#pragma once
// CSV fields (RFC 4180): quoted when they hold a comma, quote or line break. One implementation for
// every CSV the project reads or writes (sweep points, calibration raw results).
#include <string>
#include <vector>

namespace semsim {

std::string csv_field(const std::string& value);
std::string csv_line(const std::vector<std::string>& fields);  // quoted fields joined by commas
// Splits one line; `unterminated_quote` (optional) reports a quote left open at the end of the line.
std::vector<std::string> split_csv_line(const std::string& line, bool* unterminated_quote = nullptr);

}  // namespace semsim
