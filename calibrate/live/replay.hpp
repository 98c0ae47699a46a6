#pragma once
// The replay of exported steps on the GPUs of one node: one rank's compute phases on one GPU, or
// every rank on its own GPU with the dispatch and combine as NCCL grouped send/recv.
#include <memory>
#include <string>
#include <vector>

#ifndef SEMSIM_BENCH_WITHOUT_NCCL
#include "calibrate/bench/collectives.hpp"
#endif
#include "calibrate/bench/cases.hpp"
#include "calibrate/bench/memory.hpp"
#include "calibrate/bench/timing.hpp"
#include "calibrate/replay/replay_plan.hpp"

namespace semsim::live {

struct PhaseTiming {
  int rank = 0;
  std::string phase;
  bench::Timing timing;
  bool graph = false;  // timed as launches of one CUDA graph of the phase (else kernel by kernel)
};

struct ReplayRank;

class Replay {
 public:
  // `ranks` run on `devices`: one device for one rank, or one device per rank of the export.
  Replay(const StepExport& data, std::vector<int> ranks, std::vector<int> devices);
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // The calibration suite's correctness checks on every device used.
  std::vector<bench::CheckResult> self_checks();
  // Each phase of each replayed rank in `step`, timed (dispatch and combine with several GPUs only).
  std::vector<PhaseTiming> run_step(const ExportedStep& step, const bench::TimingOptions& timing);

 private:
  const StepExport& data_;
  std::vector<int> ranks_;
  std::vector<std::unique_ptr<ReplayRank>> ranks_state_;
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  void exchange(const std::vector<const PhasePlan*>& plans);
  std::vector<ncclComm_t> comms_;
  std::vector<bench::DeviceBuffer> send_, receive_;
#endif
};

}  // namespace semsim::live
