#pragma once
// One interface, two fidelities, for the time of a collective given its traffic matrix.
// Must be called from inside a SimGrid actor: `flow` blocks in simulated time; `bottleneck`
// only adds the computed duration to the StepClock, which sleeps it off in one go.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/interpolation.hpp"
#include "calibrate/profile.hpp"
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

// An all-to-all counted in whole copies of one payload, as dispatch accounting counts them:
// `copies[src * devices + dst]`, or, `transposed`, `copies[dst * devices + src]` (the combine
// returns every dispatched copy to its sender). Pair (src, dst) moves exactly what a TrafficMatrix
// filled with fill() holds: double(copies) * bytes_per_copy.
struct CopyTraffic {
  std::span<const long long> copies;
  int devices = 0;
  double bytes_per_copy = 0;
  bool transposed = false;

  long long copies_at(int src, int dst) const {
    return copies[transposed ? static_cast<std::size_t>(dst) * devices + src
                             : static_cast<std::size_t>(src) * devices + dst];
  }
  double at(int src, int dst) const { return static_cast<double>(copies_at(src, dst)) * bytes_per_copy; }
  void fill(TrafficMatrix& traffic) const;
};

// Bytes crossing a device boundary, by link level: scale-up when both ends share a node.
struct LevelBytes {
  double scale_up = 0;
  double scale_out = 0;
};
LevelBytes level_bytes(const TrafficMatrix& traffic, const Topology& topology);
LevelBytes level_bytes(const CopyTraffic& traffic, const Topology& topology);  // the same sums

// Accumulates simulated time that needs no SimGrid activity (analytic compute, bottleneck
// collectives) and sleeps it off only when an activity must start at the right date.
class StepClock {
 public:
  void advance(double seconds) { pending_ += seconds; }
  void sync();         // this_actor::sleep_for(pending), then pending = 0
  double now() const;  // SimGrid clock + pending

 private:
  double pending_ = 0;
};

// A calibration profile's bandwidth factor by message size, per link level, applied to the
// collectives the engine runs (all-to-all): each pair's bytes count as bytes / factor(bytes) on
// every link they cross, so small messages take longer than their share of the link bandwidth.
// Both network fidelities apply it here, identically: SimGrid 3.32 leaves set_bw_factor_cb
// unimplemented under ptask_L07 (it throws), so the flow fidelity cannot hand the curve to SimGrid.
class BandwidthFactors {
 public:
  BandwidthFactors() = default;  // factor 1 everywhere
  // The profile's all_to_all fit of each level whose rank count is closest to the group at that
  // level (devices of a node for scale-up, all devices for scale-out); none, factor 1.
  BandwidthFactors(const CalibrationProfile& profile, const Topology& topology);

  bool empty() const { return !scale_up_ && !scale_out_; }
  // `traffic` with every pair's bytes divided by its factor; `traffic` itself when empty.
  const TrafficMatrix& apply(const TrafficMatrix& traffic);

 private:
  std::optional<BandwidthFactor> scale_up_, scale_out_;
  std::vector<bool> same_node_;  // [src * devices + dst]
  TrafficMatrix scaled_;
};

enum class NetworkFidelity { kFlow, kBottleneck };

class CollectiveNetwork {
 public:
  virtual ~CollectiveNetwork() = default;
  // Simulates one collective; returns its duration in seconds. Afterwards `clock.now()` is later
  // by exactly that duration.
  virtual double run(const TrafficMatrix& traffic, StepClock& clock) = 0;
  // The same for a collective of whole copies; the result equals run() on `traffic` filled in. This
  // default fills a matrix and calls run(); `bottleneck` sums the copies themselves where that is
  // exact, skipping the matrix (the engine runs two of these per MoE layer and step).
  virtual double run_copies(const CopyTraffic& traffic, StepClock& clock);

 private:
  TrafficMatrix filled_;  // run_copies's matrix, reused between calls
};

// `flow`: one SimGrid parallel task (ptask_L07) per collective over the platform built from
// `topology`; requires the platform to exist (see platform.hpp).
std::unique_ptr<CollectiveNetwork> make_flow_network(const Topology& topology, BandwidthFactors factors = {});
// `bottleneck`: max route latency + max over (link, direction) of load / bandwidth.
std::unique_ptr<CollectiveNetwork> make_bottleneck_network(const Topology& topology,
                                                           BandwidthFactors factors = {});
// The bottleneck formula itself, without a clock (also used by tests and policies' estimates).
double bottleneck_seconds(const TrafficMatrix& traffic, const Topology& topology);

}  // namespace semsim
