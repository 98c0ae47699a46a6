#pragma once
// How the transfers of a step's collectives share the network: the part of the executors' event
// loop (sim/step_executor.cpp) the fidelities differ in. A collective's transfer starts once its
// fixed overhead is paid; the model says when transfers end, and records in the schedule when each
// transfer's bytes start to move and which transfer it waited for.
#include <limits>
#include <memory>
#include <queue>
#include <vector>

#include "models/topology.hpp"
#include "sim/network.hpp"
#include "sim/step_executor.hpp"

namespace semsim {

struct TransferEnd {
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  double time = kNever;
  int activity = -1;   // -1: none ended by the time asked
  double seconds = 0;  // how long its bytes moved
};

class TransferModel {
 public:
  virtual ~TransferModel() = default;
  virtual void start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) = 0;
  // The earliest transfer end no later than `until`; {until, -1} when none ends by then.
  virtual TransferEnd next_end(double until, StepSchedule& schedule) = 0;
};

// Every transfer takes its lone closed-form time, whatever else is in flight; notes whether two
// transfers that move bytes were ever in flight at once (then the times are not exact).
class LoneTransfers final : public TransferModel {
 public:
  explicit LoneTransfers(LoneCollectiveTime& network) : network_(network) {}
  void clear();
  bool overlapped() const { return overlapped_; }

  void start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) override;
  TransferEnd next_end(double until, StepSchedule&) override;

 private:
  LoneCollectiveTime& network_;
  std::vector<TransferEnd> in_flight_;
  bool overlapped_ = false;
};

// The network carries one transfer at a time, in the order they become ready, each for its lone
// closed-form time.
class QueuedTransfers final : public TransferModel {
 public:
  explicit QueuedTransfers(LoneCollectiveTime& network) : network_(network) {}

  void start(int activity, const CopyTraffic& traffic, double now, StepSchedule& schedule) override;
  TransferEnd next_end(double until, StepSchedule& schedule) override;

 private:
  struct Pending {
    int activity;
    double seconds;
  };
  void begin_head(double now, int behind, StepSchedule& schedule);

  LoneCollectiveTime& network_;
  std::queue<Pending> queue_;
  double head_end_ = TransferEnd::kNever;
};

// Transfers sharing every link direction as SimGrid's parallel tasks (ptask_L07) do, one per
// transfer, worked out without SimGrid (sim/link_sharing.hpp): the step's own, or with other
// actors' traffic in `platform.shared`; `platform.simgrid_tasks`, SimGrid tasks themselves.
std::unique_ptr<TransferModel> make_sharing_transfers(LoneCollectiveTime& network, const Topology& topology,
                                                      FlowPlatform platform);

}  // namespace semsim
