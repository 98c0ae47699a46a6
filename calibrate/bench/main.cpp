// semsim-calibrate-bench: the calibration microbenchmarks. Writes, under --out:
//   environment.csv  the device, driver, CUDA, cuBLAS and NCCL versions, the date
//   checks.csv       correctness of every timed path against CPU references
//   kernels.csv      one row per kernel grid point (seconds per launch, median of trials)
//   collectives.csv  one row per collective, rank count and size (nccl-tests conventions)
// and progress on stderr. Exit codes: 0 done, 1 the device faulted (the files hold what was
// measured before), 2 bad usage, 3 no CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/check.hpp"
#include "calibrate/bench/report.hpp"
#include "calibrate/bench/runner.hpp"

// Built without NCCL (none on the machine), the suite measures kernels only.
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
#include <nccl.h>

#include "calibrate/bench/collectives.hpp"
#endif

namespace {

using namespace semsim::bench;

struct Options {
  std::string out, plan;
  double budget = 420;  // seconds for the whole suite
  bool quick = false;
  bool kernels = true, collectives = true;
};

const char* kUsage =
    "usage: semsim-calibrate-bench --out DIR --plan FILE [--budget SECONDS] [--quick] [--only "
    "kernels|collectives]\n";

std::string version(int code, int major_unit, int minor_unit) {
  return std::to_string(code / major_unit) + "." + std::to_string(code % major_unit / minor_unit) + "." +
         std::to_string(code % minor_unit);
}

std::string kernel_driver_version() {
  std::ifstream in(
      "/proc/driver/nvidia/version");  // "NVRM version: NVIDIA UNIX ... Kernel Module  580.82.07 ..."
  std::string line;
  std::getline(in, line);
  std::istringstream words(line);
  std::string word, previous;
  while (words >> word) {
    if (previous == "Module") return word;
    previous = word;
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void write_environment(const std::string& path, const BenchContext& c, int gpus, const Options& options) {
  int runtime = 0, driver = 0, cublas = 0, nccl = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cublasGetVersion(c.blas, &cublas);
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  ncclGetVersion(&nccl);
#endif
  CsvWriter csv(path, {"key", "value"});
  csv.row({"date", utc_now()});
  csv.row({"gpu", c.properties.name});
  csv.row({"gpus", std::to_string(gpus)});
  csv.row(
      {"compute_capability", std::to_string(c.properties.major) + "." + std::to_string(c.properties.minor)});
  csv.row({"sms", std::to_string(c.properties.multiProcessorCount)});
  csv.row({"memory_bytes", std::to_string(c.properties.totalGlobalMem)});
  csv.row({"l2_bytes", std::to_string(c.properties.l2CacheSize)});
  csv.row({"driver", kernel_driver_version()});
  csv.row({"cuda_driver_api", version(driver, 1000, 10)});
  csv.row({"cuda", version(runtime, 1000, 10)});
  csv.row({"cublas", version(cublas, 10000, 100)});
  csv.row({"nccl", nccl ? version(nccl, 10000, 100) : "none"});
  csv.row({"quick", options.quick ? "true" : "false"});
  csv.row({"budget_seconds", number(options.budget)});
}

int run(const Options& options) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::cerr << "semsim-calibrate-bench: no CUDA device\n";
    return 3;
  }
  std::filesystem::create_directories(options.out);
  const Progress progress;
  BenchContext context(0, options.quick);
  write_environment(options.out + "/environment.csv", context, gpus, options);
  progress.line(std::string("device 0 of ") + std::to_string(gpus) + ": " + context.properties.name);

  bool healthy = true;
  if (options.kernels) {
    std::set<std::string> passed;
    CsvWriter checks(options.out + "/checks.csv", {"check", "max_error", "tolerance", "passed", "note"});
    for (const CheckResult& r : run_self_checks(context)) {
      checks.row({r.name, number(r.max_error), number(r.tolerance), r.passed ? "true" : "false", r.note});
      if (r.passed) passed.insert(r.name);
      progress.line("check " + r.name + ": " + (r.passed ? "passed" : "FAILED") + " (error " +
                    number(r.max_error) + ", tolerance " + number(r.tolerance) + ")" +
                    (r.note.empty() ? "" : " " + r.note));
    }
    std::vector<BenchGroup> groups = suite_groups(context, read_plan(options.plan));
    CsvWriter kernels(options.out + "/kernels.csv", kKernelColumns);
    // Collectives need far less time than kernels; on one GPU there are hardly any.
    const double share = options.collectives ? (gpus > 1 ? 0.65 : 0.9) : 1.0;
    TimingOptions timing;
    if (options.quick) timing.min_trials = 3, timing.case_seconds = 0.005;
    healthy = run_groups(context, groups, passed, options.budget * share - progress.elapsed(), timing,
                         kernels, progress);
  }
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  if (options.collectives && healthy) {
    CsvWriter collectives(options.out + "/collectives.csv", kCollectiveColumns);
    run_collectives(gpus, options.budget - progress.elapsed(), options.quick, collectives, progress);
  }
#else
  if (options.collectives) progress.line("collectives: not measured (built without NCCL)");
#endif
  progress.line(healthy ? "done" : "stopped: the device faulted (see kernels.csv)");
  return healthy ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--out") {
        options.out = value();
      } else if (arg == "--plan") {
        options.plan = value();
      } else if (arg == "--budget") {
        options.budget = std::stod(value());
      } else if (arg == "--quick") {
        options.quick = true;
      } else if (arg == "--only") {
        const std::string only = value();
        if (only != "kernels" && only != "collectives")
          throw std::invalid_argument("--only kernels|collectives");
        options.kernels = only == "kernels";
        options.collectives = only == "collectives";
      } else {
        throw std::invalid_argument("unknown argument " + arg);
      }
    } catch (const std::exception& e) {
      std::cerr << "semsim-calibrate-bench: " << e.what() << "\n" << kUsage;
      return 2;
    }
  }
  if (options.out.empty() || (options.kernels && options.plan.empty())) {
    std::cerr << kUsage;
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "semsim-calibrate-bench: " << e.what() << "\n";
    return 1;
  }
}
