#pragma once
// Executors per fidelity: each schedules a step's activity graph (sim/step_graph.hpp) in simulated
// time and reports when every activity ran. Both share one event loop:
// - compute activities run on each device's stream at a rate set by the compute units (SMs) the
//   collectives in flight hold: with U units and collectives holding H, compute runs at (U - H) / U
//   of its full speed (DeepEP gives its kernels a fixed SM count; compute overlapping them slows);
// - a collective pays its fixed overhead, then moves its traffic. How concurrent transfers share the
//   network is what the fidelities differ in:
//   `bottleneck`  analytic: transfers take the network one at a time (FIFO), each for its lone
//                 closed-form time, so concurrent ones add up on the busiest link;
//   `flow`        SimGrid's sharing of every link direction among the transfers in flight (each
//                 one ptask_L07 parallel task), worked out as SimGrid does without SimGrid
//                 (sim/link_sharing.hpp). With the platform to itself, a transfer that runs alone
//                 takes exactly its closed form, so the step is first scheduled with closed forms,
//                 and again with sharing only if two transfers overlap; sharing it with other
//                 actors' traffic, its transfers join theirs (sim/shared_links.hpp).
#include <memory>
#include <vector>

#include "sim/network.hpp"
#include "sim/step_graph.hpp"

namespace semsim {

// Compute units (SMs) per device, and those one collective's kernels hold while in flight.
struct ComputeUnits {
  int total = 0;  // 0: unknown; collectives then slow nothing
  int per_collective = 0;
};

struct ActivityTiming {
  double release = 0;                 // every dependency has ended
  double end = 0;                     // compute: its last device's end
  double transfer_start = 0;          // collective: when its bytes start to move
  double transfer_seconds = 0;        // collective: how long they moved
  double slowest_device_seconds = 0;  // compute in a chain: its slowest device's seconds
  int released_by = -1;               // the activity whose end released it (-1: the step's start)
  int queued_behind = -1;             // collective: the transfer it waited for (-1: none)
};

// When every activity ran. Per-device values of compute activities are flat arrays indexed
// [activity * devices + device], left empty for a chain (each activity after the one before it),
// where device d runs a compute activity from its release for its own seconds.
struct StepSchedule {
  int devices = 0;
  double start = 0;
  double end = 0;
  bool shared_links = false;  // flow: transfers overlapped and shared the links as SimGrid shares them
  bool chain = false;         // each activity depends on the one before: nothing ran beside anything
  std::vector<ActivityTiming> activities;
  std::vector<double> device_start, device_end;
  std::vector<char> slowed;       // ran at least partly beside a collective
  std::vector<int> stream_bound;  // the device's previous activity if its end bound the start, else -1

  std::size_t at(int activity, int device) const {
    return static_cast<std::size_t>(activity) * devices + device;
  }
  // The device whose end ended a compute activity (the first of those that ended last).
  int last_device(int activity) const;
};

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  // Runs `graph` from clock.now(); afterwards clock.now() is the step's end. Call from inside a
  // SimGrid actor.
  virtual void run(const StepGraph& graph, StepClock& clock, StepSchedule& schedule) = 0;
};

std::unique_ptr<StepExecutor> make_bottleneck_executor(LoneCollectiveTime network, ComputeUnits units);
class SharedLinks;
// Where a flow executor's devices are on the SimGrid platform, and whether other actors' transfers
// share it (a disaggregated run's other pool and KV transfers): then every transfer joins theirs in
// `shared`, since one alone in its step may still share links with theirs, as `party` (-1: one of
// its own). `simgrid_tasks`: every transfer a SimGrid parallel task instead, the reference the
// sharing is tested against.
struct FlowPlatform {
  int first_device = 0;
  SharedLinks* shared = nullptr;
  int party = -1;
  bool simgrid_tasks = false;
};

// Requires the platform built from the same topology, or one it is a part of (sim/platform.hpp).
std::unique_ptr<StepExecutor> make_flow_executor(LoneCollectiveTime network, ComputeUnits units,
                                                 const Topology& topology, FlowPlatform platform = {});

}  // namespace semsim
