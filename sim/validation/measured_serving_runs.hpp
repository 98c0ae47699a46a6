#pragma once
// Measured serving runs (../shared/serving-runs/README.md): aiconfigurator's silicon-sample CSV, one
// row per benchmark of a serving engine at a fixed concurrency — the model, precision, fixed input and
// output lengths, the parallel layout (of the server, or of each pool of a disaggregated one), and the
// measured mean TTFT and TPOT. Read strictly: an unknown or missing column, a malformed value or a
// repeated id is an InputError naming file, line and column. What a row means for a simulation is
// judged later (serving_run_scenario.hpp), not here.
#include <optional>
#include <string>
#include <vector>

namespace semsim {

// One server's (or pool's) layout as a row gives it; a blank cell is nothing.
struct MeasuredLayout {
  std::optional<int> batch_size;  // the engine's maximum running requests, per worker
  std::optional<int> workers;     // a disaggregated pool's instances (`*_num_workers`)
  std::optional<int> tp, pp, attention_dp, moe_tp, moe_ep;
};

struct MeasuredServingRun {
  int line = 0;        // in the CSV file
  std::string id;      // letters, digits, '.', '_' and '-' only (it names files)
  std::string source;  // `silicon_data_source`: where the measurement came from, `key=value; ...`
  std::string backend, backend_version, model_path, system, precision, mode;
  int isl = 0, osl = 0;            // fixed input and output lengths
  std::optional<int> concurrency;  // `silicon_concurrency=N` in the source: N requests held in flight
  MeasuredLayout server;           // mode agg
  MeasuredLayout prefill, decode;  // mode disagg
  double ttft_ms = 0, tpot_ms = 0;
};

std::vector<MeasuredServingRun> read_measured_serving_runs(const std::string& path);

// The row's layout in a few words, as the file gives it: "tp2", "tp16 moe tp16 ep1", a disaggregated
// run's "prefill 5 x tp1 / decode 11 x tp1" ("prefill tp1 / decode tp1" without the workers).
std::string layout_label(const MeasuredServingRun& run, bool with_workers = true);

// The rows whose id matches the regular expression `only` (all when empty); an InputError naming
// --only when it is not one or matches no row.
std::vector<MeasuredServingRun> rows_matching(std::vector<MeasuredServingRun> runs, const std::string& only);

}  // namespace semsim
