#pragma once
// What the two serving loops of a disaggregated run tell each other (sim/kv_transfer.hpp moves the
// KV caches between them): the prefill loop says which requests' prompts complete in the step it
// runs, the decode loop takes the requests whose KV cache has landed on one of its ranks. In a
// closed loop (workload.concurrency) the decode loop also says when requests finish: each finish
// sends the next request to the prefill loop. Where the decode pool pre-allocates KV
// (disaggregation.decode_kv: preallocated), the prefill loop starts a request only once its decode
// rank has reserved the request's KV, and the decode loop says when each request frees it.
#include <functional>
#include <vector>

#include "sim/scenario.hpp"

namespace semsim {

// What the decode pool's loop tells the KV transfers when it starts: how it picks a request's rank,
// and (to pre-allocate) the KV tokens a request reserves there and each rank's capacity.
struct DecodePoolAccess {
  std::function<int(int index)> choose_rank;
  std::function<long long(int index)> kv_need;
  long long kv_capacity_per_rank = 0;
  int ranks = 1;
};

struct KvArrival {
  int index = 0;  // into the request list
  int rank = 0;   // the decode rank it was sent to
  double time = 0;
};

class KvHandoff {
 public:
  virtual ~KvHandoff() = default;

  // Prefill pool. The step starting at `start` (the caller's clock synchronised) computes the last
  // prompt chunk of request `index` on prefill rank `rank`.
  virtual void last_chunk_starts(int index, int rank, double start) = 0;
  // The step that began with the last last_chunk_starts calls ended at `end` (clock synchronised).
  virtual void step_ended(double end) = 0;
  // The prefill loop has ended: no transfer starts after this.
  virtual void prefill_done() = 0;
  // The pool's loop sleeps until `time`: it starts no transfer (its own or a KV cache's) before then.
  virtual void idle_until(ServingPool pool, double time) = 0;

  // Pre-allocation (else: always true). Reserves request `index`'s KV on its decode rank (chosen at
  // its first try) if it fits at `now` (frees told for `now` or earlier applied); false: it waits.
  virtual bool preallocate(int index, double now) = 0;
  // The earliest free told for after `now` (infinite: none yet).
  virtual double next_kv_free(double now) const = 0;
  // Blocks the prefill loop until the decode loop tells of a free or `until`; false when none is
  // pending and none can come (nothing reserved).
  virtual bool wait_for_kv_free(double until) = 0;

  // Decode pool. How it chooses ranks and reserves KV; call before any transfer or pre-allocation.
  virtual void set_decode_pool(DecodePoolAccess access) = 0;
  // Request `index` finished on its decode rank at `time` (maybe ahead of the SimGrid clock): its
  // KV is free from then.
  virtual void kv_freed(int index, double time) = 0;
  // Appends the requests whose KV cache has landed since the last call.
  virtual void take_arrived(std::vector<KvArrival>& arrived) = 0;
  // Blocks the decode loop (simulated time passes) until a KV cache lands or `until`; false when
  // none will land any more.
  virtual bool wait_for_arrival(double until) = 0;

  // Closed loop. The decode pool: a request finished at `time`, which may be ahead of the SimGrid
  // clock (a step's time not yet slept): the prefill loop treats it as an arrival due then.
  virtual void request_finished(double time) = 0;
  // The prefill pool: appends the finish times told since the last call.
  virtual void take_finished(std::vector<double>& times) = 0;
  // Blocks the prefill loop (simulated time passes) until a request finishes or `until`; false when
  // none finished by then.
  virtual bool wait_for_finish(double until) = 0;
};

}  // namespace semsim
