#pragma once
// One step as data: the activities the EP group runs, with their dependencies. A step builder
// (sim/step_builder.hpp) emits it; an executor (sim/step_executor.hpp) schedules it.
//
// - A compute activity runs on every device, for its own seconds per device, on the device's one
//   compute stream: compute activities of a device run one after another in the order they were
//   added (as kernels on one CUDA stream), each also after its dependencies.
// - A collective activity (sim/collectives.hpp) involves every device: it starts once all its
//   dependencies have ended on every device, pays its overhead, moves its traffic over the network
//   and ends at one time for all.
// - A timed collective is one a measured kernel times (DeepEP's, NCCL's tables): it involves every
//   device as a collective does and lasts its measured seconds; its traffic, what it moves, is counted
//   (timeline, export) but loads no link.
// Dependencies name earlier activities only, so the order of addition is a topological order.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <span>
#include <vector>

#include "sim/collectives.hpp"
#include "sim/phase.hpp"
#include "sim/run_result.hpp"

namespace semsim {

enum class ActivityKind { kCompute, kCollective, kTimedCollective };

struct Activity {
  ActivityKind kind = ActivityKind::kCompute;
  Phase phase = Phase::kOther;
  int layer = -1;                // model layer index; -1: not one layer's
  int micro_batch = 0;           // two-batch overlap: 0 or 1
  std::vector<double> seconds;   // compute: per device, with every compute unit (SM) of the device
  Collective collective;         // collective: its traffic, fixed overhead or measured seconds
  std::vector<DeviceWork> work;  // compute: per device, where the builder counts it; else empty
  // Earlier activities that must end first (a step's activities are rebuilt every step: kept inline).
  static constexpr int kMaxDependencies = 4;
  std::array<int, kMaxDependencies> dependencies{};
  int dependency_count = 0;
  bool is_collective() const { return kind != ActivityKind::kCompute; }
  std::span<const int> after() const {
    return {dependencies.data(), static_cast<std::size_t>(dependency_count)};
  }
};

class StepGraph {
 public:
  explicit StepGraph(int devices = 0) : devices_(devices) {}

  int devices() const { return devices_; }
  // Forgets the activities but keeps their storage (a step's graph is rebuilt every step).
  void clear() { size_ = 0; }
  // A compute activity whose per-device seconds (sized to devices()) the caller sets, every one.
  Activity& add_compute(Phase phase, int layer, int micro_batch, std::initializer_list<int> after) {
    Activity& a = add(ActivityKind::kCompute, phase, layer, micro_batch, after);
    a.seconds.resize(static_cast<std::size_t>(devices_));
    return a;
  }
  Activity& add_collective(Phase phase, int layer, int micro_batch, const Collective& collective,
                           std::initializer_list<int> after) {
    Activity& a =
        add(collective.measured_seconds ? ActivityKind::kTimedCollective : ActivityKind::kCollective, phase,
            layer, micro_batch, after);
    a.collective = collective;
    return a;
  }
  // Index of the activity added last (to name it in later dependencies).
  int last() const { return static_cast<int>(size_) - 1; }
  std::span<const Activity> activities() const { return {activities_.data(), size_}; }

 private:
  Activity& add(ActivityKind kind, Phase phase, int layer, int micro_batch,
                std::initializer_list<int> after) {
    if (after.size() > Activity::kMaxDependencies) reject_dependency();
    for (const int dependency : after)
      if (dependency < 0 || dependency >= static_cast<int>(size_)) reject_dependency();
    if (size_ == activities_.size()) activities_.emplace_back();
    Activity& a = activities_[size_++];
    a.kind = kind;
    a.phase = phase;
    a.layer = layer;
    a.micro_batch = micro_batch;
    a.work.clear();
    a.dependency_count = static_cast<int>(after.size());
    std::copy(after.begin(), after.end(), a.dependencies.begin());
    return a;
  }
  [[noreturn]] static void reject_dependency();

  int devices_;
  std::vector<Activity> activities_;  // [0, size_) in use; the rest keep their vectors' capacity
  std::size_t size_ = 0;
};

}  // namespace semsim
