#pragma once
// The serving engine's host-side costs (the CPU work around a step's kernels) and how much of them a
// step exposes: plain data and pure functions, so that the simulator and a fitter of these
// parameters (calibrate/README.md, "Engine costs") price a step the same way. Model and sources:
// README.md, "How a step is simulated".

namespace semsim {

// A calibration profile's `engine:` section, in seconds. Defaults: SGLang 0.5.x estimates
// (calibrate/README.md says where each comes from); the embedded datasheet profiles state them.
struct EngineCosts {
  double step_seconds = 300e-6;         // scheduler loop per step: batch formation, output processing
  double request_step_seconds = 10e-6;  // per request in the step's batch: input prep, sampling, stream
  double eager_layer_seconds = 60e-6;   // per model layer of a step run eagerly, over its kernels
  double graph_step_seconds = 80e-6;    // a decode step replayed from a captured CUDA graph
  double request_seconds = 6.5e-3;      // per request, once: HTTP, tokenisation, to the scheduler
  bool operator==(const EngineCosts&) const = default;
};

// What the engine's host cost of one step depends on.
struct StepFeatures {
  int batch_requests = 0;   // requests in the step's batch, on the rank with the most
  bool eager = false;       // launched kernel by kernel (prefill or mixed, or above the graph sizes)
  int layers = 0;           // model layers
  bool overlapped = false;  // overlap scheduling: its host work ran while the previous step computed
};

// The host seconds of a step: scheduler + per-request work + launch (eager layers or a graph replay).
double host_seconds(const EngineCosts& costs, const StepFeatures& step);

// Of those, the seconds a step whose kernels take `gpu_seconds` adds to them. Without overlap the
// host work is in series with the kernels; with it, the scheduler, per-request work and a graph
// replay run under the previous step's kernels (so the step takes max(gpu, host)), while an eager
// step's launches pace its own kernels and stay exposed.
double exposed_host_seconds(const EngineCosts& costs, const StepFeatures& step, double gpu_seconds);

// SGLang's decode CUDA graphs (ServerArgs._generate_cuda_graph_batch_sizes, no speculative decoding):
// captured for 1, 2, 4, 8, 12, every 8 from 16 to 256, every 16 from 272 to 496 and every 32 from
// 512, each at most `max_batch`. The captured size a decode batch of `batch` requests is padded to;
// 0 when it is larger than every captured size (it runs eagerly).
int cuda_graph_padded_batch(int batch, int max_batch);

}  // namespace semsim
