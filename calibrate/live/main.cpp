// semsim-live EXPORT --out DIR [--rank R] [--repeats N]: replays a step export on this machine's GPUs
// (what `semsim live` runs). Exit codes: 0 done, 1 failure (a failed correctness check included),
// 2 bad usage or input, 3 no CUDA device (nothing written).
#include <cuda_runtime.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "calibrate/bench/report.hpp"
#include "calibrate/live/replay.hpp"
#include "models/input_error.hpp"

namespace {

struct Options {
  std::string export_file, out;
  int rank = 0;
  int repeats = 5;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw semsim::InputError(arg + ": needs a value");
      return argv[++i];
    };
    if (arg == "--out")
      o.out = value();
    else if (arg == "--rank")
      o.rank = std::stoi(value());
    else if (arg == "--repeats")
      o.repeats = std::stoi(value());
    else if (o.export_file.empty() && arg[0] != '-')
      o.export_file = arg;
    else
      throw semsim::InputError("unknown argument '" + arg + "'");
  }
  if (o.export_file.empty() || o.out.empty())
    throw semsim::InputError("usage: semsim-live EXPORT --out DIR [--rank R] [--repeats N]");
  if (o.repeats < 1) throw semsim::InputError("--repeats: at least 1");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace semsim;
  Options options;
  StepExport data;
  try {
    options = parse(argc, argv);
    data = read_step_export(options.export_file);
    if (options.rank < 0 || options.rank >= data.ranks)
      throw InputError("--rank " + std::to_string(options.rank) + ": the export has " +
                       std::to_string(data.ranks) + " ranks");
  } catch (const std::exception& e) {
    std::cerr << "semsim-live: " << e.what() << "\n";
    return 2;
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::cerr << "semsim-live: no CUDA device\n";
    return 3;
  }
  try {
    // One GPU runs one rank's compute; a node with a GPU per rank runs them all and their exchanges.
    std::vector<int> ranks{options.rank}, devices{0};
    if (gpus >= data.ranks && data.ranks > 1) {
      ranks.clear(), devices.clear();
      for (int r = 0; r < data.ranks; ++r) ranks.push_back(r), devices.push_back(r);
    }
    live::Replay replay(data, ranks, devices);
    std::filesystem::create_directories(options.out);
    bench::CsvWriter checks(options.out + "/checks.csv",
                            {"check", "max_error", "tolerance", "passed", "note"});
    // Every check of a path the export runs must pass (the gate is BF16 whatever the weights); with
    // BF16 weights the FP8 paths may be unsupported here (no FP8 on this GPU), never in error.
    const bool fp8_unused = data.model.weights != "fp8";
    bool passed = true;
    for (const bench::CheckResult& r : replay.self_checks()) {
      checks.row({r.name, bench::number(r.max_error), bench::number(r.tolerance), r.passed ? "true" : "false",
                  r.note});
      const bool unused = fp8_unused && r.name.ends_with("_fp8") && r.note.starts_with("unsupported");
      passed = passed && (r.passed || unused);
    }
    if (!passed) {
      std::cerr << "semsim-live: a correctness check failed (" << options.out
                << "/checks.csv); nothing replayed\n";
      return 1;
    }
    bench::TimingOptions timing;
    timing.min_trials = options.repeats;
    timing.max_trials = std::max(options.repeats, timing.max_trials);
    bench::CsvWriter steps(options.out + "/steps.csv",
                           {"step", "rank", "phase", "median_us", "p10_us", "p90_us", "repeats", "launch"});
    for (const ExportedStep& step : data.steps) {
      for (const live::PhaseTiming& t : replay.run_step(step, timing))
        steps.row({std::to_string(step.index), std::to_string(t.rank), t.phase,
                   bench::number(t.timing.median * 1e6), bench::number(t.timing.p10 * 1e6),
                   bench::number(t.timing.p90 * 1e6), std::to_string(t.timing.trials),
                   t.graph ? "graph" : "eager"});
      std::cerr << "semsim-live: step " << step.index << " replayed\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "semsim-live: " << e.what() << "\n";
    return 1;
  }
}
