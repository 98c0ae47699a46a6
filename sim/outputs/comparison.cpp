#include "sim/outputs/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibrate/fit/quantile.hpp"
#include "models/input_error.hpp"

namespace semsim {
using Json = nlohmann::ordered_json;

namespace {

std::optional<double> number_at(const FlatSummary& summary, const std::string& key) {
  for (const auto& [name, value] : summary)
    if (name == key) return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
  return std::nullopt;
}

std::string percent(double share) {
  return fmt::format("{:.1f}%", share * 100);
}

struct StepPart {
  const char* name;   // in the step-time split
  const char* bound;  // in "bound by ..."
  const char* what;   // what its share is of, in the verdict
  double share;
};

// The parts of the step time, largest first (this order breaks ties).
std::vector<StepPart> step_parts(const FlatSummary& summary) {
  auto share = [&](const char* phase) {
    return number_at(summary, std::string("phase_share.") + phase).value_or(0.0);
  };
  std::vector<StepPart> parts{
      {"all-to-all", "all-to-all", "dispatch+combine", share("dispatch") + share("combine")},
      {"attention", "attention", "attention", share("attention")},
      {"experts", "expert compute", "experts", share("experts")},
      {"TP collectives", "Attention-TP collectives", "reduce-scatter+all-gather",
       share("reduce_scatter") + share("all_gather")},
      {"permute", "token permutation", "permute", share("permute")},
      {"other", "dense layers and LM head", "other (dense layers, LM head)", share("other")},
      // Only runs with an engine have the phase; the others' share is 0 and stays out of the text.
      {"engine host work", "the engine's host work", "engine (host work the kernels did not hide)",
       share("engine")}};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const StepPart& a, const StepPart& b) { return a.share > b.share; });
  return parts;
}

// "experts 25.0%, attention 22.0%" over the parts with time, skipping `first` of them.
std::string parts_text(const std::vector<StepPart>& parts, std::size_t first) {
  std::string out;
  for (std::size_t i = first; i < parts.size(); ++i)
    if (parts[i].share > 0)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", parts[i].name, percent(parts[i].share));
  return out;
}

// When the experts take the most time: "expert imbalance" when the slowest device's expert time is
// kExpertImbalance x the devices' mean or more, else "expert compute"; a summary without device
// times cannot tell them apart (routed loads are no measure of time: small batches take about as
// long on any load). Returns the bound and what the rule read.
std::pair<std::string, std::string> experts_bound(const FlatSummary& summary) {
  const double load = number_at(summary, "imbalance").value_or(1);
  const double slowest = number_at(summary, "experts_device_seconds.slowest").value_or(0);
  const double mean = number_at(summary, "experts_device_seconds.mean").value_or(0);
  if (mean <= 0)
    return {"experts",
            fmt::format(", the busiest device serving {:.2f}x the mean routed load (device times not "
                        "recorded: imbalance and compute not told apart)",
                        load)};
  return {slowest / mean >= kExpertImbalance ? "expert imbalance" : "expert compute",
          fmt::format(", the slowest device's expert time {:.2f}x the devices' mean (routed load {:.2f}x)",
                      slowest / mean, load)};
}

}  // namespace

