#pragma once
// What `semsim validate serving-runs` writes into its output folder: rows.csv (a row per measured
// run: measured and simulated mean TTFT and TPOT, their signed relative errors, or why it was
// skipped), summary.md (median and p90 |error| per model x mode x metric, the skipped rows and their
// reasons) and scenarios/ID.yaml (each expressed row's scenario: `semsim run` of it runs the row
// again). The plot (validation.png) is drawn from rows.csv by scripts/plot-validation.
#include <string>
#include <vector>

#include "sim/validation/serving_run_validation.hpp"

namespace semsim {

std::string rows_csv(const std::vector<SimulatedRow>& rows);
// `runs_csv` names the measured file in the heading.
std::string summary_markdown(const std::vector<SimulatedRow>& rows, const std::string& runs_csv);

// InputError when `out_dir` holds anything but an earlier validation's outputs (checked before the
// rows run, and again by the writer).
void check_validation_out_dir(const std::string& out_dir);

// Writes rows.csv, summary.md and scenarios/ into `out_dir`, each file whole or not at all. The folder
// may hold only these and validation.png (an earlier validation's, replaced); anything else is an
// InputError and nothing is written.
void write_validation_outputs(const std::string& out_dir, const std::vector<SimulatedRow>& rows,
                              const std::string& runs_csv);

}  // namespace semsim
