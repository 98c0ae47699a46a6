#include "sim/kv_transfer.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "sim/platform.hpp"

namespace semsim {
namespace sg4 = simgrid::s4u;
namespace {

// Blocks the calling actor on `changed` until `ready()`; false once `hopeless()` or at `until`
// (infinite: no time limit) with nothing ready.
template <class Ready, class Hopeless>
bool wait_until_ready(const sg4::MutexPtr& mutex, const sg4::ConditionVariablePtr& changed, Ready ready,
                      Hopeless hopeless, double until) {
  std::unique_lock lock(*mutex);
  while (!ready()) {
    if (hopeless()) return false;
    if (std::isinf(until))
      changed->wait(lock);
    else if (changed->wait_until(lock, until) == std::cv_status::timeout)
      return ready();
  }
  return true;
}

}  // namespace

struct KvTransfers::Sync {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed = sg4::ConditionVariable::create();  // a landing, a step end, the end
};

KvTransfers::KvTransfers(const Topology& topology, KvTransferSetup setup,
                         const std::vector<Request>& requests, Links links)
    : topology_(topology),
      hosts_(platform_hosts(topology)),
      setup_(setup),
      links_(links),
      requests_(requests),
      sync_(std::make_unique<Sync>()) {
  if (setup_.fidelity == NetworkFidelity::kFlow && (!links_.shared || links_.prefill_party < 0))
    throw std::logic_error("KV transfers in flow without the platform's shared links");
}

void KvTransfers::idle_until(ServingPool pool, double time) {
  const int party = pool == ServingPool::kPrefill ? links_.prefill_party : links_.decode_party;
  if (links_.shared && party >= 0) links_.shared->idle_until(party, time);
}

KvTransfers::~KvTransfers() = default;

double KvTransfers::lone_seconds(int src, int dst, double bytes) const {
  double narrowest = INFINITY;
  for (const RouteHop& hop : topology_.route(src, dst))
    narrowest = std::min(narrowest, topology_.links[hop.link].bandwidth);
  return topology_.route_latency(src, dst) + (std::isinf(narrowest) ? 0.0 : bytes / narrowest);
}

int KvTransfers::prefill_device(int rank) const {
  return setup_.prefill_first_device + rank * setup_.prefill_group_devices;
}

int KvTransfers::decode_device(int rank) const {
  return setup_.decode_first_device + rank * setup_.decode_group_devices;
}

void KvTransfers::last_chunk_starts(int index, int rank, double) {
  ++in_flight_;
  if (setup_.mode == KvTransferMode::kWhole)
    waiting_for_step_end_.emplace_back(index, rank);
  else
    start(index, rank, static_cast<int>(step_ends_.size()));
}

void KvTransfers::step_ended(double end) {
  step_ends_.push_back(end);
  for (const auto& [index, rank] : waiting_for_step_end_)
    start(index, rank, static_cast<int>(step_ends_.size()) - 1);
  waiting_for_step_end_.clear();
  sync_->changed->notify_all();
}

void KvTransfers::prefill_done() {
  prefill_done_ = true;
  in_flight_ -= static_cast<int>(waiting_for_step_end_.size());  // their step never ended (time limit)
  waiting_for_step_end_.clear();
  sync_->changed->notify_all();
}

void KvTransfers::start(int index, int prefill_rank, int step) {
  KvTransferRecord record;
  record.index = index;
  record.prefill_rank = prefill_rank;
  if (!decode_.choose_rank) throw std::logic_error("KV transfer before the decode pool's loop started");
  record.decode_rank =
      setup_.decode_kv == DecodeKv::kPreallocated ? decode_rank_[index] : decode_.choose_rank(index);
  record.bytes = setup_.kv_bytes_per_token * requests_[index].input_tokens;
  record.start = sg4::Engine::get_clock();
  sg4::Actor::create(fmt::format("kv-{}", index), hosts_[prefill_device(prefill_rank)],
                     [this, record, step] { move(record, step); });
}

void KvTransfers::move(KvTransferRecord record, int step) {
  const int src = prefill_device(record.prefill_rank);
  const int dst = decode_device(record.decode_rank);
  const double pair_bytes = record.bytes / setup_.parallel_pairs;
  const double lone = lone_seconds(src, dst, pair_bytes);
  if (setup_.fidelity == NetworkFidelity::kFlow && record.bytes > 0) {
    SharedLinks& links = *links_.shared;
    const int party = links.join();
    links.start_pair(party, 0, src, dst, pair_bytes, sg4::Engine::get_clock());
    const double end = links.wait_end(party, INFINITY).time;
    links.leave(party);
    if (sg4::Engine::get_clock() < end) sg4::this_actor::sleep_until(end);
  } else {
    sg4::this_actor::sleep_for(lone);
  }
  if (setup_.mode == KvTransferMode::kLayerwise) {
    // The last layer's KV exists once the step has ended; its share still has to move.
    std::unique_lock lock(*sync_->mutex);
    while (static_cast<int>(step_ends_.size()) <= step) sync_->changed->wait(lock);
    const double earliest = step_ends_[step] + lone / setup_.layers;
    if (sg4::Engine::get_clock() < earliest) sg4::this_actor::sleep_until(earliest);
  }
  record.end = sg4::Engine::get_clock();
  arrived_.push_back({record.index, record.decode_rank, record.end});
  records_.push_back(record);
  --in_flight_;
  sync_->changed->notify_all();
}

void KvTransfers::set_decode_pool(DecodePoolAccess access) {
  decode_ = std::move(access);
  decode_rank_.assign(requests_.size(), -1);
  decode_reserved_.assign(decode_.ranks, 0);
}

bool KvTransfers::preallocate(int index, double now) {
  if (setup_.decode_kv != DecodeKv::kPreallocated) return true;
  if (!decode_.choose_rank) throw std::logic_error("pre-allocation before the decode pool's loop started");
  const auto due = std::stable_partition(
      frees_.begin(), frees_.end(), [now](const std::pair<double, int>& free) { return free.first > now; });
  for (auto it = due; it != frees_.end(); ++it)
    decode_reserved_[decode_rank_[it->second]] -= decode_.kv_need(it->second);
  frees_.erase(due, frees_.end());
  int& rank = decode_rank_[index];
  if (rank < 0) rank = decode_.choose_rank(index);
  const long long need = decode_.kv_need(index);
  // A request alone on its rank always goes ahead: the memory plan has checked that the longest fits.
  if (decode_reserved_[rank] > 0 && decode_reserved_[rank] + need > decode_.kv_capacity_per_rank)
    return false;
  decode_reserved_[rank] += need;
  return true;
}

double KvTransfers::next_kv_free(double now) const {
  double next = INFINITY;
  for (const auto& [time, index] : frees_)
    if (time > now) next = std::min(next, time);
  return next;
}

bool KvTransfers::wait_for_kv_free(double until) {
  return wait_until_ready(
      sync_->mutex, sync_->changed, [this] { return !frees_.empty(); },
      [this] {
        return std::all_of(decode_reserved_.begin(), decode_reserved_.end(),
                           [](long long r) { return r == 0; });
      },
      until);
}

void KvTransfers::kv_freed(int index, double time) {
  if (setup_.decode_kv != DecodeKv::kPreallocated) return;
  frees_.emplace_back(time, index);
  sync_->changed->notify_all();
}

void KvTransfers::take_arrived(std::vector<KvArrival>& arrived) {
  arrived.insert(arrived.end(), arrived_.begin(), arrived_.end());
  arrived_.clear();
}

bool KvTransfers::wait_for_arrival(double until) {
  return wait_until_ready(
      sync_->mutex, sync_->changed, [this] { return !arrived_.empty(); },
      [this] { return prefill_done_ && in_flight_ == 0; }, until);
}

void KvTransfers::request_finished(double time) {
  finished_.push_back(time);
  sync_->changed->notify_all();
}

void KvTransfers::take_finished(std::vector<double>& times) {
  times.insert(times.end(), finished_.begin(), finished_.end());
  finished_.clear();
}

// The decode loop runs until its last request finishes, so a waiting prefill loop always hears of
// one or reaches `until`.
bool KvTransfers::wait_for_finish(double until) {
  return wait_until_ready(
      sync_->mutex, sync_->changed, [this] { return !finished_.empty(); }, [] { return false; }, until);
}

}  // namespace semsim
