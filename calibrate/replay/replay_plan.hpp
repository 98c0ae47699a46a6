#pragma once
// What one rank runs for one exported step (calibrate/replay/step_export.hpp), in order: the kernels of each
// phase with their exact shapes. The replay (calibrate/live/) executes a plan on a GPU and times it
// phase by phase; planning is plain C++ so that it is tested without one.
#include <string>
#include <vector>

#include "calibrate/replay/step_export.hpp"

namespace semsim {

enum class LiveKernel {
  kGemm,              // rows x k times k x n (a dense GEMM of `op`)
  kSwiglu,            // the activation between an FFN's gate/up and down GEMMs: rows x ffn
  kAttentionDecode,   // `rows` decode tokens over `context` keys each (their mean, as the profile prices)
  kAttentionPrefill,  // one chunk: `rows` new tokens over `context` keys (the new ones last)
  kTopK,              // the router's top-k over `rows` tokens
  kPermute,           // `rows` routed activations into expert-contiguous order
  kRoutedExperts,     // grouped GEMM: `expert_tokens` tokens per active local expert
  kUnpermute,         // and back, summed with their routing weights
  kSendRecv,          // dispatch or combine: bytes to and from every other rank
};

struct KernelLaunch {
  LiveKernel kernel = LiveKernel::kGemm;
  int layer = -1;  // model layer
  std::string op;  // kGemm: the operator (ExportedGemm::op)
  long long rows = 0;
  long long n = 0, k = 0;             // kGemm
  long long ffn = 0;                  // kSwiglu
  long long context = 0;              // attention
  std::vector<int> expert_tokens;     // kPermute, kRoutedExperts: per active expert, in slot order
  std::vector<double> send_bytes;     // kSendRecv: to each rank (own rank 0)
  std::vector<double> receive_bytes;  // kSendRecv: from each rank (own rank 0)
  bool operator==(const KernelLaunch&) const = default;
};

// The launches of one phase (an exported phase name) of one rank in one step, over every layer.
struct PhasePlan {
  std::string phase;
  std::vector<KernelLaunch> launches;
};

// The rank's phases, each with its launches over the step's layers in layer order: other (dense
// layers, then the LM head), attention (+ gate), dispatch, experts (routed + shared), combine. A
// compute phase with no launch (an idle rank's attention) is left out; dispatch and combine are
// always there, as every rank joins them.
std::vector<PhasePlan> plan_rank_step(const StepExport& data, const ExportedStep& step, int rank);

// The most each of the replay's buffers holds over some plans' launches, in elements, so that the
// replay sizes its device buffers from the very launches it runs (a kernel writing past a buffer
// on the GPU corrupts memory silently; planning is where that is tested).
struct ReplayFootprint {
  long long gemm_weights = 1;  // n x k
  long long gemm_inputs = 1;   // rows x k
  long long gemm_outputs = 1;  // rows x n: also the SwiGLU's input, rows x 2 ffn
  long long activated = 1;     // SwiGLU outputs: rows x ffn
  long long router_rows = 1;   // top-k's tokens: logits rows x routed experts, choices rows x top_k
  long long routed_rows = 1;   // permuted token copies: permute, grouped GEMM, unpermute
  int active_experts = 1;      // local experts with tokens in one grouped GEMM
  void include(const KernelLaunch& launch);
};

// A readable one-line form of a launch, for logs and test failures.
std::string describe(const KernelLaunch& launch);

}  // namespace semsim
