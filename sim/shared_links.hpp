#pragma once
// The `flow` fidelity's link sharing on a platform several SimGrid actors move bytes over at once: a
// disaggregated run's prefill pool, decode pool and KV transfers. One LinkSharing (sim/link_sharing.hpp)
// holds every transfer in flight, whoever started it, and is solved once per change; SimGrid orders
// the actors. Each actor is a party:
//   - it starts a transfer at its own time, after SimGrid's clock has reached it (start() sleeps until
//     then), so every transfer any party started earlier is in flight first;
//   - it waits for its own transfers' ends in SimGrid time, sleeping until the sharing's next event
//     (a latency paid or a transfer's end, at the rates solved) or its own deadline; another party's
//     start wakes it to look again, since the rates changed;
//   - with none of its transfers in flight, nothing it does depends on the others', so waiting
//     returns at once and the party runs ahead of SimGrid's clock until its next start;
//   - nor need it wait in SimGrid for what comes before any other actor could act on the links: its
//     own deadline (its next compute event) returns at once, and the sharing's next event it works
//     out itself (where another party's transfer ends, that party acts next: it stops there). A party
//     waiting acts on the links no earlier than its deadline or its transfers' ends, one sleeping
//     (idle_until) no earlier than its wake; of a party running, nothing is known. So every actor
//     that starts transfers must hold a party, joined before its first start, and one that creates
//     the actors of new parties (a disaggregated run's prefill loop, which starts the KV transfers)
//     must create them at no earlier time than its own party allows. The parties run ahead of
//     SimGrid's clock: an end comes with its time, which the clock may not have reached yet.
// The same transfers as SimGrid parallel tasks share the links the same way, to rounding
// (tests/sim/link_sharing_test.cpp checks it).
#include <deque>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "models/topology.hpp"
#include "sim/link_sharing.hpp"
#include "sim/network.hpp"

namespace semsim {

// SimGrid's settings the sharing depends on, from the engine's configuration.
SharingSettings simgrid_sharing_settings();

// Devices first .. first + count - 1 of a platform.
struct DeviceRange {
  int first = 0;
  int count = 0;
};
// Per channel (link direction) of `platform`, whether a route from a device of `from` to one of `to`
// crosses it. Transfers on disjoint channels share nothing: their sharing can be worked out apart.
std::vector<char> crossed_channels(const Topology& platform, DeviceRange from, DeviceRange to);
bool any_crossed_by_both(const std::vector<char>& a, const std::vector<char>& b);

class SharedLinks {
 public:
  // `topology` is the whole platform's, built in SimGrid (sim/platform.hpp); call from the engine's set-up.
  explicit SharedLinks(const Topology& topology);
  ~SharedLinks();

  // A new party; leave() returns its number for reuse once it has nothing in flight.
  int join();
  void leave(int party);

  // Call from inside a SimGrid actor at `now` >= SimGrid's clock. `bytes` as LinkSharing::start takes
  // them, its device d the platform's first_device + d.
  void start(int party, int id, const TrafficMatrix& bytes, double now, int first_device);
  void start_pair(int party, int id, int src, int dst, double bytes, double now);

  // The party's earliest transfer end no later than `until` ({until, -1, 0} when none ends by then,
  // at once when none of its transfers is in flight or nothing can move on the links before
  // `until`). Blocks the calling actor in SimGrid time.
  LinkSharing::End wait_end(int party, double until);

  // The party's actor sleeps until `time`: it starts no transfer, nor any other actor, before then.
  void idle_until(int party, double time) { parties_[party].idle_until = time; }

 private:
  struct Sync;  // SimGrid's mutex and condition variable
  struct Party {
    bool joined = false;
    // Starts no transfer before this: its deadline while it waits, else none known (-infinity).
    double idle_until = -std::numeric_limits<double>::infinity();
    int in_flight = 0;
    std::deque<LinkSharing::End> ended;  // by end time; their id the party's own
  };
  int take_transfer(int party, int id);     // the sharing's id for the party's transfer `id`
  void sleep_until(int party, double now);  // SimGrid's clock on to `now`, the party idle till then
  // The sharing moves on to `now` (if later), each transfer ending by then to its party's ends.
  void advance_to(double now);
  void changed();                             // a start: every waiting party looks again
  double others_idle_until(int party) const;  // the earliest another party's actor may act on the links

  LinkSharing links_;
  std::unique_ptr<Sync> sync_;
  std::vector<Party> parties_;
  std::vector<int> free_parties_;
  std::vector<std::pair<int, int>> owner_;  // [transfer in the sharing] (party, its id)
  std::vector<int> free_transfers_;
  unsigned long long changes_ = 0;  // starts so far
};

}  // namespace semsim
