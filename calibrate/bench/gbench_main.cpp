// semsim-calibrate-gbench: the suite's kernel cases as Google Benchmark benchmarks (manual time from
// CUDA events), for exploring one kernel interactively:
//   semsim-calibrate-gbench --plan calibrate/kernel-plan.txt --benchmark_filter='routed_experts/.*'
// The calibration itself runs semsim-calibrate-bench, whose built-in runner needs no library and
// writes the CSVs the fitter reads. Cases run only when their correctness checks pass.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>

#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/report.hpp"
#include "calibrate/bench/timing.hpp"

namespace {

using namespace semsim::bench;

std::string benchmark_name(const CaseInfo& info) {
  std::string name =
      info.kernel + "/" + info.shape + "/" + info.dtype + "/" + info.variant + "/" + number(info.x);
  if (info.y > 0) name += "/" + number(info.y);
  for (char& c : name)
    if (c == ' ') c = '_';
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  std::string plan;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--plan") plan = argv[i + 1];
  if (plan.empty()) {
    std::cerr << "usage: semsim-calibrate-gbench --plan FILE [--benchmark_* flags]\n";
    return 2;
  }
  std::vector<char*> gbench_args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--plan") {
      ++i;
      continue;
    }
    gbench_args.push_back(argv[i]);
  }
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::cerr << "semsim-calibrate-gbench: no CUDA device\n";
    return 3;
  }
  BenchContext context(0, false);
  std::set<std::string> passed;
  for (const CheckResult& r : run_self_checks(context))
    if (r.passed) passed.insert(r.name);
  std::vector<BenchGroup> groups = suite_groups(context, read_plan(plan));
  BenchGroup* current = nullptr;  // the group whose shared buffers are allocated
  for (BenchGroup& group : groups) {
    if (!std::all_of(group.self_checks.begin(), group.self_checks.end(),
                     [&](const std::string& check) { return passed.contains(check); })) {
      std::cerr << "skipping " << group.name << ": its correctness checks did not pass\n";
      continue;
    }
    for (const BenchCase& one : group.cases) {
      benchmark::RegisterBenchmark(
          benchmark_name(one.info).c_str(),
          [&context, &group, &one, &current](benchmark::State& state) {
            if (current != &group) {
              if (current) current->release();
              current = &group;
            }
            const Launcher launcher = one.prepare();
            long iteration = 0;
            for (auto _ : state)
              state.SetIterationTime(time_trial(launcher.launch, context.stream, 1, iteration));
          })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  int gbench_argc = static_cast<int>(gbench_args.size());
  benchmark::Initialize(&gbench_argc, gbench_args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
