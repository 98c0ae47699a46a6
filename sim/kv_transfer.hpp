#pragma once
// The KV-cache transfers of a disaggregated run: each request's prompt KV moves from its prefill
// rank to the decode rank the decode pool's scheduler gives it, over both pools' topology (NICs and
// fabric between the pools' nodes). One SimGrid actor per transfer:
//   `flow`        a transfer from the prefill device to the decode device in the platform's shared
//                 links (sim/shared_links.hpp), sharing every link with the pools' all-to-alls as a
//                 SimGrid parallel task of the two hosts would;
//   `bottleneck`  its lone closed form (bytes over the route's narrowest link + route latency),
//                 blind to the pools' traffic.
// Layer by layer (KvTransferMode::kLayerwise) it starts with the step that computes the prompt's
// last chunk and lands no earlier than that step's end plus one layer's share of its lone time;
// whole, it starts when that step ends.
#include <functional>
#include <memory>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "models/topology.hpp"
#include "sim/kv_handoff.hpp"
#include "sim/scenario.hpp"
#include "sim/shared_links.hpp"
#include "workloads/request.hpp"

namespace semsim {

struct KvTransferRecord {
  int index = 0;  // into the request list
  int prefill_rank = 0, decode_rank = 0;
  double bytes = 0;
  double start = 0, end = 0;  // the end is when the decode rank has it
};

// Where each pool's ranks are among `topology`'s devices: rank r (an Attention-DP rank, or an
// Attention-TP group of `*_group_devices`) from device first + r * group devices. A request's KV cache
// split over a group's devices moves as `parallel_pairs` equal parts, device i of one group to device i
// of the other at once (MLA's latent, replicated on every device, as one): the first pair stands for them.
struct KvTransferSetup {
  NetworkFidelity fidelity = NetworkFidelity::kBottleneck;
  KvTransferMode mode = KvTransferMode::kLayerwise;
  int prefill_first_device = 0, decode_first_device = 0;
  double kv_bytes_per_token = 0;  // every layer's
  int layers = 1;                 // that carry KV (the model's attention layers)
  int prefill_group_devices = 1, decode_group_devices = 1;
  int parallel_pairs = 1;
  DecodeKv decode_kv = DecodeKv::kOnLanding;
};

class KvTransfers final : public KvHandoff {
 public:
  // The platform's shared links (required in `flow`) and the pools' parties in them: the prefill
  // loop's, which starts the transfers, and the decode pool's steps' (-1: they share none).
  struct Links {
    SharedLinks* shared = nullptr;
    int prefill_party = -1, decode_party = -1;
  };
  // `topology` spans both pools; the SimGrid platform must already be built from it. Call from the
  // engine's set-up, before its actors run.
  KvTransfers(const Topology& topology, KvTransferSetup setup, const std::vector<Request>& requests,
              Links links);
  ~KvTransfers() override;

  void last_chunk_starts(int index, int rank, double start) override;
  void step_ended(double end) override;
  void prefill_done() override;
  void idle_until(ServingPool pool, double time) override;
  bool preallocate(int index, double now) override;
  double next_kv_free(double now) const override;
  bool wait_for_kv_free(double until) override;
  void set_decode_pool(DecodePoolAccess access) override;
  void kv_freed(int index, double time) override;
  void take_arrived(std::vector<KvArrival>& arrived) override;
  bool wait_for_arrival(double until) override;
  void request_finished(double time) override;
  void take_finished(std::vector<double>& times) override;
  bool wait_for_finish(double until) override;

  // Every transfer that landed, in landing order.
  const std::vector<KvTransferRecord>& records() const { return records_; }

 private:
  struct Sync;  // SimGrid's mutex and condition variable
  void start(int index, int prefill_rank, int step);
  // The first device of a prefill or decode rank (an Attention-TP rank is its group).
  int prefill_device(int rank) const;
  int decode_device(int rank) const;
  void move(KvTransferRecord record, int step);
  double lone_seconds(int src, int dst, double bytes) const;

  const Topology& topology_;
  std::vector<simgrid::s4u::Host*> hosts_;  // by device, looked up once
  KvTransferSetup setup_;
  Links links_;
  const std::vector<Request>& requests_;
  std::unique_ptr<Sync> sync_;
  DecodePoolAccess decode_;
  // Pre-allocation: each request's decode rank (-1: not yet chosen), each rank's reserved KV tokens,
  // and the frees told, not yet applied, as (time, request).
  std::vector<int> decode_rank_;
  std::vector<long long> decode_reserved_;
  std::vector<std::pair<double, int>> frees_;
  std::vector<std::pair<int, int>> waiting_for_step_end_;  // whole: (index, prefill rank)
  std::vector<double> step_ends_;                          // the prefill steps ended so far
  std::vector<KvArrival> arrived_;                         // landed, not yet taken
  std::vector<KvTransferRecord> records_;
  std::vector<double> finished_;  // closed loop: decode finish times not yet taken
  int in_flight_ = 0;             // announced, not yet landed
  bool prefill_done_ = false;
};

}  // namespace semsim
