#pragma once
// How far long work got (a placement policy's MoE layers, a fit's evaluations), for a progress
// display (sim/runs/progress.hpp): `done` of `total` units of the stage `what` ("layer", "bound,
// layer"); a new `what` starts a new stage. Only reported, never read back: work gives the same
// results with or without a callback.
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace semsim {

using ProgressCallback = std::function<void(std::string_view what, long long done, long long total)>;

// The units of one stage, finished on any thread: reports 0 at once (the stage starts), then each
// count in increasing order, one call at a time. Does nothing without a callback.
class ProgressCounter {
 public:
  ProgressCounter(ProgressCallback report, std::string what, long long total)
      : report_(std::move(report)), what_(std::move(what)), total_(total) {
    if (report_) report_(what_, 0, total_);
  }

  void finished_one() {
    if (!report_) return;
    const std::lock_guard lock(mutex_);
    report_(what_, ++done_, total_);
  }

 private:
  ProgressCallback report_;
  std::string what_;
  long long total_ = 0, done_ = 0;
  std::mutex mutex_;
};

}  // namespace semsim
