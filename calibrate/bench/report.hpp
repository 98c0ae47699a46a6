#pragma once
// What the suite writes: CSV files (the raw samples the fitter reads) and progress lines.
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace semsim::bench {

class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& header);
  void row(const std::vector<std::string>& fields);

 private:
  std::ofstream out_;
  std::string path_;
};

// The columns of checks.csv.
extern const std::vector<std::string> kCheckColumns;

// Shortest text that reads back to the same double.
std::string number(double value);

// Progress on stderr, each line stamped with the seconds since the suite started.
class Progress {
 public:
  Progress() : start_(std::chrono::steady_clock::now()) {}
  double elapsed() const;
  void line(const std::string& text) const;

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace semsim::bench
