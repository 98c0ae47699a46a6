#pragma once
// What a sweep writes into DIR/points.csv (the file: sim/outputs/points_csv.hpp): its header,
// point_id, status, the sweep's columns, every summary metric (flattened as in summary.json, without
// wall_seconds so that reruns give identical files), error; and a row per point.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/runs/sweep_file.hpp"

namespace semsim {

std::vector<std::string> points_header_fields(const Sweep& sweep);
std::string points_header(const Sweep& sweep);  // the fields as one CSV line

// The columns of a points.csv header: the sweep's own (series, axis key paths) and the metrics;
// nullopt when `header` is not a points.csv header. The metrics start at summary.json's first key.
struct PointsColumns {
  std::vector<std::string> sweep_columns;
  std::vector<std::string> metrics;
};
std::optional<PointsColumns> points_columns(const std::string& header);

// One row: id, status, the point's labels, its metrics (empty when it failed: `summary` null), the
// error. Metrics go by name into the header's columns, so a summary with a key the header lacks is a
// bug, not a shift.
std::vector<std::string> point_row(const std::vector<std::string>& header, const SweepPoint& point,
                                   const nlohmann::ordered_json* summary, const std::string& error);

}  // namespace semsim
