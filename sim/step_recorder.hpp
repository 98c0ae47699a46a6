#pragma once
// The one recorder both executors report to: from a step's graph and schedule it writes the step's
// phase times along its critical path (so they add up to the step's duration), its exposed and
// hidden communication, the per-layer totals and, for steps in the timeline window, every
// activity's spans with what it worked on.
#include <span>
#include <vector>

#include "models/moe_model.hpp"
#include "sim/run_result.hpp"
#include "sim/step_executor.hpp"
#include "sim/step_graph.hpp"

namespace semsim {

// How long activity `activity` (`a`) of a scheduled step ran on `device`: a collective from its
// release to its end, a compute activity for the device's own span.
double device_seconds(const Activity& a, const StepSchedule& schedule, int activity, int device);

class StepRecorder {
 public:
  StepRecorder(const MoeModel& model, int devices, StepWindow timeline);

  // Returns whether the step is one of the timeline window's (its spans recorded).
  bool record(const StepGraph& graph, const StepSchedule& schedule, StepTimingRecord& step);

  // Per MoE layer, summed over the steps so far (phases only; the builder counts device loads).
  const std::vector<LayerTotals>& layer_totals() const { return layers_; }
  const std::vector<StepSpans>& timeline() const { return timeline_; }

 private:
  struct Segment {
    int activity;
    double seconds;  // attributed to the activity's phase
    double start, end;
  };
  void add(const Activity& a, double seconds, StepTimingRecord& step);
  void record_chain(std::span<const Activity> activities, const StepSchedule& schedule,
                    StepTimingRecord& step);
  void walk_critical_path(const StepGraph& graph, const StepSchedule& schedule);
  void record_path(std::span<const Activity> activities, StepTimingRecord& step);
  double hidden_communication(const StepGraph& graph, const StepSchedule& schedule);
  bool in_window(double step_start);
  void add_spans(const StepGraph& graph, const StepSchedule& schedule);

  std::vector<int> moe_index_;  // [model layer] its MoE layer index, -1 for dense layers
  int devices_;
  std::vector<LayerTotals> layers_;
  StepWindow window_;
  long long window_first_;  // -1 until a step starts at or after window_.from_seconds
  std::vector<StepSpans> timeline_;
  long long steps_ = 0;
  std::vector<Segment> critical_;                         // reused: the last step's critical path
  std::vector<std::pair<double, double>> communicating_;  // reused: collective in-flight intervals
};

}  // namespace semsim
