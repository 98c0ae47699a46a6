#pragma once
#include "policies/placement.hpp"

namespace semsim {

// Vanilla expert parallelism (SGLang's default): physical slot p of the N + `redundant` slots of
// every layer (P in all) holds logical expert p mod N on device floor(p * D / P). Without redundancy
// expert e is on device floor(e * D / N); with it, experts 0 .. redundant-1 get a second slot
// (SGLang's trivial expert location at --ep-num-redundant-experts). A device holds an expert at
// most once while P / D <= N.
Placement contiguous_placement(int moe_layers, int experts, int devices, int redundant = 0);

}  // namespace semsim