BoundVerdict bound_verdict(const FlatSummary& summary) {
  const std::vector<StepPart> parts = step_parts(summary);
  if (parts.front().share <= 0) return {"none", "no verdict: the run simulated no steps"};
  const double steps = number_at(summary, "steps").value_or(0);
  const double mean_step = number_at(summary, "mean_step_seconds").value_or(0);
  const double simulated = number_at(summary, "simulated_seconds").value_or(0);
  const std::string busy =
      simulated > 0 ? fmt::format("; engine stepping {} of the run", percent(steps * mean_step / simulated))
                    : "";

  const auto kv = number_at(summary, "batch_limits.kv_wait_step_share");
  const auto budget = number_at(summary, "batch_limits.token_budget_step_share");
  const auto cap = number_at(summary, "batch_limits.request_cap_step_share");
  std::string limits_text = "batch limits not recorded (a summary of an earlier semsim)";
  if (kv && budget && cap) {
    const std::string split = "; step time: " + parts_text(parts, 0) + busy;
    if (*kv >= std::max(*budget, *cap) && *kv >= kBatchLimitStepShare)
      return {
          "KV capacity",
          fmt::format("bound by KV capacity: a request waited for KV cache in {} of steps (KV reserved: peak "
                      "{}, mean {}; token budget full in {}, request cap in {} of steps){}",
                      percent(*kv), percent(number_at(summary, "batch_limits.kv_use_peak").value_or(0)),
                      percent(number_at(summary, "batch_limits.kv_use_mean").value_or(0)), percent(*budget),
                      percent(*cap), split)};
    if (*budget >= *cap && *budget >= kBatchLimitStepShare)
      return {"batch cap",
              fmt::format("bound by batch cap: the token budget ran out with tokens left out in {} "
                          "of steps (request cap in {}, KV wait in {} of steps){}",
                          percent(*budget), percent(*cap), percent(*kv), split)};
    if (*cap >= kBatchLimitStepShare)
      return {"batch cap",
              fmt::format("bound by batch cap: max_running_requests were running with requests "
                          "waiting in {} of steps (token budget full in {}, KV wait in {} of steps){}",
                          percent(*cap), percent(*budget), percent(*kv), split)};
    limits_text = fmt::format(
        "no batch limit held work back in {} of steps or more (KV wait {}, token budget {}, request "
        "cap {})",
        percent(kBatchLimitStepShare), percent(*kv), percent(*budget), percent(*cap));
  }
  const StepPart& top = parts.front();
  auto [bound, detail] = std::string(top.name) == "experts"
                             ? experts_bound(summary)
                             : std::pair<std::string, std::string>{top.bound, ""};
  const std::string others = parts_text(parts, 1);
  return {bound, fmt::format("bound by {}: {} {} of step time{}{}; {}{}", bound, top.what, percent(top.share),
                             others.empty() ? "" : " (" + others + ")", detail, limits_text, busy)};
}

bool MetricRow::numeric() const {
  return std::all_of(values.begin(), values.end(), [](const auto& v) { return !v || v->is_number(); });
}

std::vector<MetricRow> compare_metrics(const std::vector<const FlatSummary*>& summaries) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  std::vector<std::map<std::string, const Json*>> by_key(summaries.size());
  for (std::size_t f = 0; f < summaries.size(); ++f) {
    if (summaries[f] == nullptr) continue;
    for (const auto& [key, value] : *summaries[f]) {
      by_key[f].emplace(key, &value);
      if (seen.insert(key).second) keys.push_back(key);
    }
  }
  std::vector<MetricRow> rows;
  for (const std::string& key : keys) {
    MetricRow row;
    row.key = key;
    for (const auto& values : by_key) {
      const auto it = values.find(key);
      row.values.push_back(it == values.end() ? std::nullopt : std::optional<Json>(*it->second));
    }
    row.delta.assign(summaries.size(), std::nullopt);
    row.delta_percent.assign(summaries.size(), std::nullopt);
    if (!row.numeric()) {
      const auto& first = row.values.front();
      const bool differ =
          std::any_of(row.values.begin(), row.values.end(), [&](const auto& v) { return v != first; });
      if (differ) rows.push_back(std::move(row));
      continue;
    }
    const auto& baseline = row.values.front();
    for (std::size_t f = 1; baseline && f < row.values.size(); ++f) {
      if (!row.values[f]) continue;
      const double base = baseline->get<double>(), value = row.values[f]->get<double>();
      row.delta[f] = value - base;
      if (base != 0)
        row.delta_percent[f] = (value - base) / std::abs(base) * 100;
      else if (value == 0)
        row.delta_percent[f] = 0.0;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Comparison compare_runs(const std::vector<std::string>& folders, const std::vector<FlatSummary>& summaries) {
  Comparison comparison;
  comparison.folders = folders;
  ComparedEntry entry;
  std::vector<const FlatSummary*> pointers;
  for (const FlatSummary& summary : summaries) {
    pointers.push_back(&summary);
    entry.missing.emplace_back();
    entry.verdicts.push_back(bound_verdict(summary));
  }
  entry.metrics = compare_metrics(pointers);
  comparison.entries.push_back(std::move(entry));
  return comparison;
}

namespace {

std::string labels_text(const std::vector<std::string>& columns, const std::vector<std::string>& labels) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i)
    out += fmt::format("{}{}={}", i == 0 ? "" : " ", columns[i], labels[i]);
  return out.empty() ? "(the sweep's one point)" : out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "nothing" : out;
}

}  // namespace

