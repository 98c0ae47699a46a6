#pragma once
// Run outputs: summary.json, requests.csv, steps.csv, the bench_serving-style summary text and result
// JSON.
// Files are written into a staging folder and renamed into place only when everything succeeded,
// so an output folder never holds a partial or torn file.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"

namespace semsim {

nlohmann::ordered_json summary_json(const Scenario& scenario, const MemoryPlan& memory,
                                    const Summary& summary);
// summary.json's values by dotted key path ("ttft_s.p99"), in its order, without wall_seconds (it
// differs between identical runs): the metric columns of points.csv and what `semsim compare` compares.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_summary(
    const nlohmann::ordered_json& summary);
// The console summary: bench_serving's block (its lines, in its order), then the simulation's own.
std::string summary_text(const nlohmann::ordered_json& summary);
// The run as SGLang's / vLLM's bench_serving save it (`--result-json`): their result keys (both
// names where they differ), statistics in ms (null over an empty set), the per-request details.
nlohmann::ordered_json bench_serving_json(const Scenario& scenario, const RunResult& run,
                                          const Summary& summary);

// A routing drift (workloads/routing_drift.hpp) as summary.json and `place eval --json` write it:
// every key present, null when not measured; and as the line the text outputs print.
nlohmann::ordered_json routing_drift_json(const std::optional<RoutingDrift>& drift);
std::string routing_drift_text(const nlohmann::ordered_json& drift);  // "" when not measured
// How a placement's token table matched the evaluated tokens; the text is "" when it was keyed by
// their vocabulary already (or there is no table).
nlohmann::ordered_json token_table_json(const std::optional<TokenTableMatch>& match);
std::string token_table_text(const nlohmann::ordered_json& table);
// Which evaluated requests the plan's profile saw (when the plan names its profile's trace); the
// text warns when some did.
nlohmann::ordered_json profile_overlap_json(const std::optional<ProfileOverlap>& overlap);
std::string profile_overlap_text(const nlohmann::ordered_json& overlap);
// A replayed trace against a group-limited model (workloads/expert_groups.hpp): the counts, null
// otherwise; the text gives them and warns when some routings span more groups than allowed.
nlohmann::ordered_json group_limit_json(const std::optional<GroupLimitCheck>& check);
std::string group_limit_text(const nlohmann::ordered_json& check);

// A disaggregated run's summary.json: the requests end to end (TTFT through the prefill pool and
// the KV transfer) over the decode pool's summary keys, its step and MoE values the decode pool's,
// then `disaggregation` with the KV transfers and each pool's own summary (throughput per node,
// busy share, saturated window).
nlohmann::ordered_json disaggregated_summary_json(const Scenario& scenario, const DisaggregatedPlan& plan,
                                                  const DisaggregatedResult& run, const GoodputSlos& slos);
// The requests of a disaggregated run end to end: the decode pool's records with both pools' tokens.
RunResult end_to_end(const DisaggregatedResult& run);

void write_requests_csv(const std::string& path, const RunResult& run);
// Per request: its prefill and decode ranks, bytes, and when its KV cache left and landed.
void write_kv_transfers_csv(const std::string& path, const DisaggregatedResult& run);
void write_steps_csv(const std::string& path, const RunResult& run);
// Per MoE layer over the run: phase seconds, imbalance (max / mean device load) and each device's
// served routed activations.
void write_layers_csv(const std::string& path, const RunResult& run);
void write_text_file(const std::string& path, const std::string& text);

// Whether a file name in an output folder is one of its command's outputs.
using IsOutputFile = std::function<bool(const std::string& file_name)>;
bool is_run_file(const std::string& file_name);  // what `semsim run` writes into --out

class OutputStaging {
 public:
  // Creates out_dir and a private staging folder. out_dir may hold only earlier outputs of the
  // command (`is_output`), which a commit replaces, and staging folders of killed runs, removed here.
  OutputStaging(const std::string& out_dir, IsOutputFile is_output);
  ~OutputStaging();  // discards what was not committed
  OutputStaging(const OutputStaging&) = delete;
  OutputStaging& operator=(const OutputStaging&) = delete;

  std::string staged(const std::string& file_name);  // path to write `file_name` to
  // Path to write a file that belongs at `destination`, outside out_dir: staged beside it (same
  // file system, so the rename is atomic) and removed unless committed.
  std::string staged_at(const std::string& destination);
  void commit();  // renames every staged file into place

 private:
  std::string out_dir_;
  IsOutputFile is_output_;
  std::string staging_dir_;
  std::vector<std::string> files_;
  std::vector<std::pair<std::string, std::string>> outside_;  // staged path, destination
};

}  // namespace semsim
