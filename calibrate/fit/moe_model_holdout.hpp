#pragma once
// Leave-whole-model-out validation of the fused MoE kernel's cross-shape model (moe_shape_model.hpp):
// a model the tables do not hold (DeepSeek-V2-Lite's routed experts) has none of its shapes measured,
// not one shape missing among its siblings. A model here is the shapes of one hidden size, expert
// count and top-k: every FFN split (moe_tp_size), routing distribution and table of them. Each is
// held out whole, the cross-shape model built from the rest of the same backend and dtype (the launch
// floor refitted on them too), and every measured point of the held-out tables predicted by it.
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "models/device.hpp"

namespace semsim {

struct MoeModelHoldout {
  std::string backend;  // the tables' implementation
  std::string dtype;
  std::string model;  // "hidden=H experts=E top_k=K"
  int shapes = 0;     // tables held out
  int points = 0;     // measured points in them
  // Relative errors of the points predicted; the rest lie beyond every neighbour's measured range,
  // where the model makes no prediction (an InputError in a run).
  FitResiduals errors;
};

// Every model of every backend and dtype of `profile`'s moe_experts tables, in the order of backend,
// dtype, then hidden, experts and top-k, each backend and dtype closed by its models pooled (model
// "all"); a backend and dtype of one model (nothing to predict it from) is left out.
std::vector<MoeModelHoldout> moe_leave_model_out(const CalibrationProfile& profile, const Device& device);

}  // namespace semsim
