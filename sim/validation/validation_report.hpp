#pragma once
// What `semsim validate serving-runs` writes into its output folder: rows.csv (a row per measured
// run: measured and simulated mean TTFT and TPOT, their signed relative errors, or why it was
// skipped), summary.md (median and p90 |error| per model x mode x metric, the skipped rows and their
// reasons) and scenarios/ID.yaml (each expressed row's scenario: `semsim run` of it runs the row
// again). The plot (validation.png) is drawn from rows.csv by scripts/plot-validation.
#include <string>
#include <vector>

#include "sim/outputs/output_staging.hpp"
#include "sim/validation/serving_run_validation.hpp"

namespace semsim {

std::string rows_csv(const std::vector<SimulatedRow>& rows);
// `runs_csv` names the measured file in the heading.
std::string summary_markdown(const std::vector<SimulatedRow>& rows, const std::string& runs_csv);

// What a validation's output folder holds (OutputStaging::folder checks it before the rows run):
// rows.csv, summary.md, validation.png and scenarios/.
OutputFolderContents validation_folder_contents();

// Writes scenarios/ into `out_dir`, each file whole (an earlier validation's other scenarios removed),
// and rows.csv and summary.md through `staging`, whose folder `out_dir` is, then commits it.
void write_validation_outputs(OutputStaging& staging, const std::string& out_dir,
                              const std::vector<SimulatedRow>& rows, const std::string& runs_csv);

}  // namespace semsim