Comparison compare_sweeps(const std::vector<std::string>& folders, const std::vector<SweepResults>& sweeps) {
  Comparison comparison;
  comparison.folders = folders;
  comparison.sweeps = true;
  comparison.label_columns = sweeps.front().label_columns;
  std::vector<std::map<std::vector<std::string>, const SweepPointResult*>> by_labels(sweeps.size());
  std::vector<std::vector<std::string>> order;  // every point's labels, by first appearance
  std::set<std::vector<std::string>> listed;
  for (std::size_t f = 0; f < sweeps.size(); ++f) {
    if (sweeps[f].label_columns != comparison.label_columns)
      throw InputError(fmt::format(
          "{}: its points vary {}, but those of {} vary {}: the points cannot be matched", folders[f],
          joined(sweeps[f].label_columns), folders.front(), joined(comparison.label_columns)));
    for (const SweepPointResult& point : sweeps[f].points) {
      if (!by_labels[f].emplace(point.labels, &point).second)
        throw InputError(
            fmt::format("{}/points.csv: two points at {}: they cannot be matched by their coordinates",
                        folders[f], labels_text(comparison.label_columns, point.labels)));
      if (listed.insert(point.labels).second) order.push_back(point.labels);
    }
    if (sweeps[f].torn_rows > 0)
      comparison.notes.push_back(
          fmt::format("{}: {} torn row(s) of points.csv dropped (an interrupted sweep): "
                      "those points count as absent there",
                      folders[f], sweeps[f].torn_rows));
  }
  for (const std::vector<std::string>& labels : order) {
    ComparedEntry entry;
    entry.labels = labels;
    std::vector<const FlatSummary*> summaries;
    std::size_t compared = 0;
    for (const auto& points : by_labels) {
      const auto it = points.find(labels);
      const SweepPointResult* point = it == points.end() ? nullptr : it->second;
      const bool ok = point != nullptr && point->ok;
      entry.missing.push_back(
          ok ? std::nullopt
             : std::optional<std::string>(point == nullptr ? "absent" : "failed: " + point->error));
      entry.verdicts.push_back(ok ? std::optional<BoundVerdict>(bound_verdict(point->summary))
                                  : std::nullopt);
      summaries.push_back(ok ? &point->summary : nullptr);
      compared += ok ? 1 : 0;
    }
    if (compared >= 2) entry.metrics = compare_metrics(summaries);
    comparison.entries.push_back(std::move(entry));
  }
  return comparison;
}

namespace {

// Column names of the folders: A (the baseline), B, C, ...
std::string folder_letter(std::size_t f) {
  return f < 26 ? std::string(1, static_cast<char>('A' + f)) : fmt::format("F{}", f + 1);
}

std::string value_text(const std::optional<Json>& value) {
  if (!value) return "absent";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_float()) return fmt::format("{:.6g}", value->get<double>());
  return value->dump();
}

// Rows of cells as columns: the first left-aligned, the others right-aligned.
std::string aligned_text(const std::vector<std::vector<std::string>>& cells) {
  // Widths in characters, not bytes ("Δ" is two bytes of UTF-8).
  auto width = [](const std::string& s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::vector<std::size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells)
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], width(line[c]));
  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) {
      const std::string pad(widths[c] - width(line[c]), ' ');
      text += c == 0 ? line[c] + pad : "  " + pad + line[c];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

std::string table_text(const std::vector<MetricRow>& metrics, std::size_t folders) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header{"metric", "A"};
  for (std::size_t f = 1; f < folders; ++f) {
    const std::string letter = folder_letter(f);
    header.insert(header.end(), {letter, "Δ " + letter, "Δ% " + letter});
  }
  cells.push_back(header);
  std::string others;  // values that are not numbers, after the table (they can be long)
  for (const MetricRow& row : metrics) {
    if (!row.numeric()) {
      others += "  " + row.key + ":";
      for (std::size_t f = 0; f < folders; ++f)
        others += fmt::format("{} {} = {}", f == 0 ? "" : ",", folder_letter(f), value_text(row.values[f]));
      others += "\n";
      continue;
    }
    std::vector<std::string> line{row.key, value_text(row.values[0])};
    for (std::size_t f = 1; f < folders; ++f) {
      line.push_back(value_text(row.values[f]));
      line.push_back(row.delta[f] ? fmt::format("{:+.6g}", *row.delta[f]) : "");
      line.push_back(row.delta_percent[f] ? fmt::format("{:+.2f}%", *row.delta_percent[f])
                     : row.delta[f]       ? "n/a"
                                          : "");
    }
    cells.push_back(std::move(line));
  }
  std::string out = aligned_text(cells);
  if (!others.empty()) out += "Values that are not numbers, where they differ:\n" + others;
  return out;
}

