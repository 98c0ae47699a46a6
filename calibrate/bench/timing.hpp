#pragma once
// Timing with CUDA events: warm-up launches, then trials of back-to-back launches (enough per trial
// that event resolution and launch gaps do not dominate small kernels), and the median time per
// launch over the trials.
#include <cuda_runtime.h>

#include <functional>

namespace semsim::bench {

struct TimingOptions {
  int warmup = 2;
  int min_trials = 5;
  int max_trials = 25;
  double trial_seconds = 200e-6;  // launches per trial: enough to last this long
  double case_seconds = 0.03;     // stop adding trials after this much timed work
};

struct Timing {
  double median = 0;  // seconds per launch
  double p10 = 0;
  double p90 = 0;
  int trials = 0;
  int launches_per_trial = 0;
};

using LaunchFunction = std::function<void(cudaStream_t, long)>;

// Seconds per launch of `launches` back-to-back launches, timed with events on `stream`;
// `iteration` counts launches across calls (cases rotate buffers by it).
double time_trial(const LaunchFunction& launch, cudaStream_t stream, int launches, long& iteration);

Timing time_launches(const LaunchFunction& launch, cudaStream_t stream, const TimingOptions& options = {});

}  // namespace semsim::bench
