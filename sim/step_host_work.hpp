#pragma once
// The serving engine's host work around each step (scenario `engine:`): after the step's kernels,
// the clock advances by the host seconds they did not hide (calibrate/format/engine_costs.hpp), the
// step's `engine` phase.
#include <vector>

#include "calibrate/format/engine_costs.hpp"
#include "sim/network.hpp"
#include "sim/run_result.hpp"
#include "sim/scenario.hpp"
#include "sim/step_builder.hpp"

namespace semsim {

class StepHostWork {
 public:
  StepHostWork(const EngineSettings& settings, const EngineCosts& costs, int layers)
      : settings_(settings), costs_(costs), layers_(layers) {}

  // The step's kernels ran from record.start to clock.now(): prices its host work, advances the
  // clock by what they did not hide and fills the record's engine part.
  void add(const std::vector<RankBatch>& batches, StepClock& clock, StepRecord& record);

 private:
  EngineSettings settings_;
  EngineCosts costs_;
  int layers_;
  double last_end_ = -1;  // when the previous step ended (-1: none yet)
};

}  // namespace semsim
