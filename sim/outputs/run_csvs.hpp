#pragma once
// A run's CSV files: requests.csv, steps.csv and layers.csv (a disaggregated run writes the last
// two per pool), and a disaggregated run's kv_transfers.csv.
#include <string>

#include "sim/run_result.hpp"
#include "sim/simulation.hpp"

namespace semsim {

void write_requests_csv(const std::string& path, const RunResult& run);
void write_steps_csv(const std::string& path, const RunResult& run);
// Per MoE layer over the run: phase seconds, imbalance (max / mean device load) and each device's
// served routed activations.
void write_layers_csv(const std::string& path, const RunResult& run);
// Per request: its prefill and decode ranks, bytes, and when its KV cache left and landed.
void write_kv_transfers_csv(const std::string& path, const DisaggregatedResult& run);

}  // namespace semsim
