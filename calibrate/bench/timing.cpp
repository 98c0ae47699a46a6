#include "calibrate/bench/timing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "calibrate/bench/check.hpp"
#include "calibrate/fit/quantile.hpp"

namespace semsim::bench {
namespace {

class Event {
 public:
  Event() { SEMSIM_CUDA(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace

double time_trial(const LaunchFunction& launch, cudaStream_t stream, int launches, long& iteration) {
  Event start, stop;
  SEMSIM_CUDA(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < launches; ++i) launch(stream, iteration++);
  SEMSIM_CUDA(cudaEventRecord(stop.get(), stream));
  SEMSIM_CUDA(cudaEventSynchronize(stop.get()));
  float milliseconds = 0;
  SEMSIM_CUDA(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
  return milliseconds * 1e-3 / launches;
}

Timing time_launches(const LaunchFunction& launch, cudaStream_t stream, const TimingOptions& options) {
  long iteration = 0;
  for (int i = 0; i < options.warmup; ++i) launch(stream, iteration++);
  const double estimate = std::max(time_trial(launch, stream, 1, iteration), 1e-7);
  Timing timing;
  timing.launches_per_trial =
      static_cast<int>(std::clamp(std::ceil(options.trial_seconds / estimate), 1.0, 1000.0));
  const double trial = estimate * timing.launches_per_trial;
  const int trials = static_cast<int>(std::clamp(std::floor(options.case_seconds / trial),
                                                 double(options.min_trials), double(options.max_trials)));
  std::vector<double> seconds;
  for (int i = 0; i < trials; ++i)
    seconds.push_back(time_trial(launch, stream, timing.launches_per_trial, iteration));
  timing.trials = trials;
  std::sort(seconds.begin(), seconds.end());
  timing.median = sorted_quantile(seconds, 0.5);
  timing.p10 = sorted_quantile(seconds, 0.1);
  timing.p90 = sorted_quantile(seconds, 0.9);
  return timing;
}

}  // namespace semsim::bench
