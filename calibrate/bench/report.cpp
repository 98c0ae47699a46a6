#include "calibrate/bench/report.hpp"

#include <charconv>
#include <cstdio>
#include <stdexcept>

namespace semsim::bench {
namespace {

std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string out = "\"";
  for (const char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return out + "\"";
}

}  // namespace

const std::vector<std::string> kCheckColumns{"check", "max_error", "tolerance", "passed", "note"};

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& header)
    : out_(path), path_(path) {
  if (!out_) throw std::runtime_error("cannot write " + path);
  row(header);
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out_ << (i ? "," : "") << quoted(fields[i]);
  out_ << "\n";
  out_.flush();  // a suite cut short by a time limit keeps every row it measured
  if (!out_) throw std::runtime_error("cannot write " + path_);
}

std::string number(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::line(const std::string& text) const {
  std::fprintf(stderr, "[%6.1fs] %s\n", elapsed(), text.c_str());
  std::fflush(stderr);
}

}  // namespace semsim::bench
