#pragma once
// SGLang's server-argument defaults that follow the hardware, as plain functions of plain data:
// ServerArgs._handle_gpu_memory_settings in python/sglang/srt/server_args.py, as in the 0.5.x
// releases from PR #10975 on (read at 0.5.8, the release of the TP1 serving runs; 0.5.1 sized
// mem_fraction_static by a coarser rule, README "The serving engine's host work"). Memory is in MiB,
// as SGLang reads it from the driver (nvidia-smi's memory.total).
namespace semsim {

// Chunked prefill size and the largest CUDA-graph batch, by device memory and TP size.
struct SglangDefaults {
  int chunked_prefill_size;  // tokens per step, the whole TP group's (DP attention divides it)
  int cuda_graph_max_bs;
};

SglangDefaults sglang_defaults(double device_memory_mib, int tp_size);

// What SGLang holds back from its static pool (weights + KV cache) for speculative decoding's draft:
// EAGLE / MTP heads and their graphs, or a whole draft model (STANDALONE).
enum class SglangDraft { kNone, kDraftHeads, kDraftModel };

// What mem_fraction_static's default depends on: the resolved chunked prefill size and graph batch
// (the scenario's where it gives them), the serving group's GPUs and DP attention size.
struct SglangMemoryInputs {
  double device_memory_mib = 0;
  int chunked_prefill_size = 0;  // the TP group's
  int cuda_graph_max_bs = 0;
  int tp_size = 1;            // GPUs of the serving group (pipeline parallelism: 1)
  int dp_attention_size = 1;  // 1: no DP attention
  SglangDraft draft = SglangDraft::kNone;
};

// MiB kept outside the static pool for activations, CUDA graphs and metadata: 512 of metadata, 1.5 per
// chunked-prefill token (at least 2,048 tokens), 2 per graph batch, 1,024 per 8 GPUs, with DP attention
// 3 per graph batch and DP rank (4.5 above 300), at least 10 GiB on a device of more than 60 GiB, then
// 2 GiB for draft heads or 6 GiB for a draft model.
double sglang_reserved_mib(const SglangMemoryInputs& in);

// mem_fraction_static's default: (memory - reserved) / memory, rounded to 3 decimals as SGLang does.
// The KV pool is then this share of the device's memory less the weights (profile_max_num_token in
// model_runner: memory free after loading less (1 - fraction) of the memory free before).
double sglang_mem_fraction_static(const SglangMemoryInputs& in);

}  // namespace semsim
