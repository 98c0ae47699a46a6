#include "calibrate/bench/heartbeat.hpp"

#include <chrono>

namespace semsim::bench {

RankHeartbeat::RankHeartbeat(const RankIdentity& rank, std::string raw, WatchLimits limits)
    : rank_(rank),
      raw_(std::move(raw)),
      watch_(raw_, rank.run, rank.ranks, limits, RendezvousClock::now(), rank.rank) {
  beat();
  thread_ = std::thread([this] {
    while (!stopping_) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      beat();
    }
  });
}

RankHeartbeat::~RankHeartbeat() {
  stopping_ = true;
  thread_.join();
}

void RankHeartbeat::beat() {
  std::string phase;
  {
    const std::lock_guard lock(mutex_);
    phase = phase_;
  }
  write_heartbeat(raw_, rank_.run, rank_.rank, rank_.host, ++beats_, progress_, phase);
  std::optional<std::string> reason = abort_requested(raw_, rank_.run);
  if (!reason && rank_.rank == 0)
    if (const auto fault = watch_.fault(RendezvousClock::now())) {
      request_abort(raw_, rank_.run, *fault);
      reason = fault;
    }
  if (reason) {
    const std::lock_guard lock(mutex_);
    if (!abort_) abort_ = reason;
  }
}

void RankHeartbeat::progressed(const std::string& phase) {
  ++progress_;
  const std::lock_guard lock(mutex_);
  phase_ = phase;
}

std::optional<std::string> RankHeartbeat::abort_reason() const {
  const std::lock_guard lock(mutex_);
  return abort_;
}

void RankHeartbeat::finish(const std::string& status) {
  write_rank_status(raw_, rank_.run, rank_.rank, status);
  if (status != "ok")
    request_abort(raw_, rank_.run, "rank " + std::to_string(rank_.rank) + " (" + rank_.host + ") " + status);
}

}  // namespace semsim::bench
