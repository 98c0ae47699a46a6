#include "sim/outputs/points_csv.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "models/input_error.hpp"
#include "models/output_files.hpp"

namespace semsim {

std::string metric_field(const nlohmann::ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
}

nlohmann::ordered_json metric_value(const std::string& field) {
  if (field.empty()) return nullptr;
  auto value = nlohmann::ordered_json::parse(field, nullptr, false);
  if (value.is_number() || value.is_boolean()) return value;
  return field;
}

PointsRows read_points_csv(const std::string& path) {
  PointsRows out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::size_t begin = 0;
  std::size_t width = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) {  // a last line without its newline was cut short
      ++out.torn;
      break;
    }
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    if (width == 0) {
      out.header = std::move(line);
      width = split_csv_line(out.header).size();
      continue;
    }
    const std::vector<std::string> fields = split_csv_line(line);
    if (fields.size() != width || fields[0].empty()) {
      ++out.torn;
      continue;
    }
    out.by_id.emplace(fields[0], out.rows.size());
    out.rows.push_back(std::move(line));
  }
  return out;
}

void replace_points_csv(const std::string& path, const std::string& header,
                        const std::vector<std::string>& rows) {
  std::string text = header + "\n";
  for (const std::string& row : rows) text += row + "\n";
  write_atomically(path, [&](const std::string& staged) { write_text_file(staged, text); });
}

PointsCsv::PointsCsv(std::string path, const std::string& header) : path_(std::move(path)) {
  rows_ = read_points_csv(path_);
  if (rows_.header.empty() && rows_.rows.empty()) {
    rows_ = PointsRows{};
    rows_.header = header;
    replace_points_csv(path_, header, {});
    return;
  }
  if (rows_.header != header)
    throw InputError(path_ +
                     ": written by a sweep with other columns (its axes or this semsim's metrics "
                     "differ); use another --out folder");
  if (rows_.torn > 0) replace_points_csv(path_, rows_.header, rows_.rows);
}

std::size_t PointsCsv::drop_failed() {
  std::vector<std::string> kept;
  for (const std::string& row : rows_.rows)
    if (split_csv_line(row)[1] == "ok") kept.push_back(row);
  const std::size_t dropped = rows_.rows.size() - kept.size();
  if (dropped == 0) return 0;
  replace_points_csv(path_, rows_.header, kept);
  rows_ = read_points_csv(path_);
  return dropped;
}

void PointsCsv::append(const std::vector<std::string>& fields) {
  // Rows stay single lines, which is what makes a torn row detectable: a line break in a value (a
  // label, an error) is written as "\n".
  std::vector<std::string> single_line;
  for (const std::string& field : fields) single_line.push_back(one_line(field));
  std::string row = csv_line(single_line);
  const std::string line = row + "\n";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw InputError(path_ + ": cannot write: " + std::strerror(errno));
  struct stat before {};
  ::fstat(fd, &before);
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int error = written < 0 ? errno : ENOSPC;  // a short write: the disk filled up
  if (written != static_cast<ssize_t>(line.size())) {
    // No torn row is left (should the truncation fail, the next run drops it: read_points_csv).
    [[maybe_unused]] const int truncated = written > 0 ? ::ftruncate(fd, before.st_size) : 0;
    ::close(fd);
    throw InputError(path_ + ": cannot write: " + std::strerror(error));
  }
  ::close(fd);
  rows_.by_id.emplace(fields[0], rows_.rows.size());
  rows_.rows.push_back(std::move(row));
}

void PointsCsv::reorder(const std::vector<std::string>& ids) {
  std::vector<std::string> ordered;
  std::vector<bool> placed(rows_.rows.size(), false);
  for (const std::string& id : ids)
    if (const auto it = rows_.by_id.find(id); it != rows_.by_id.end()) {
      ordered.push_back(rows_.rows[it->second]);
      placed[it->second] = true;
    }
  for (std::size_t i = 0; i < rows_.rows.size(); ++i)
    if (!placed[i]) ordered.push_back(rows_.rows[i]);
  if (ordered == rows_.rows) return;
  replace_points_csv(path_, rows_.header, ordered);
  rows_ = read_points_csv(path_);
}

}  // namespace semsim
