#pragma once
// One interface, two fidelities, for the time of a collective given its traffic matrix.
// Must be called from inside a SimGrid actor: `flow` blocks in simulated time; `bottleneck`
// only adds the computed duration to the StepClock, which sleeps it off in one go.
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/format/profile.hpp"
#include "models/choice_names.hpp"
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
  // An equal-shard collective's copies (shard_exchange_pairs, fixed by the group and its nodes): its
  // time and bytes depend on bytes_per_copy alone, so they are computed once per size.
  bool one_per_pair = false;

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

// Accumulates simulated time that needs no SimGrid activity (analytic steps, waits for arrivals) and
// sleeps it off only when SimGrid activities must start at the right date.
class StepClock {
 public:
  void advance(double seconds) { pending_ += seconds; }
  void advance_to(double time);  // now() becomes `time` (not earlier than now())
  void sync();                   // this_actor::sleep_for(pending), then pending = 0
  double now() const;            // SimGrid clock + pending

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

// The fixed time of one all-to-all over `topology`'s group: where the group spans nodes, the alpha of
// the profile's scale-out all-to-all fit closest to it (NCCL's setup across the fabric); within a
// node, or with no such fit, `within_node` (overhead.collective).
double all_to_all_overhead(const CalibrationProfile& profile, const Topology& topology, double within_node);

enum class NetworkFidelity { kFlow, kBottleneck };
inline constexpr ChoiceNames<NetworkFidelity, 2> kNetworkFidelityNames{
    {{NetworkFidelity::kFlow, "flow"}, {NetworkFidelity::kBottleneck, "bottleneck"}}};

// The time of a collective that runs alone: max route latency over the pairs that move bytes + max
// over (link, direction) of its load / bandwidth. SimGrid's max-min sharing of one parallel task
// (ptask_L07) gives exactly this, so both fidelities price a lone collective with it and the flow
// fidelity calls SimGrid only for collectives that overlap in time.
class LoneCollectiveTime {
 public:
  explicit LoneCollectiveTime(const Topology& topology, BandwidthFactors factors = {});
  ~LoneCollectiveTime();
  LoneCollectiveTime(LoneCollectiveTime&&) noexcept;

  double seconds(const TrafficMatrix& traffic);
  // The same for whole copies: equals seconds() on the matrix `traffic` fills in. Sums the copies
  // themselves where that is exact, skipping the matrix (two of these per MoE layer and step).
  double seconds(const CopyTraffic& traffic);
  // The bytes of each pair as a SimGrid task must move them: bandwidth factors applied, negative or
  // NaN entries and the diagonal zero. Valid until the next call.
  const TrafficMatrix& task_bytes(const CopyTraffic& traffic);

  class Model;  // the formula over one topology's precomputed routes

 private:
  std::unique_ptr<Model> model_;
  BandwidthFactors factors_;
  TrafficMatrix filled_;  // reused between calls
  std::map<std::pair<int, double>, double> one_per_pair_seconds_;  // by (devices, bytes per copy)
};

// The bottleneck formula itself, without factors (also used by tests and policies' estimates).
double bottleneck_seconds(const TrafficMatrix& traffic, const Topology& topology);

}  // namespace semsim
