#pragma once
// The `flow` fidelity's link sharing among one step's transfers, worked out as SimGrid works it out
// but without building SimGrid activities. Each transfer is what a ptask_L07 parallel task of its
// bytes is in SimGrid 3.32: one variable whose weight on each link direction (channel) is the
// bytes of its pairs crossing it; it waits its slowest route's latency first, then moves at the rate
// SimGrid's fair-bottleneck solver (lmm::FairBottleneck, the ptask model's solver) gives it among
// the transfers then moving, bounded by the TCP window (gamma / (2 × max over pairs of route
// latency × bytes)); the rates are solved again whenever a transfer starts moving or ends.
//
// Why not SimGrid itself: it builds a task pair by pair, looking every route up and merging each
// hop into the variable by a linear search, O(pairs × channels) per task; at EP72 (5,112 pairs,
// four collectives per MoE layer) that was most of a run. Here a task's channel weights are summed
// once from routes kept as channel indices. The algorithm, the thresholds (maxmin/precision on
// capacities, maxmin × surf precision on work left, surf precision on latency) and the event times
// are SimGrid's; only the order of some floating-point additions differs, so times agree to
// rounding (tests/sim/link_sharing_test.cpp checks it against SimGrid). Several actors' transfers on
// one platform (a disaggregated run's pools and KV transfers) share one of these through
// SharedLinks (sim/shared_links.hpp), which SimGrid's clock orders.
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "models/topology.hpp"
#include "sim/network.hpp"

namespace semsim {

// SimGrid's settings the sharing depends on (its defaults; read from the engine in the executor).
struct SharingSettings {
  double tcp_gamma = 4194304;        // network/TCP-gamma, bytes
  double capacity_precision = 1e-5;  // maxmin/precision, bytes/s
  double time_precision = 1e-9;      // surf/precision, seconds
};

// The transfers in flight on one platform that no other traffic shares, in simulated time of its own.
class LinkSharing {
 public:
  LinkSharing(const Topology& topology, SharingSettings settings);

  // Starts transfer `id` moving `bytes` at `now`, not earlier than any time asked before. `bytes` as
  // LoneCollectiveTime::task_bytes gives them (none negative, the diagonal zero), one at least > 0,
  // its device d the topology's first_device + d (a part of the platform, as platform_hosts maps it).
  void start(int id, const TrafficMatrix& bytes, double now, int first_device = 0);
  // Starts transfer `id` moving `bytes` > 0 from device `src` to device `dst` at `now` (a SimGrid
  // parallel task on the two hosts).
  void start_pair(int id, int src, int dst, double bytes, double now);

  struct End {
    double time;
    int id;          // -1: none ended by `time`
    double seconds;  // since its start
  };
  // The earliest transfer end no later than `until` ({until, -1, 0} when none ends by then);
  // transfers ending at the same time come in start order. Time moves on to the end returned.
  End next_end(double until);
  // When the next transfer pays its latency or ends at the rates solved now (solving them if the
  // transfers moving changed); infinite when none is in flight.
  double next_event() { return clock_ + next_delta(); }
  double clock() const { return clock_; }

 private:
  struct Task {
    int id = -1;
    double start = 0;
    double latency_left = 0;   // > 0: still paying its route latency, not sharing
    double bound = -1;         // rate bound from the TCP window; -1: none
    double remains = 1;        // fraction of its bytes left
    double rate = 0;           // fraction per second, from the last solve
    double mu = 0;             // solver: the last increment it took
    bool unsaturated = false;  // solver: still growing
    std::vector<std::uint32_t> channels;
    std::vector<double> weights;  // [i]: its bytes crossing channels[i]
  };

  void move_to(double now);  // time moves on to `now` (if later), reporting what ends by then
  void add_pair(std::size_t pair, double bytes);  // to the transfer being started
  void add_task(int id, double now);              // the transfer added pair by pair
  double next_delta();                            // from now to the next event (see next_event)
  void advance(double delta);                     // time moves on by `delta` at the rates solved
  void end_finished();                            // reports the tasks with no work left
  void solve();                                   // the rates of the tasks past their latency

  std::size_t devices_;
  std::vector<std::size_t> route_begin_;       // [pair] into route_channels_, and the end
  std::vector<std::uint32_t> route_channels_;  // each pair's hops as channels, one route after another
  std::vector<double> route_latency_;          // [pair]
  std::vector<double> capacity_;               // [channel] bytes/s
  SharingSettings settings_;
  double clock_ = 0;
  bool modified_ = false;    // the set of moving transfers changed since the last solve
  std::vector<Task> tasks_;  // in flight, in start order
  std::vector<Task> spare_;  // ended, kept for their storage
  std::deque<End> ended_;    // ended, not yet reported
  // Scratch.
  std::vector<double> load_;                // [channel] bytes of the transfer being started
  std::vector<std::uint32_t> touched_;      // the channels it crosses, as first crossed
  double latency_ = 0, latency_bytes_ = 0;  // its slowest route's latency, and the largest latency x bytes
  std::vector<double> remaining_, usage_;   // [channel] solver: capacity left, share per transfer
  std::vector<std::size_t> element_begin_;  // [channel] into elements_, and the end
  std::vector<std::size_t> fill_;
  std::vector<std::pair<std::uint32_t, double>> elements_;  // per channel its (task, weight)
  std::vector<std::uint32_t> active_;                       // solver: channels not yet saturated
};

}  // namespace semsim