// One entry: its coordinates, the folders it is missing from, its metrics and its verdicts.
std::string entry_text(const Comparison& comparison, const ComparedEntry& entry) {
  std::string out = "\n";
  if (comparison.sweeps) out += "== " + labels_text(comparison.label_columns, entry.labels) + " ==\n";
  for (std::size_t f = 0; f < entry.missing.size(); ++f)
    if (entry.missing[f]) out += fmt::format("{}: {}\n", folder_letter(f), *entry.missing[f]);
  if (!entry.metrics.empty()) out += table_text(entry.metrics, comparison.folders.size());
  out += "What bounds it:\n";
  for (std::size_t f = 0; f < entry.verdicts.size(); ++f)
    if (entry.verdicts[f]) out += fmt::format("  {}: {}\n", folder_letter(f), entry.verdicts[f]->text);
  return out;
}

// The largest |Δ%| of any metric and folder of an entry (-1 when it has none).
double largest_change(const ComparedEntry& entry) {
  double largest = -1;
  for (const MetricRow& row : entry.metrics)
    for (const auto& percent_change : row.delta_percent)
      if (percent_change) largest = std::max(largest, std::abs(*percent_change));
  return largest;
}

// The series an entry belongs to: its `series` label, or "" for a sweep without series.
std::string series_of(const Comparison& comparison, const ComparedEntry& entry) {
  const auto column = std::find(comparison.label_columns.begin(), comparison.label_columns.end(), "series");
  return column == comparison.label_columns.end()
             ? ""
             : entry.labels[static_cast<std::size_t>(column - comparison.label_columns.begin())];
}

