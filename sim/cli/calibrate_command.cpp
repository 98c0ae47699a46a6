// `semsim calibrate`: runs the CUDA/NCCL microbenchmarks (semsim-calibrate-bench) on this machine's
// GPUs and fits a measured profile from what they wrote, or fits results measured elsewhere. Started
// by a launcher (srun, mpirun: one process per GPU over nodes), every rank measures into its own
// folder of the shared raw folder and rank 0, once every rank has ended well, fits them all. No
// GPU, no CUDA in this build, a bad launcher environment or bad raw results are InputErrors (exit
// code 2); a rank that fails, dies or hangs ends the run without a profile (exit code 1).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "calibrate/format/kernels.hpp"
#include "calibrate/import/measured_profile.hpp"
#include "calibrate/runtime/launcher.hpp"
#include "calibrate/runtime/rendezvous.hpp"
#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "models/presets.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/runs/child_process.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

struct CalibrateOptions {
  std::string out;            // the profile to write
  std::string raw;            // where the raw CSVs go (default: beside the profile, <profile stem>-raw/)
  std::string from_raw;       // fit these raw results instead of measuring
  std::string device;         // device preset (default: the one the GPU's name matches)
  std::string bench;          // the benchmark executable (default: semsim-calibrate-bench beside semsim)
  std::string write_plan;     // only write the kernel plan (calibrate/kernel-plan.txt) here
  double budget = 420;        // seconds for the microbenchmarks
  bool quick = false;         // coarse grids: a smoke test of every path
  double rank_timeout = 300;  // a multi-process run: seconds a rank may go without progress
};

bool machine_has_nvidia_gpu() {
  const fs::path gpus("/proc/driver/nvidia/gpus");
  std::error_code ignored;
  return fs::is_directory(gpus, ignored) && !fs::is_empty(gpus, ignored);
}

std::string default_bench() {
  std::error_code ignored;
  return (fs::read_symlink("/proc/self/exe", ignored).parent_path() / "semsim-calibrate-bench").string();
}

// Runs the microbenchmarks into `raw`; false when this process is a rank other than 0 of a
// multi-process run, which leaves the fit to rank 0.
bool measure(const CalibrateOptions& options, const std::string& raw) {
  const RankIdentity rank = rank_identity(process_environment(), local_host_name());
  const bool many = rank.launcher != Launcher::kNone;
  const std::string bench = options.bench.empty() ? default_bench() : options.bench;
  if (!fs::exists(bench)) {
    if (!machine_has_nvidia_gpu())
      throw InputError(
          "calibrate: no CUDA GPU on this machine, and this semsim was built without CUDA; run it on the "
          "GPU machine to calibrate (scripts/calibrate-device), or fit results measured there with "
          "--from-raw DIR");
    throw InputError(
        "calibrate: this semsim was built without CUDA (no " + bench +
        "): build it with -DSEMSIM_WITH_CUDA=ON (scripts/calibrate-device does), or pass --bench PATH");
  }
  const bool raw_existed = fs::exists(raw);
  // Every rank has its own folder (its raw results, heartbeat and status): the ranks never write one file.
  const std::string own = many ? rank_folder(raw, rank.rank) : raw;
  fs::create_directories(own);
  const std::string plan = (fs::path(own) / "kernel-plan.txt").string();
  write_text_file(plan, kernel_plan());
  const std::string program = fs::absolute(bench).string();  // a bare name is this file, not one on PATH
  std::vector<std::string> args{
      program, "--out", raw, "--plan", plan, "--budget", fmt::format("{}", options.budget)};
  if (options.quick) args.push_back("--quick");
  if (many) args.insert(args.end(), {"--rank-timeout", fmt::format("{}", options.rank_timeout)});
  // Its progress shows as it goes: it writes to this process's stdout and stderr.
  const int code = ChildProcess::run_program(args).wait().shell_code();
  // Nothing was measured: leave nothing behind (a rank of many leaves the others' results alone).
  if (code == 3 && !raw_existed && !many) fs::remove_all(raw);
  if (code == 3)
    throw InputError(
        "calibrate: no CUDA GPU on this machine (the microbenchmarks found none); run it on the GPU "
        "machine, or fit results measured there with --from-raw DIR");
  if (code == 2 && many)
    throw InputError(
        fmt::format("calibrate: rank {} ({}): bad usage or launcher "
                    "environment (see above)",
                    rank.rank, rank.host));
  if (code != 0)
    throw std::runtime_error(fmt::format(
        "calibrate: {}{} exited with {}; what it measured is in {} (fit it with --from-raw {}); no profile "
        "was written",
        many ? fmt::format("rank {} ({}): ", rank.rank, rank.host) : "", bench, code, own, raw));
  if (!many) return true;
  if (rank.rank != 0) {
    std::cout << fmt::format("rank {} of {} ({}): measured into {}; rank 0 fits the profile\n", rank.rank,
                             rank.ranks, rank.host, own);
    return false;
  }
  // Rank 0 ends with the others' last measurements still in flight: wait for every rank's status.
  try {
    const auto limit = std::chrono::duration_cast<RendezvousClock::duration>(
        std::chrono::duration<double>(options.rank_timeout));
    wait_for_ranks(raw, rank.run, rank.ranks, WatchLimits{limit, limit});
  } catch (const CalibrationFault& fault) {
    throw std::runtime_error(fmt::format(
        "calibrate: {}; the ranks' raw results are kept in {} (fit what they measured with --from-raw {}); "
        "no profile was written",
        fault.what(), raw, raw));
  }
  return true;
}

