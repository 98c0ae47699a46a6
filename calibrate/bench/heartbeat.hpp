#pragma once
// A rank's heartbeat in a multi-process run: a thread writes it every second
// (calibrate/runtime/rendezvous.hpp) with the count of points measured; rank 0's also watches every
// rank's and, at the first fault, asks every rank to stop (the abort file), which each rank's thread
// sees within a second.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "calibrate/runtime/launcher.hpp"
#include "calibrate/runtime/rendezvous.hpp"

namespace semsim::bench {

class RankHeartbeat {
 public:
  RankHeartbeat(const RankIdentity& rank, std::string raw, WatchLimits limits);
  ~RankHeartbeat();
  RankHeartbeat(const RankHeartbeat&) = delete;
  RankHeartbeat& operator=(const RankHeartbeat&) = delete;

  void progressed(const std::string& phase);
  // Why the run is stopping (a fault rank 0 saw, or an abort any rank asked for), if it is.
  std::optional<std::string> abort_reason() const;
  // Writes how this rank ended ("ok" or "failed: ..."); a failure also asks every rank to stop.
  void finish(const std::string& status);

 private:
  void beat();

  RankIdentity rank_;
  std::string raw_;
  RunWatch watch_;
  long long beats_ = 0;  // the constructor's beat, then the thread's alone
  std::atomic<long long> progress_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::string phase_ = "starting";
  std::optional<std::string> abort_;
  std::thread thread_;
};

}  // namespace semsim::bench