// A series' points in summary: how many were compared, each kept metric's Δ% (median, least, most) per
// folder after the baseline, and how many points each verdict bounds in each folder.
std::string series_text(const Comparison& comparison, const std::string& series,
                        const std::vector<const ComparedEntry*>& entries) {
  const std::size_t folders = comparison.folders.size();
  std::size_t compared = 0;
  std::vector<std::size_t> unavailable(folders, 0);
  std::vector<std::string> keys;                                    // the metrics, in the first entry's order
  std::map<std::string, std::vector<std::vector<double>>> changes;  // key -> per folder, the Δ% values
  std::vector<std::map<std::string, std::size_t>> bounds(folders);
  std::size_t bound_changed = 0;
  for (const ComparedEntry* entry : entries) {
    compared += entry->metrics.empty() ? 0 : 1;
    bool changed = false;
    for (std::size_t f = 0; f < folders; ++f) {
      if (entry->missing[f]) ++unavailable[f];
      if (entry->verdicts[f]) ++bounds[f][entry->verdicts[f]->bound];
      changed = changed || (entry->verdicts[f] && entry->verdicts[0] &&
                            entry->verdicts[f]->bound != entry->verdicts[0]->bound);
    }
    bound_changed += changed ? 1 : 0;
    for (const MetricRow& row : entry->metrics) {
      if (!row.numeric()) continue;
      auto [it, added] = changes.try_emplace(row.key, folders);
      if (added) keys.push_back(row.key);
      for (std::size_t f = 1; f < folders; ++f)
        if (row.delta_percent[f]) it->second[f].push_back(*row.delta_percent[f]);
    }
  }
  std::string out = fmt::format("\n== {}: {} point{}, {} compared in two folders or more ==\n",
                                series.empty() ? "every point" : "series=" + series, entries.size(),
                                entries.size() == 1 ? "" : "s", compared);
  for (std::size_t f = 0; f < folders; ++f)
    if (unavailable[f] > 0)
      out +=
          fmt::format("{}: {} point(s) failed or absent (listed below)\n", folder_letter(f), unavailable[f]);
  if (!keys.empty()) {
    // Δ% statistics as a table: the metric, then per folder the median, least and most.
    std::vector<std::vector<std::string>> cells{{"Δ% from A"}};
    for (std::size_t f = 1; f < folders; ++f)
      for (const char* what : {"median", "least", "most"})
        cells[0].push_back(fmt::format("{} {}", folder_letter(f), what));
    for (const std::string& key : keys) {
      std::vector<std::string> line{key};
      for (std::size_t f = 1; f < folders; ++f) {
        const std::vector<double>& values = changes.at(key)[f];
        if (values.empty()) {
          line.insert(line.end(), {"n/a", "n/a", "n/a"});
          continue;
        }
        for (const double q : {0.5, 0.0, 1.0}) line.push_back(fmt::format("{:+.2f}%", quantile(values, q)));
      }
      cells.push_back(std::move(line));
    }
    out += aligned_text(cells);
  }
  out += "Points per verdict:\n";
  for (std::size_t f = 0; f < folders; ++f) {
    std::vector<std::pair<std::size_t, std::string>> counted;
    for (const auto& [bound, count] : bounds[f]) counted.emplace_back(count, bound);
    std::stable_sort(counted.begin(), counted.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string line;
    for (const auto& [count, bound] : counted)
      line += fmt::format("{}{} {}", line.empty() ? "" : ", ", bound, count);
    out += fmt::format("  {}: {}\n", folder_letter(f), line.empty() ? "none" : line);
  }
  if (bound_changed > 0) out += fmt::format("  the bound differs from A's at {} point(s)\n", bound_changed);
  return out;
}

// The compact comparison of sweeps: a summary per series, the points that differ most, and the
// points failed or absent somewhere.
std::string sweeps_summary_text(const Comparison& comparison) {
  std::vector<std::string> series;
  std::map<std::string, std::vector<const ComparedEntry*>> by_series;
  for (const ComparedEntry& entry : comparison.entries) {
    const std::string name = series_of(comparison, entry);
    auto [it, added] = by_series.try_emplace(name);
    if (added) series.push_back(name);
    it->second.push_back(&entry);
  }
  std::string out;
  for (const std::string& name : series) out += series_text(comparison, name, by_series.at(name));

  std::vector<std::pair<double, const ComparedEntry*>> changed;
  for (const ComparedEntry& entry : comparison.entries)
    if (const double largest = largest_change(entry); largest >= 0) changed.emplace_back(largest, &entry);
  std::stable_sort(changed.begin(), changed.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::size_t shown = std::min(changed.size(), kPointsThatDifferMost);
  out += fmt::format(
      "\nThe {} point(s) of {} compared that differ most (largest |Δ%| of a metric above; "
      "--all-points for every point):\n",
      shown, changed.size());
  for (std::size_t i = 0; i < shown; ++i) out += entry_text(comparison, *changed[i].second);

  std::vector<const ComparedEntry*> unavailable;
  for (const ComparedEntry& entry : comparison.entries)
    if (std::any_of(entry.missing.begin(), entry.missing.end(), [](const auto& m) { return m.has_value(); }))
      unavailable.push_back(&entry);
  if (!unavailable.empty())
    out += fmt::format("\nPoints failed or absent in a folder ({}):\n", unavailable.size());
  for (const ComparedEntry* entry : unavailable) {
    out += "  " + labels_text(comparison.label_columns, entry->labels) + ":";
    for (std::size_t f = 0; f < entry->missing.size(); ++f)
      if (entry->missing[f]) out += fmt::format(" {}: {};", folder_letter(f), *entry->missing[f]);
    out.back() = '\n';
  }
  return out;
}

}  // namespace

std::vector<std::string> headline_metrics(const Comparison& comparison) {
  std::vector<std::string> present;
  for (const std::string& key : kHeadlineMetrics)
    for (const ComparedEntry& entry : comparison.entries)
      if (std::any_of(entry.metrics.begin(), entry.metrics.end(),
                      [&](const MetricRow& r) { return r.key == key; })) {
        present.push_back(key);
        break;
      }
  return present;
}

void keep_metrics(Comparison& comparison, const std::vector<std::string>& metrics) {
  std::vector<std::string> known;
  std::set<std::string> seen;
  for (const ComparedEntry& entry : comparison.entries)
    for (const MetricRow& row : entry.metrics)
      if (seen.insert(row.key).second) known.push_back(row.key);
  for (const std::string& metric : metrics)
    if (!seen.contains(metric))
      throw InputError(
          fmt::format("--metrics: no compared folder has a metric '{}'{} (the metrics are "
                      "summary.json's key paths, e.g. {})",
                      metric, did_you_mean(metric, known), joined(kHeadlineMetrics)));
  for (ComparedEntry& entry : comparison.entries) {
    std::vector<MetricRow> kept;
    for (const std::string& metric : metrics)
      for (MetricRow& row : entry.metrics)
        if (row.key == metric) kept.push_back(std::move(row));
    entry.metrics = std::move(kept);
  }
}

std::string comparison_text(const Comparison& comparison, bool every_point) {
  std::string out = "semsim compare";
  for (std::size_t f = 0; f < comparison.folders.size(); ++f)
    out += fmt::format("{} {} = {}{}", f == 0 ? ":" : ",", folder_letter(f), comparison.folders[f],
                       f == 0 ? " (baseline)" : "");
  out += "\n";
  if (comparison.sweeps) {
    std::size_t everywhere = 0;
    for (const ComparedEntry& entry : comparison.entries)
      everywhere += std::none_of(entry.missing.begin(), entry.missing.end(),
                                 [](const auto& m) { return m && *m == "absent"; });
    out +=
        fmt::format("Sweeps: points matched by {}: {} in every folder, {} in only some (listed as absent)\n",
                    joined(comparison.label_columns), everywhere, comparison.entries.size() - everywhere);
  }
  for (const std::string& note : comparison.notes) out += "Note: " + note + "\n";
  if (comparison.sweeps && !every_point) return out + sweeps_summary_text(comparison);
  for (const ComparedEntry& entry : comparison.entries) out += entry_text(comparison, entry);
  return out;
}

Json comparison_json(const Comparison& comparison) {
  Json j;
  j["kind"] = comparison.sweeps ? "sweeps" : "runs";
  j["folders"] = comparison.folders;
  if (comparison.sweeps) j["label_columns"] = comparison.label_columns;
  j["notes"] = comparison.notes;
  j["entries"] = Json::array();
  for (const ComparedEntry& entry : comparison.entries) {
    Json e;
    if (comparison.sweeps) {
      e["labels"] = Json::object();
      for (std::size_t i = 0; i < comparison.label_columns.size(); ++i)
        e["labels"][comparison.label_columns[i]] = entry.labels[i];
    }
    e["folders"] = Json::array();
    for (std::size_t f = 0; f < comparison.folders.size(); ++f) {
      Json folder{{"folder", comparison.folders[f]}};
      folder["state"] = entry.missing[f] ? *entry.missing[f] : "compared";
      folder["verdict"] = entry.verdicts[f]
                              ? Json{{"bound", entry.verdicts[f]->bound}, {"text", entry.verdicts[f]->text}}
                              : Json();
      e["folders"].push_back(std::move(folder));
    }
    e["metrics"] = Json::array();
    for (const MetricRow& row : entry.metrics) {
      Json values = Json::array(), delta = Json::array(), delta_percent = Json::array(),
           absent = Json::array();
      for (std::size_t f = 0; f < row.values.size(); ++f) {
        values.push_back(row.values[f] ? *row.values[f] : Json());
        if (!row.values[f]) absent.push_back(comparison.folders[f]);
        delta.push_back(row.delta[f] ? Json(*row.delta[f]) : Json());
        delta_percent.push_back(row.delta_percent[f] ? Json(*row.delta_percent[f]) : Json());
      }
      Json m{{"key", row.key}, {"values", std::move(values)}};
      if (!absent.empty()) m["absent_in"] = std::move(absent);
      if (row.numeric()) {
        m["delta"] = std::move(delta);
        m["delta_percent"] = std::move(delta_percent);
      }
      e["metrics"].push_back(std::move(m));
    }
    j["entries"].push_back(std::move(e));
  }
  return j;
}

}  // namespace semsim