void print_summary(const CalibrationProfile& p, const std::string& out, const std::string& raw) {
  std::cout << fmt::format("profile {} for {} ({}, {}): {} kernel tables, {} collective fits\n", p.name,
                           p.device, p.provenance->gpu, p.provenance->date, p.kernels.size(),
                           p.collectives.size());
  if (const auto& t = p.provenance->topology)
    std::cout << fmt::format("  measured on {} node(s) of {} GPU(s), {} NIC(s) per node\n", t->nodes,
                             t->gpus_per_node, t->nics_per_node);
  for (const KernelTable& t : p.kernels)
    std::cout << fmt::format("  {:<22} {:<4} {:<58} residuals median {:5.1f}% p95 {:5.1f}% ({} points)\n",
                             t.kernel, t.dtype, t.shape, 100 * t.residuals.median, 100 * t.residuals.p95,
                             t.residuals.samples);
  for (const CollectiveFit& f : p.collectives)
    std::cout << fmt::format(
        "  {:<15} {} x{:<3} alpha {:6.1f} us, bus {:6.1f} GB/s ({:3.0f}% of the link), residuals median "
        "{:5.1f}% "
        "p95 {:5.1f}%\n",
        f.collective, f.level, f.ranks, f.alpha * 1e6, f.bus_bandwidth / 1e9, 100 * f.efficiency,
        100 * f.residuals.median, 100 * f.residuals.p95);
  std::cout << fmt::format(
      "  efficiency gemm {:.2f} attention {:.2f} memory {:.2f} scaleup {:.2f} scaleout {:.2f}; overhead "
      "kernel "
      "{:.1f} us, collective {:.1f} us\nWrote {} (raw results in {})\n",
      p.gemm_efficiency, p.attention_efficiency, p.memory_efficiency, p.scaleup_efficiency,
      p.scaleout_efficiency, p.kernel_overhead * 1e6, p.collective_overhead * 1e6, out, raw);
}

int calibrate(const CalibrateOptions& options) {
  if (!options.write_plan.empty()) {
    write_atomically(options.write_plan,
                     [](const std::string& path) { write_text_file(path, kernel_plan()); });
    return 0;
  }
  if (options.out.empty()) throw InputError("calibrate: --out FILE is required (the profile to write)");
  // Before hours of measuring.
  check_output_file("--out", options.out,
                    options.from_raw.empty() ? std::vector<std::string>{} : std::vector{options.from_raw});
  const fs::path out(options.out);
  const std::string raw = !options.from_raw.empty() ? options.from_raw
                          : !options.raw.empty()
                              ? options.raw
                              : (out.parent_path() / (out.stem().string() + "-raw")).string();
  if (options.from_raw.empty() && !measure(options, raw)) return 0;
  if (!fs::is_directory(raw)) throw InputError("calibrate: --from-raw " + raw + ": no such folder");
  const Device device =
      device_option(options.device.empty() ? device_preset_for_gpu(raw_gpu_name(raw)) : options.device);
  const CalibrationProfile profile = fit_measured_profile(raw, device);
  // One file, not a run's folder: written whole or not at all, beside whatever else is there.
  write_atomically(options.out, [&](const std::string& path) { write_text_file(path, profile.to_yaml()); });
  print_summary(profile, options.out, raw);
  return 0;
}

}  // namespace

void add_calibrate_command(CommandLine& cli) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* calibrate_command =
      cli.add("calibrate", "measure this machine's GPUs (CUDA/NCCL microbenchmarks) and fit a profile",
              [options] { return calibrate(*options); });
  calibrate_command->add_option("--out", options->out, "profile YAML to write");
  calibrate_command->add_option("--raw", options->raw,
                                "folder for the raw CSVs (default: <profile stem>-raw/ beside it)");
  calibrate_command->add_option("--from-raw", options->from_raw,
                                "fit raw CSVs measured before instead of measuring");
  calibrate_command->add_option("--device", options->device,
                                "device preset (default: matched from the GPU's name)");
  calibrate_command->add_option("--bench", options->bench,
                                "microbenchmark executable (default: beside semsim)");
  calibrate_command->add_option("--budget", options->budget, "seconds for the microbenchmarks")
      ->check(real_range(1e-3, 1e7));
  calibrate_command->add_flag("--quick", options->quick, "coarse grids: a smoke test of every path");
  calibrate_command
      ->add_option("--rank-timeout", options->rank_timeout,
                   "multi-process runs: seconds a rank may go silent or without progress before the run ends")
      ->check(real_range(1, 1e6));
  calibrate_command->add_option("--write-plan", options->write_plan,
                                "only write the kernel plan of the presets here");
  add_calibrate_table_commands(cli, calibrate_command);
  add_calibrate_engine_command(cli, calibrate_command);
}

}  // namespace semsim
