#pragma once
#include "policies/placement.hpp"

namespace semsim {

// Vanilla expert parallelism (SGLang's default): expert e of every layer on device floor(e * D / N).
Placement contiguous_placement(int moe_layers, int experts, int devices);

}  // namespace semsim
