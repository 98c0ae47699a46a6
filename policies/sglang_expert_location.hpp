#pragma once
// A placement as SGLang's expert-location file (`--init-expert-location FILE.json`) and back:
// {"physical_to_logical_map": [[...], ...]}, one row per decoder layer of the model (dense layers
// included: SGLang indexes the rows by layer id and ignores the dense ones), one logical expert id per
// physical expert slot. Physical expert p is on GPU p / S for S slots per GPU, the same S on every GPU
// in every layer. Format notes: policies/PLACEMENT_FORMAT.md.
#include <string>
#include <string_view>

#include "models/moe_model.hpp"
#include "policies/placement.hpp"

namespace semsim {

struct SglangExpertLocation {
  std::string json;           // the file's text, one row per line
  int slots_per_gpu = 0;      // S
  int redundant_experts = 0;  // physical slots per layer beyond the logical experts: SGLang's
                              // --ep-num-redundant-experts
};

// The placement (whose MoE layers and experts must be `model`'s) as SGLang's file; the dense layers'
// rows get SGLang's own trivial map (physical p holds logical p mod experts). InputError when the
// devices hold unequal slot counts, within a layer or across layers: SGLang cannot represent it.
SglangExpertLocation sglang_expert_location(const Placement& placement, const MoeModel& model);

// The placement an SGLang expert-location file's text describes for `model` on `gpus` GPUs,
// `devices_per_node` of them per node. Every defect is an InputError "FILE: KEY: message" (file as
// given, KEY the JSON path such as physical_to_logical_map[3][17]): not SGLang's shape, a row count
// other than the model's layers, rows of unequal length, a length not divisible over the GPUs, an id
// out of range, a logical expert without a slot in a MoE layer, and an expert twice on one GPU (which
// semsim's placements cannot hold).
Placement placement_from_sglang(std::string_view json_text, const std::string& file, const MoeModel& model,
                                int gpus, int devices_per_node);

}  // namespace semsim
