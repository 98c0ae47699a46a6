#pragma once
// `semsim plot DIR`: runs scripts/plot-sweep, embedded in the executable so that it works from any
// folder, with Debian's /usr/bin/python3 (where python3-matplotlib is installed), or else the first
// python3 on PATH.
#include <string>
#include <vector>

namespace semsim {

// Runs the plot script on a sweep output folder with the script's own options (`script_args`);
// returns its exit status. Throws InputError when `sweep_dir` holds no points.csv.
int run_plot_script(const std::string& sweep_dir, const std::vector<std::string>& script_args);

}  // namespace semsim
