#pragma once
// The plot scripts of scripts/ (plot-sweep, plot-live), embedded in the executable so that they
// work from any folder.
#include <string>
#include <string_view>
#include <vector>

namespace semsim {

// Runs the embedded `script` with `args` under Debian's /usr/bin/python3 (where python3-matplotlib
// is installed), or else the first python3 on PATH; returns its exit status.
int run_plot_script(std::string_view script, const std::vector<std::string>& args);

}  // namespace semsim
