// semsim-calibrate-bench: the calibration microbenchmarks. Writes, under --out:
//   environment.csv  the device, driver, CUDA, cuBLAS and NCCL versions, host, NICs, the date
//   checks.csv       correctness of every timed path against CPU references, and of every collective
//   kernels.csv      one row per kernel grid point (seconds per launch, median of trials)
//   collectives.csv  one row per collective, rank count and size (nccl-tests conventions)
// and progress on stderr. Started by a launcher (srun, mpirun; calibrate/runtime/launcher.hpp), each
// process is one rank driving one GPU: it writes under --out/rank-R/ (plus its heartbeat and status),
// measures the collectives over nodes with the others first, and rank 0 then measures the kernels.
// Exit codes: 0 done, 1 the device faulted or a rank failed (the files hold what was measured
// before), 2 bad usage or launcher environment, 3 no CUDA device.
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
#include "calibrate/runtime/launcher.hpp"
#include "models/input_error.hpp"

// Built without NCCL (none on the machine), the suite measures kernels only.
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
#include <nccl.h>

#include "calibrate/bench/collectives.hpp"
#include "calibrate/bench/heartbeat.hpp"
#endif

namespace {

using namespace semsim::bench;

struct Options {
  std::string out, plan;
  double budget = 420;        // seconds for the whole suite
  double rank_timeout = 300;  // a multi-process run: seconds a rank may go silent or without progress
  bool quick = false;
  bool kernels = true, collectives = true;
};

const char* kUsage =
    "usage: semsim-calibrate-bench --out DIR --plan FILE [--budget SECONDS] [--quick] [--only "
    "kernels|collectives] [--rank-timeout SECONDS]\n";

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

// InfiniBand/RoCE adapters of this node, as the kernel lists them.
int network_adapters() {
  std::error_code ignored;
  int count = 0;
  for (std::filesystem::directory_iterator it("/sys/class/infiniband", ignored), end; !ignored && it != end;
       it.increment(ignored))
    ++count;
  return count;
}

void write_environment(const std::string& path, const BenchContext& c, int gpus, const Options& options,
                       const semsim::RankIdentity& rank) {
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
  csv.row({"host", rank.host});
  csv.row({"nics", std::to_string(network_adapters())});
  if (rank.launcher == semsim::Launcher::kNone) return;
  csv.row({"launcher", semsim::launcher_name(rank.launcher)});
  csv.row({"run", rank.run});
  for (const auto& [key, value] : {std::pair{"rank", rank.rank},
                                   {"ranks", rank.ranks},
                                   {"local_rank", rank.local_rank},
                                   {"local_ranks", rank.local_ranks},
                                   {"node", rank.node}})
    csv.row({key, std::to_string(value)});
}

// Self-checks, then the kernels; false when the device faulted.
bool run_kernels(BenchContext& context, const Options& options, double seconds, CsvWriter& checks,
                 const Progress& progress) {
  std::set<std::string> passed;
  for (const CheckResult& r : run_self_checks(context)) {
    checks.row({r.name, number(r.max_error), number(r.tolerance), r.passed ? "true" : "false", r.note});
    if (r.passed) passed.insert(r.name);
    progress.line("check " + r.name + ": " + (r.passed ? "passed" : "FAILED") + " (error " +
                  number(r.max_error) + ", tolerance " + number(r.tolerance) + ")" +
                  (r.note.empty() ? "" : " " + r.note));
  }
  std::vector<BenchGroup> groups = suite_groups(context, read_plan(options.plan));
  CsvWriter kernels(options.out + "/kernels.csv", kKernelColumns);
  TimingOptions timing;
  if (options.quick) timing.min_trials = 3, timing.case_seconds = 0.005;
  return run_groups(context, groups, passed, seconds, timing, kernels, progress);
}

#ifndef SEMSIM_BENCH_WITHOUT_NCCL
// One rank of a launcher's run: the collectives with every rank first (they need all of them at
// once), then, on rank 0 alone, the kernels (one GPU measures them for all). The heartbeat watch
// stops every rank within a second of a fault anywhere; the rank's status says how it ended.
int run_rank(const Options& options, const semsim::RankIdentity& rank, int gpus) {
  const std::string raw = options.out;
  Options own = options;
  own.out = semsim::rank_folder(raw, rank.rank);
  std::filesystem::create_directories(own.out);
  const auto limit = std::chrono::duration_cast<semsim::RendezvousClock::duration>(
      std::chrono::duration<double>(options.rank_timeout));
  RankHeartbeat heartbeat(rank, raw, semsim::WatchLimits{limit, limit});
  const Progress progress;
  try {
    const int device = semsim::rank_device(rank, gpus);
    BenchContext context(device, options.quick);
    write_environment(own.out + "/environment.csv", context, gpus, options, rank);
    progress.line("rank " + std::to_string(rank.rank) + " of " + std::to_string(rank.ranks) + " on " +
                  rank.host + ", GPU " + std::to_string(device) + ": " + context.properties.name);
    CsvWriter checks(own.out + "/checks.csv", kCheckColumns);
    const bool kernels = options.kernels && rank.rank == 0;
    if (options.collectives) {
      CsvWriter collectives(own.out + "/collectives.csv", kCollectiveColumns);
      const CollectiveWatch watch{options.rank_timeout, [&] { return heartbeat.abort_reason(); },
                                  [&](const std::string& phase) { heartbeat.progressed(phase); }};
      run_world_collectives(rank, device, raw, options.budget * (kernels ? 0.35 : 1.0), options.quick, watch,
                            collectives, checks, progress);
    }
    if (kernels && !run_kernels(context, own, options.budget - progress.elapsed(), checks, progress)) {
      heartbeat.finish("failed: the device faulted (see kernels.csv)");
      return 1;
    }
  } catch (const std::exception& e) {
    progress.line(std::string("stopped: ") + e.what());
    heartbeat.finish(std::string("failed: ") + e.what());
    return 1;
  }
  heartbeat.finish("ok");
  progress.line("done");
  return 0;
}
#endif

int run(const Options& options) {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::cerr << "semsim-calibrate-bench: no CUDA device\n";
    return 3;
  }
  const semsim::RankIdentity rank =
      semsim::rank_identity(semsim::process_environment(), semsim::local_host_name(), gpus);
  if (rank.launcher != semsim::Launcher::kNone) {
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
    return run_rank(options, rank, gpus);
#else
    std::cerr << "semsim-calibrate-bench: a multi-process run needs NCCL (this build has none)\n";
    return 2;
#endif
  }
  std::filesystem::create_directories(options.out);
  const Progress progress;
  BenchContext context(0, options.quick);
  write_environment(options.out + "/environment.csv", context, gpus, options, rank);
  progress.line(std::string("device 0 of ") + std::to_string(gpus) + ": " + context.properties.name);

  CsvWriter checks(options.out + "/checks.csv", kCheckColumns);
  bool healthy = true;
  if (options.kernels) {
    // Collectives need far less time than kernels; on one GPU there are hardly any.
    const double share = options.collectives ? (gpus > 1 ? 0.65 : 0.9) : 1.0;
    healthy = run_kernels(context, options, options.budget * share - progress.elapsed(), checks, progress);
  }
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  if (options.collectives && healthy) {
    CsvWriter collectives(options.out + "/collectives.csv", kCollectiveColumns);
    run_collectives(gpus, options.budget - progress.elapsed(), options.quick, collectives, checks, progress);
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
      } else if (arg == "--rank-timeout") {
        options.rank_timeout = std::stod(value());
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
  } catch (const semsim::InputError& e) {  // a bad launcher environment
    std::cerr << "semsim-calibrate-bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "semsim-calibrate-bench: " << e.what() << "\n";
    return 1;
  }
}
