#pragma once
// How a deployment parallelises a model over the GPUs of its EP group.
#include "models/choice_names.hpp"

namespace semsim {

// parallelism.attention: each rank runs attention for its own requests (data parallel, one KV cache
// per rank), or the group runs one batch with the heads sharded over its ranks (tensor parallel).
enum class AttentionMode { kDataParallel, kTensorParallel };
inline constexpr ChoiceNames<AttentionMode, 2> kAttentionModeNames{
    {{AttentionMode::kDataParallel, "dp"}, {AttentionMode::kTensorParallel, "tp"}}};
inline const char* attention_name(AttentionMode mode) {
  return name_of(kAttentionModeNames, mode);
}

}  // namespace semsim
