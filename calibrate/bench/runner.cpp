#include "calibrate/bench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "calibrate/bench/check.hpp"

namespace semsim::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> row(const CaseInfo& info, const Timing& timing, const std::string& status) {
  return {info.kernel,
          info.shape,
          info.dtype,
          info.implementation,
          info.variant,
          number(info.x),
          number(info.y),
          timing.trials ? number(timing.median) : "",
          timing.trials ? number(timing.p10) : "",
          timing.trials ? number(timing.p90) : "",
          std::to_string(timing.trials),
          std::to_string(timing.launches_per_trial),
          status};
}

std::string failed_checks(const BenchGroup& group, const std::set<std::string>& passed) {
  std::string failed;
  for (const std::string& check : group.self_checks)
    if (!passed.contains(check)) failed += (failed.empty() ? "" : " ") + check;
  return failed;
}

}  // namespace

const std::vector<std::string> kKernelColumns{
    "kernel",  "shape", "dtype", "implementation", "variant",  "x",     "y",
    "seconds", "p10",   "p90",   "trials",         "launches", "status"};

bool run_groups(BenchContext& context, std::vector<BenchGroup>& groups,
                const std::set<std::string>& passed_checks, double seconds, const TimingOptions& timing,
                CsvWriter& csv, const Progress& progress) {
  const Clock::time_point end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  bool broken = false;
  std::size_t cases = 0;
  for (const BenchGroup& group : groups) cases += group.cases.size();
  progress.line("kernels: " + std::to_string(groups.size()) + " groups, " + std::to_string(cases) + " cases");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    BenchGroup& group = groups[g];
    // A group may run until only a reserve is left for each group after it: a heavy group takes what
    // it needs when the budget allows, and a tight budget still measures the small cases of all.
    const double left = std::chrono::duration<double>(end - Clock::now()).count();
    const double later = double(groups.size() - g - 1);
    const double reserve = std::min(3.0, 0.5 * left / (later + 1));
    const auto group_end =
        end - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(reserve * later));
    const std::string failed = failed_checks(group, passed_checks);
    int measured = 0, skipped = 0, errors = 0;
    for (const BenchCase& one : group.cases) {
      std::string status = "ok";
      Timing result;
      if (broken) {
        status = "skipped: the device faulted earlier";
      } else if (!failed.empty()) {
        status = "check_failed: " + failed;
      } else if (Clock::now() >= group_end) {
        status = "skipped: time budget";
      } else {
        try {
          const Launcher launcher = one.prepare();
          result = time_launches(launcher.launch, context.stream, timing);
        } catch (const Unsupported& e) {
          status = std::string("unsupported: ") + e.what();
        } catch (const std::exception& e) {
          status = std::string("error: ") + e.what();
          broken = device_is_broken();
          cudaGetLastError();  // an out-of-memory error is not sticky: clear it and go on
        }
      }
      measured += status == "ok" ? 1 : 0;
      skipped += status.starts_with("skipped") ? 1 : 0;
      errors += status.starts_with("error") || status.starts_with("unsupported") ? 1 : 0;
      csv.row(row(one.info, result, status));
    }
    group.release();
    progress.line("kernels " + std::to_string(g + 1) + "/" + std::to_string(groups.size()) + " " +
                  group.name + ": " + std::to_string(measured) + " measured" +
                  (skipped ? ", " + std::to_string(skipped) + " skipped" : "") +
                  (errors ? ", " + std::to_string(errors) + " failed" : "") +
                  (failed.empty() ? "" : " (checks failed: " + failed + ")"));
  }
  return !broken;
}

}  // namespace semsim::bench
