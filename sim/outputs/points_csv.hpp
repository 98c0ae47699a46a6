#pragma once
// DIR/points.csv of a sweep: a header, then one line per finished point, appended as it finishes.
//
// Crash safety: the header is written to a temporary file and renamed into place, and each row is
// one complete line handed to a single write() on a file opened with O_APPEND. A process killed at
// any moment (SIGKILL included) leaves every earlier row whole; the only damage possible is a
// partial last line (a write cut short, or a machine crash losing the page cache), which has no
// newline or the wrong number of fields. Opening the file again drops such a line (rewriting the
// file by rename), so its point simply runs again: no row is lost (each is either whole or rerun)
// and none is duplicated (a point is skipped once its row is whole). One file rather than one file
// per point keeps resume and merge to a single read of one file.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/csv.hpp"

namespace semsim {

// A summary value as a points.csv field: a string as it is, null as "", anything else as its JSON
// text; and back: a field holding a JSON number or boolean is that value, "" is null, else a string.
std::string metric_field(const nlohmann::ordered_json& value);
nlohmann::ordered_json metric_value(const std::string& field);

struct PointsRows {
  std::string header;                        // the first line, without its newline
  std::vector<std::string> rows;             // whole rows, without newlines, in file order
  std::size_t torn = 0;                      // lines dropped: incomplete or of the wrong width
  std::map<std::string, std::size_t> by_id;  // point id (first field) -> index in rows
};

// Reads a points.csv without changing it; a missing file has no rows and an empty header.
PointsRows read_points_csv(const std::string& path);

// Writes `header` and `rows` to a temporary file and renames it over `path`.
void replace_points_csv(const std::string& path, const std::string& header,
                        const std::vector<std::string>& rows);

class PointsCsv {
 public:
  // Opens `path`, creating it with `header`, or repairing a torn last row. Throws InputError when
  // the file exists with another header (it belongs to a sweep with other axes).
  PointsCsv(std::string path, const std::string& header);

  const PointsRows& existing() const { return rows_; }
  std::size_t torn_rows_dropped() const { return rows_.torn; }
  // Removes the rows whose status is not "ok", so that those points run again.
  std::size_t drop_failed();
  // Appends one row with a single write() of the whole line.
  void append(const std::vector<std::string>& fields);
  // Rewrites the file with its rows in this order of point ids (others after, as they were).
  void reorder(const std::vector<std::string>& ids);

 private:
  std::string path_;
  PointsRows rows_;
};

}  // namespace semsim
