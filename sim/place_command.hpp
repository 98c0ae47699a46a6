#pragma once
// `semsim place` (run a placement policy on a routing profile, write a placement file) and
// `semsim place eval` (LAR, imbalance, A2A bytes, replica memory and the LAR upper bounds of a
// placement file on a trace's requests). Logic lives in policies/; this is the command line.
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

struct PlaceEvalOptions {
  std::string plan;   // placement file
  std::string trace;  // semsim trace
  double split = 0;   // evaluate only the requests `semsim profile --split F --seed S` held out; 0: all
  long long seed = 1;
  double balance = 1.10;  // DP-style request load tolerance
  int tp_batch_tokens = 4096;
  int bound_rounds =
      0;  // triangle-cut rounds of the TP bound: tighter, much slower (policies/lar_upper_bound.hpp)
  bool json = false;
};
int place_eval_command(const PlaceEvalOptions& options);

}  // namespace semsim
