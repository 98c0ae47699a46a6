#include "sim/sglang_server_args.hpp"

#include <algorithm>
#include <cmath>

namespace semsim {

SglangDefaults sglang_defaults(double device_memory_mib, int tp_size) {
  struct Tier {
    double below_mib;
    int chunked_prefill_size;
    int graph_bs_below_tp4, graph_bs;
  };
  static constexpr Tier kTiers[] = {
      {20 * 1024, 2048, 8, 8},       // T4, RTX 4080
      {35 * 1024, 2048, 24, 80},     // A10, RTX 4090 / 5090
      {60 * 1024, 4096, 32, 160},    // A100 40 GB, L40
      {90 * 1024, 8192, 256, 512},   // H100, A100 80 GB
      {160 * 1024, 8192, 256, 512},  // H20, H200
  };
  for (const Tier& tier : kTiers)
    if (device_memory_mib < tier.below_mib)
      return {tier.chunked_prefill_size, tp_size < 4 ? tier.graph_bs_below_tp4 : tier.graph_bs};
  return {16384, 512};  // B200, MI300
}

double sglang_reserved_mib(const SglangMemoryInputs& in) {
  double reserved = 512;                                      // the attention backend's metadata
  reserved += std::max(in.chunked_prefill_size, 2048) * 1.5;  // a full prefill chunk's activations
  reserved += in.cuda_graph_max_bs * 2.0;                     // CUDA graph buffers
  reserved += in.tp_size / 8.0 * 1024;                        // communication buffers of large groups
  if (in.dp_attention_size > 1) {
    // DP attention pads its gathers to every rank's graph batch (more again for large graphs).
    reserved += in.cuda_graph_max_bs * in.dp_attention_size * 3.0;
    if (in.cuda_graph_max_bs > 300) reserved += in.cuda_graph_max_bs * in.dp_attention_size * 1.5;
  }
  if (in.device_memory_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  if (in.draft == SglangDraft::kDraftHeads) reserved += 2 * 1024;
  if (in.draft == SglangDraft::kDraftModel) reserved += 6 * 1024;
  return reserved;
}

double sglang_mem_fraction_static(const SglangMemoryInputs& in) {
  const double fraction = (in.device_memory_mib - sglang_reserved_mib(in)) / in.device_memory_mib;
  return std::round(fraction * 1000) / 1000;
}

}  // namespace semsim
