#pragma once
// One interface, two fidelities, for the time of a collective given its traffic matrix.
// Must be called from inside a SimGrid actor: `flow` blocks in simulated time; `bottleneck`
// only adds the computed duration to the StepClock, which sleeps it off in one go.
#include <memory>
#include <string>
#include <vector>

#include "models/topology.hpp"

namespace semsim {

// Bytes each device sends to each device in one collective; diagonal ignored.
struct TrafficMatrix {
  int devices = 0;
  std::vector<double> bytes;  // [src * devices + dst]

  explicit TrafficMatrix(int n = 0) : devices(n), bytes(static_cast<std::size_t>(n) * n, 0.0) {}
  double& at(int src, int dst) { return bytes[static_cast<std::size_t>(src) * devices + dst]; }
  double at(int src, int dst) const { return bytes[static_cast<std::size_t>(src) * devices + dst]; }
};

// Bytes crossing a device boundary, by link level: scale-up when both ends share a node.
struct LevelBytes {
  double scale_up = 0;
  double scale_out = 0;
};
LevelBytes level_bytes(const TrafficMatrix& traffic, const Topology& topology);

// Accumulates simulated time that needs no SimGrid activity (analytic compute, bottleneck
// collectives) and sleeps it off only when an activity must start at the right date.
class StepClock {
 public:
  void advance(double seconds) { pending_ += seconds; }
  void sync();  // this_actor::sleep_for(pending), then pending = 0
  double now() const;  // SimGrid clock + pending

 private:
  double pending_ = 0;
};

enum class NetworkFidelity { kFlow, kBottleneck };

class CollectiveNetwork {
 public:
  virtual ~CollectiveNetwork() = default;
  // Simulates one collective; returns its duration in seconds. Afterwards `clock.now()` is later
  // by exactly that duration.
  virtual double run(const TrafficMatrix& traffic, StepClock& clock) = 0;
};

// `flow`: one SimGrid parallel task (ptask_L07) per collective over the platform built from
// `topology`; requires the platform to exist (see platform.hpp).
std::unique_ptr<CollectiveNetwork> make_flow_network(const Topology& topology);
// `bottleneck`: max route latency + max over (link, direction) of load / bandwidth.
std::unique_ptr<CollectiveNetwork> make_bottleneck_network(const Topology& topology);
// The bottleneck formula itself, without a clock (also used by tests and policies' estimates).
double bottleneck_seconds(const TrafficMatrix& traffic, const Topology& topology);

}  // namespace semsim
