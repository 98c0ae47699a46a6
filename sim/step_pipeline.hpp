#pragma once
// One step, end to end: the builder emits its activity graph, the fidelity's executor schedules it,
// the recorder writes what happened (and the exporter, for the steps of its window), and with an
// engine its host work follows the kernels. The serving loop calls run() once per step.
#include <memory>

#include "sim/step_builder.hpp"
#include "sim/step_executor.hpp"
#include "sim/step_exporter.hpp"
#include "sim/step_host_work.hpp"
#include "sim/step_recorder.hpp"

namespace semsim {

class StepPipeline {
 public:
  StepPipeline(StepBuilder& builder, StepExecutor& executor, StepRecorder& recorder, int devices,
               StepExporter* exporter = nullptr, StepHostWork* host_work = nullptr)
      : builder_(builder),
        executor_(executor),
        recorder_(recorder),
        exporter_(exporter),
        host_work_(host_work),
        graph_(devices) {}

  // Simulates the step: advances `clock` to its end and fills the record (see StepBuilder::build).
  // Returns whether the step is in the timeline window (the serving loop then records its counters).
  bool run(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
           const std::vector<int>& token_rank, StepClock& clock, StepRecord& record) {
    const bool exported = exporter_ != nullptr && exporter_->wants(steps_);
    builder_.keep_for_export(exported);
    builder_.build(batches, tokens, token_rank, graph_, record);
    executor_.run(graph_, clock, schedule_);
    const bool in_timeline = recorder_.record(graph_, schedule_, record);
    if (exported) exporter_->record(steps_, batches, graph_, schedule_, record, builder_);
    if (host_work_) host_work_->add(batches, clock, record);
    ++steps_;
    return in_timeline;
  }

 private:
  StepBuilder& builder_;
  StepExecutor& executor_;
  StepRecorder& recorder_;
  StepExporter* exporter_;
  StepHostWork* host_work_;
  long long steps_ = 0;
  StepGraph graph_;
  StepSchedule schedule_;
};

}  // namespace semsim
