#pragma once
// Fitting a profile's engine costs (calibrate/format/engine_costs.hpp) to measured serving runs
// without simulating each candidate: a run simulated once keeps its sequence of steps (in a closed
// loop completions and batch limits set it, not time), and that fixed sequence is re-timed for any
// costs. A step takes its kernel seconds plus the exposed host seconds the engine's own pure
// functions give; a request's TTFT and TPOT add up the steps it waited through. Method and its
// approximations: calibrate/README.md, "Fitting the engine costs".
#include <array>
#include <vector>

#include "calibrate/format/engine_costs.hpp"

namespace semsim {

// One simulated step as the re-timing reads it: what its kernels took and what its host work
// depends on.
struct RetimedStep {
  double kernel_seconds = 0;  // the step's duration less its exposed host seconds (steps.csv's engine_s)
  StepFeatures features;
};

// A request's two windows of steps, [first, last] inclusive (empty when last < first), and the rest of
// its simulated time the steps do not cover (the wait for the step in flight when it reached the
// scheduler, a disaggregated KV transfer, gaps): kept as the simulation had it.
struct RequestWindows {
  int ttft_first = 0, ttft_last = -1;  // from the first step it could join to the one of its first token
  double ttft_rest = 0;                // simulated TTFT - request_seconds - those steps' durations
  int tpot_first = 0, tpot_last = -1;  // the steps of its later tokens
  double tpot_rest = 0;                // simulated (finish - first token) - those steps' durations
  int output_tokens = 0;
};

// A simulated run ready to re-time: its steps (one pool, or a disaggregated run's prefill and decode
// pools) and its completed requests, TTFT from one pool's steps and TPOT from another's; with the
// measured means it is compared to.
struct RetimingTable {
  std::vector<std::vector<RetimedStep>> pools;
  int ttft_pool = 0, tpot_pool = 0;
  std::vector<RequestWindows> requests;
  double measured_ttft_s = 0, measured_tpot_s = 0;
};

// Mean TTFT and TPOT (seconds) over the requests as bench_serving takes them (TPOT over the requests
// with two tokens or more; 0 when none).
struct RetimedMeans {
  double ttft_s = 0, tpot_s = 0;
};

// Each step's duration under `costs`: kernel seconds + exposed_host_seconds().
std::vector<double> retimed_durations(const std::vector<RetimedStep>& steps, const EngineCosts& costs);
RetimedMeans retime(const RetimingTable& table, const EngineCosts& costs);

// The fitted parameters, in EngineCosts' order, and their bounds (seconds). Zero is reached as the
// lower bound: the search runs on log-seconds.
constexpr int kEngineCostCount = 5;
using EngineCostVector = std::array<double, kEngineCostCount>;
EngineCostVector to_vector(const EngineCosts& costs);
EngineCosts from_vector(const EngineCostVector& values);
constexpr double kEngineCostMin = 1e-7;  // "zero": far below any cost that matters next to a step
// The most each cost can physically be, in EngineCosts' order, so that a fit cannot make one absorb
// what the simulation lacks: a scheduler loop of 5 ms, 200 µs per request in a step or per eagerly
// launched layer (SGLang measurements: 28-69 µs per layer, calibrate/README.md "Engine costs"), 2 ms
// to replay a graph, 50 ms from a request's send to the scheduler.
constexpr EngineCostVector kEngineCostMax{5e-3, 2e-4, 2e-4, 2e-3, 5e-2};

// Sum over tables of |log(pred/measured)| for TTFT and TPOT, weights equal (a mean with no request or a
// measured 0 adds nothing). Absolute, not squared: each row pulls as hard however far off it is, so a
// row the simulation cannot express, or a configuration measured twice with results 2x apart, does not
// drag the costs toward it.
double retiming_loss(const std::vector<const RetimingTable*>& tables, const EngineCosts& costs);

struct EngineFit {
  EngineCosts costs;
  double loss = 0;
  int evaluations = 0;
};

// Minimises retiming_loss over the bounded costs: Nelder-Mead on log-seconds from `start`, restarted
// from its best point until a restart no longer improves it.
EngineFit fit_engine_costs(const std::vector<const RetimingTable*>& tables, const EngineCosts& start);

}  // namespace semsim
