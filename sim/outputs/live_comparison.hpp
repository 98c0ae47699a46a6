#pragma once
// `semsim compare-live`: the simulator's phase times of exported steps (calibrate/replay/step_export.hpp)
// against what `semsim live` measured replaying them (LIVE_DIR/steps.csv, calibrate/live/README.md).
#include <string>
#include <vector>

#include "calibrate/replay/step_export.hpp"
#include "sim/outputs/output_staging.hpp"

namespace semsim {

// One phase of one rank in one step, simulated and live; phase "step" is the sum of the phases
// the replay measured for that rank (the simulated sum over the same phases).
struct PhaseComparison {
  double rate = 0;
  long long step = 0;
  int rank = 0;
  std::string phase;
  double sim_s = 0, live_s = 0;
  double relative_error() const { return (sim_s - live_s) / live_s; }  // > 0: the simulator is slower
};

// Of one phase's |relative error| over the rows compared.
struct ErrorSummary {
  std::string phase;
  int rows = 0;
  double median = 0, p90 = 0;
};

// One rate's window: its tokens over the sum of its step times, a step lasting as long as its
// slowest replayed rank (sums of the replayed phases, simulated and live).
struct RateThroughput {
  double rate = 0;
  long long steps = 0;
  long long tokens = 0;
  double sim_s = 0, live_s = 0;
  int replayed_ranks = 0, ranks = 0;  // of the export's
  std::string phases;                 // the replayed ones, '+'-joined in the export's order
  // All ranks and phases: the window's step times are whole steps (else only the replayed part).
  bool whole_steps() const;
};

struct LiveComparison {
  std::vector<PhaseComparison> rows;
  // Live phases timed kernel by kernel (steps.csv's launch "eager": their CUDA graph could not be
  // captured), whose times hold the host's launch gaps, of all the live phases.
  int eager_phases = 0, live_phases = 0;
  std::vector<ErrorSummary> summary;       // per phase in the export's order, then "step"
  std::vector<RateThroughput> throughput;  // per pair, by rate
};

struct LiveRun {
  StepExport exported;
  std::string live_dir;
};

// InputError (file:line) on a steps.csv row naming a step, rank or phase the export does not have.
LiveComparison compare_live(const std::vector<LiveRun>& runs);

// What compare-live's output folder holds (OutputStaging::folder checks it before the comparison):
// comparison.csv, summary.csv, summary.md, throughput.csv and the plots/ scripts/plot-live draws.
OutputFolderContents live_comparison_folder_contents();

// comparison.csv, summary.csv, summary.md and throughput.csv staged in `staging`, then committed.
void write_live_comparison(const LiveComparison& comparison, OutputStaging& staging);

}  // namespace semsim
