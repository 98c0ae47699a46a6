#pragma once
// `semsim run --export-steps`: for a window of steps, the work every rank ran and the simulator's
// phase times beside it, as the step export format holds them (calibrate/replay/step_export.hpp), read off
// each step's graph and schedule as the executor ran it.
#include <vector>

#include "calibrate/replay/step_export.hpp"
#include "policies/placement.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/step_builder.hpp"
#include "sim/step_executor.hpp"
#include "sim/step_graph.hpp"

namespace semsim {

// The export covers what its replay can run: one server (not a disaggregated pair) running
// Attention-DP without two-batch overlap, full attention on every layer. Anything else is an
// InputError naming the option.
void check_exportable(const Scenario& scenario);

// The export's run and model lines (no steps yet).
StepExport step_export_header(const Scenario& scenario, const StepWindow& window);

class StepExporter {
 public:
  StepExporter(const Scenario& scenario, const Placement& placement, StepWindow window);

  // Whether step `index` is one of the window's: the builder must then keep its expert tokens.
  bool wants(long long index) const {
    return index >= window_.first && index < window_.first + window_.count;
  }
  // `record` holds the step's critical-path phases (the recorder's).
  void record(long long index, const std::vector<RankBatch>& batches, const StepGraph& graph,
              const StepSchedule& schedule, const StepRecord& record, const StepBuilder& builder);

  std::vector<ExportedStep>& steps() { return steps_; }

 private:
  const Scenario& scenario_;
  const Placement& placement_;
  StepWindow window_;
  std::vector<int> moe_index_;  // [model layer] its MoE layer index, -1 for dense layers
  std::vector<ExportedStep> steps_;
};

}  // namespace semsim
