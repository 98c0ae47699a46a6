#pragma once
// `semsim place` (run a placement policy on a routing profile, write a placement file) and
// `semsim place eval` (LAR, imbalance, A2A bytes, replica memory and the LAR upper bounds of a
// placement file on a trace's requests) and `semsim place bound` (the bounds alone). Logic lives in
// policies/; this is the command line.
#include <string>
#include <vector>

namespace semsim {

struct PlaceOptions {
  std::string policy;
  std::string profile;  // routing profile folder (semsim profile)
  int ep = 0;
  int devices_per_node = 0;         // 0: one node
  std::string model;                // optional preset: the model's expert groups (EPLB)
  std::vector<std::string> params;  // key=value
  int lookback = 2;
  double balance = 1.10;  // token load tolerance of the T table
  std::string out;
};
int place_command(const PlaceOptions& options);

// Which requests of a trace are evaluated, and the load rules both styles keep.
struct EvaluatedRequests {
  std::string trace;  // semsim trace
  double split = 0;   // only the requests `semsim profile --split F --seed S` held out; 0: all
  long long seed = 1;
  double balance = 1.10;       // DP-style request load tolerance
  int tp_batch_tokens = 4096;  // TP style: tokens aligned to equal slices together
};

// The LAR upper bound's effort (policies/lar_upper_bound.hpp).
struct BoundEffort {
  int triangle_rounds = 2;  // triangle-cut rounds of the TP bound (0: faster, looser)
  int threads = 0;          // layers bounded in parallel; 0: every core
};

struct PlaceEvalOptions {
  std::string plan;  // placement file
  EvaluatedRequests requests;
  BoundEffort effort;
  bool bound = true;  // false: no upper bound (its keys are left out)
  bool json = false;
};
int place_eval_command(const PlaceEvalOptions& options);

// `semsim place bound`: the LAR upper bounds alone, for any placement on `ep` devices.
struct PlaceBoundOptions {
  EvaluatedRequests requests;
  BoundEffort effort;
  int ep = 0;
  bool json = false;
};
int place_bound_command(const PlaceBoundOptions& options);

}  // namespace semsim
