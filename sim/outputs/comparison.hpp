#pragma once
// `semsim compare`: run outputs side by side (every summary metric with its Δ and Δ% from the
// baseline, the first folder) and, per run, a verdict of what bounds it. Pure: it works on summaries
// already read (compare_command.cpp reads the folders), so tests can hand it made-up ones.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace semsim {

// A summary as flatten_summary() gives it: values by dotted key path, in summary.json's order.
using FlatSummary = std::vector<std::pair<std::string, nlohmann::ordered_json>>;

// ---- What bounds a run ---------------------------------------------------------------------------
// Decided from its summary alone, by these rules in order:
// 1. Batch limits (summary.json `batch_limits`): the one that held work back in the largest share of
//    the steps bounds the run when that share is at least kBatchLimitStepShare — "KV capacity" (a
//    waiting request's KV footprint did not fit in what was free) or "batch cap" (the token budget
//    spent with tokens left out, or serving.max_running_requests running with requests waiting).
// 2. Otherwise the largest part of the step time along the critical path (`phase_share`):
//    "all-to-all" (dispatch + combine), "attention", the experts — "expert imbalance" when the
//    slowest device's expert time is at least kExpertImbalance × the devices' mean
//    (`experts_device_seconds`), else "expert compute"; "experts" for a summary without device
//    times —, "Attention-TP collectives" (reduce-scatter + all-gather), "token permutation"
//    (permute) or "dense layers and LM head" (other).
// The verdict line gives the numbers the rule used, the step-time split and the share of the run
// the engine spent stepping (below 100 %: it waited for arrivals).
inline constexpr double kBatchLimitStepShare = 0.25;
inline constexpr double kExpertImbalance = 1.5;

struct BoundVerdict {
  std::string bound;  // "KV capacity", "batch cap", "all-to-all", "attention", "expert imbalance", ...
                      // ("none": no steps)
  std::string text;   // "bound by all-to-all: dispatch+combine 46.0% of step time (...)..."
};
BoundVerdict bound_verdict(const FlatSummary& summary);

// ---- Side by side ---------------------------------------------------------------------------------
// One metric in every folder (baseline first). `delta` and `delta_percent` are set for a folder when
// its value and the baseline's are both numbers (Δ% also needs a baseline other than 0, or both 0).
struct MetricRow {
  std::string key;
  std::vector<std::optional<nlohmann::ordered_json>> values;  // nullopt: the key is absent there
  std::vector<std::optional<double>> delta, delta_percent;    // [0], the baseline's, always nullopt
  bool numeric() const;                                       // every value present is a number
};

// Every metric whose values are all numbers, and every other one whose values differ, in the
// baseline's key order, then the keys only later folders have. A null summary: absent from that folder.
std::vector<MetricRow> compare_metrics(const std::vector<const FlatSummary*>& summaries);

// A sweep folder's points.csv, read: the points' coordinates (series and axis values) and results.
struct SweepPointResult {
  std::vector<std::string> labels;  // one per SweepResults::label_columns
  bool ok = false;
  std::string error;    // a failed point's
  FlatSummary summary;  // an ok point's metrics
};
struct SweepResults {
  std::vector<std::string> label_columns;
  std::vector<SweepPointResult> points;
  std::size_t torn_rows = 0;  // dropped by the reader: an interrupted sweep's partial last line
};

// One run, or one sweep point, across the folders.
struct ComparedEntry {
  std::vector<std::string> labels;  // a sweep point's coordinates; empty for runs
  // Per folder: nullopt when compared; else why not: "absent" or "failed: ERROR".
  std::vector<std::optional<std::string>> missing;
  std::vector<MetricRow> metrics;
  std::vector<std::optional<BoundVerdict>> verdicts;  // per folder, for those compared
};

struct Comparison {
  std::vector<std::string> folders;  // baseline first
  bool sweeps = false;
  std::vector<std::string> label_columns;  // sweeps: what points are matched by
  std::vector<std::string> notes;          // what the reader must know beyond the entries
  std::vector<ComparedEntry> entries;      // runs: one
};

Comparison compare_runs(const std::vector<std::string>& folders, const std::vector<FlatSummary>& summaries);
// Points are matched by their labels; a point that only some folders hold is an entry with the
// others `absent`. Throws InputError when the folders' label columns differ or one folder has two
// points with the same labels (points could not be matched).
Comparison compare_sweeps(const std::vector<std::string>& folders, const std::vector<SweepResults>& sweeps);

// ---- What is shown ---------------------------------------------------------------------------------
// Sweeps hold thousands of metric rows: unless told otherwise `semsim compare` shows these of them,
// a summary per series and the kPointsThatDifferMost points whose metrics differ most.
inline const std::vector<std::string> kHeadlineMetrics{"throughput_tok_s.output", "ttft_s.mean", "ttft_s.p99",
                                                       "tpot_s.mean", "tpot_s.p99"};
inline constexpr std::size_t kPointsThatDifferMost = 5;

// Keeps the metric rows named in `metrics` (`--metrics a,b`), in that order. A name that no compared
// folder has is an InputError naming the option.
void keep_metrics(Comparison& comparison, const std::vector<std::string>& metrics);
// The headline metrics that the folders have.
std::vector<std::string> headline_metrics(const Comparison& comparison);

// The text `semsim compare` prints, and the same as JSON (`--json`). Runs: every metric kept. Sweeps:
// with `every_point` each point's table, else per series (the `series` column's values, or the whole
// sweep) the points compared and failed, each metric's Δ% from the baseline (median, least, most)
// and how many points each verdict bounds, then the points that differ most (the largest |Δ%| of a
// metric kept), and the failed or absent points.
std::string comparison_text(const Comparison& comparison, bool every_point = true);
nlohmann::ordered_json comparison_json(const Comparison& comparison);

}  // namespace semsim
