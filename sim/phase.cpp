#include "sim/phase.hpp"

namespace semsim {

const PhaseName& phase_name(Phase phase) {
  static constexpr std::array<PhaseName, kPhaseCount> kNames{{
      {"attention", "attention"},
      {"dispatch", "dispatch"},
      {"experts", "experts"},
      {"combine", "combine"},
      {"other", "dense layers + LM head"},
      {"reduce_scatter", "reduce-scatter"},
      {"all_gather", "all-gather"},
      {"permute", "permute"},
      {"engine", "engine (host)"},
  }};
  return kNames[static_cast<int>(phase)];
}

}  // namespace semsim
