#include "sim/runs/sweep_points_csv.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "models/csv.hpp"
#include "sim/outputs/deployment_summary.hpp"
#include "sim/outputs/disaggregated_summary.hpp"
#include "sim/outputs/points_csv.hpp"
#include "sim/outputs/summary_json.hpp"

namespace semsim {
namespace {

// The keys of every summary, or, when some point is disaggregated, of a disaggregated run's (which
// holds the others' and its pools'): a point that is not has those columns empty. The workload's
// lengths name their distribution's parameters, an engine, speculative decoding and the prefix cache add
// their own keys: `point` (a point's scenario) gives those.
std::vector<std::string> metric_columns(bool disaggregated = false, const Scenario* point = nullptr) {
  Scenario blank;
  if (point) {
    blank.workload = point->workload;
    blank.engine = point->engine;
    blank.serving.speculative = point->serving.speculative;
    blank.serving.prefix_cache = point->serving.prefix_cache;
    blank.deployment = point->deployment;  // its instances' columns
  }
  DisaggregatedPlan plan;
  if (disaggregated) {
    auto pools = std::make_shared<Disaggregation>();
    const bool pooled = point && point->disaggregation;
    auto pool = [&](const std::shared_ptr<const Scenario>& own) {
      auto scenario = std::make_shared<Scenario>();
      if (pooled) {
        scenario->engine = own->engine;
        scenario->serving.speculative = own->serving.speculative;
        scenario->serving.prefix_cache = own->serving.prefix_cache;
      }
      return scenario;
    };
    pools->prefill = pool(pooled ? point->disaggregation->prefill : nullptr);
    pools->decode = pool(pooled ? point->disaggregation->decode : nullptr);
    blank.disaggregation = pools;
  }
  const nlohmann::ordered_json summary =
      disaggregated      ? disaggregated_summary_json(blank, plan, DisaggregatedResult{}, {})
      : blank.deployment ? deployment_summary_json(blank, MemoryPlan{}, DeploymentResult{}, {})
                         : summary_json(blank, MemoryPlan{}, Summary{});
  std::vector<std::string> names;
  for (const auto& [name, value] : flatten_summary(summary)) names.push_back(name);
  return names;
}

// A summary metric named like a swept key (`model`, `cluster`, `workload.arrival.rate`) gets the
// column `summary:NAME`, so no two columns share a name and the swept key keeps its own (what plots
// and `semsim compare` match points by).
constexpr std::string_view kRenamedMetricPrefix = "summary:";

// The summary keys of every point of the sweep, in the blank summary's order; a key only some points
// have (a lognormal length's median) follows the key it follows in their summaries.
std::vector<std::string> sweep_metric_columns(const Sweep& sweep) {
  const bool disaggregated = std::any_of(sweep.points.begin(), sweep.points.end(), [](const SweepPoint& p) {
    return p.scenario && p.scenario->disaggregation && !p.scenario->deployment;
  });
  std::vector<std::string> names = metric_columns(disaggregated);
  for (const SweepPoint& point : sweep.points) {
    if (!point.scenario) continue;
    const std::vector<std::string> own = metric_columns(disaggregated, &*point.scenario);
    for (std::size_t i = 0; i < own.size(); ++i) {
      if (std::find(names.begin(), names.end(), own[i]) != names.end()) continue;
      const auto after = i == 0 ? names.begin() : std::find(names.begin(), names.end(), own[i - 1]) + 1;
      names.insert(after, own[i]);
    }
  }
  return names;
}

}  // namespace

std::vector<std::string> points_header_fields(const Sweep& sweep) {
  std::vector<std::string> fields{"point_id", "status"};
  fields.insert(fields.end(), sweep.columns.begin(), sweep.columns.end());
  for (const std::string& metric : sweep_metric_columns(sweep))
    fields.push_back(std::find(sweep.columns.begin(), sweep.columns.end(), metric) == sweep.columns.end()
                         ? metric
                         : std::string(kRenamedMetricPrefix) + metric);
  fields.push_back("error");
  return fields;
}

std::vector<std::string> point_row(const std::vector<std::string>& header, const SweepPoint& point,
                                   const nlohmann::ordered_json* summary, const std::string& error) {
  std::vector<std::string> row{point.id, summary ? "ok" : "failed"};
  row.insert(row.end(), point.labels.begin(), point.labels.end());
  const std::size_t first_metric = row.size();
  row.resize(header.size() - 1);
  if (summary)
    for (const auto& [name, value] : flatten_summary(*summary)) {
      const auto metrics_begin = header.begin() + static_cast<std::ptrdiff_t>(first_metric);
      auto column = std::find(metrics_begin, header.end() - 1, name);
      if (column == header.end() - 1)
        column = std::find(metrics_begin, header.end() - 1, std::string(kRenamedMetricPrefix) + name);
      if (column == header.end() - 1)
        throw std::logic_error("summary key '" + name + "' has no points.csv column");
      row[static_cast<std::size_t>(column - header.begin())] = metric_field(value);
    }
  row.push_back(error);
  return row;
}

std::string points_header(const Sweep& sweep) {
  return csv_line(points_header_fields(sweep));
}

std::optional<PointsColumns> points_columns(const std::string& header) {
  const std::vector<std::string> fields = split_csv_line(header);
  if (fields.size() < 4 || fields[0] != "point_id" || fields[1] != "status" || fields.back() != "error")
    return std::nullopt;
  // No sweep column is named like the first metric: scenario key paths never are "scenario".
  const auto first_metric = std::find(fields.begin() + 2, fields.end() - 1, metric_columns().front());
  if (first_metric == fields.end() - 1) return std::nullopt;
  return PointsColumns{{fields.begin() + 2, first_metric}, {first_metric, fields.end() - 1}};
}

}  // namespace semsim
