#pragma once
// The work `semsim run --export-steps` simulated, step by step and rank by rank, with the simulator's
// own phase times beside it: what `semsim live` replays on GPUs and `semsim compare-live` scores
// (format: calibrate/live/README.md). Standard C++ only, so that the replay binary builds with nvcc
// alone, like the calibration microbenchmarks.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace semsim {

inline constexpr const char* kStepExportFormat = "semsim-steps";
inline constexpr int kStepExportVersion = 1;

// One GEMM of an operator: `rows` x k activations times a k x n weight; the rows are the rank's
// tokens (or, for the LM head, its logits) in each step.
struct ExportedGemm {
  std::string op;  // attention_projections | gate | shared_experts | dense_ffn | lm_head
  long long n = 0;
  long long k = 0;
  bool operator==(const ExportedGemm&) const = default;
};

// The model dimensions the replay's kernels need.
struct ExportedModel {
  std::string name;
  int hidden = 0;
  int layers = 0;
  int routed_experts = 0;
  int top_k = 0;
  int expert_ffn = 0;
  bool mla = false;
  int heads = 0;
  int kv_heads = 0, head_dim = 0;                   // GQA / MHA
  int kv_lora = 0, rope = 0, nope = 0, v_head = 0;  // MLA
  std::vector<int> moe_layers;                      // model layer indices, ascending
  std::string weights = "bf16";                     // bf16 | fp8
  double dispatch_bytes_per_element = 2;
  double activation_bytes = 2;
  std::vector<ExportedGemm> gemms;  // per op, in the order the op runs them
  bool operator==(const ExportedModel&) const = default;
};

struct ExportedChunk {
  int new_tokens = 0;
  long long prior_context = 0;
  bool operator==(const ExportedChunk&) const = default;
};

// A rank's batch in one step, and the simulator's seconds of its dense layers and LM head.
struct ExportedRank {
  std::vector<ExportedChunk> chunks;
  int logits = 0;
  double other_s = 0;
  int tokens() const;
  bool operator==(const ExportedRank&) const = default;
};

// One rank's part of one MoE layer: the tokens each of its local experts served, and the
// simulator's seconds of its attention + gate and of its experts (routed + shared).
struct ExportedExperts {
  std::vector<int> ids;     // expert ids of the rank's slots, in slot order
  std::vector<int> tokens;  // per slot
  double attention_s = 0;
  double experts_s = 0;
  long long activations() const;
  bool operator==(const ExportedExperts&) const = default;
};

// One MoE layer of a step: the dispatch and combine bytes per (source, destination) rank,
// [src * ranks + dst], the diagonal staying on its rank, and their simulated seconds.
struct ExportedLayer {
  int layer = 0;
  std::vector<double> dispatch_bytes, combine_bytes;
  double dispatch_s = 0, combine_s = 0;
  std::vector<ExportedExperts> ranks;
  bool operator==(const ExportedLayer&) const = default;
};

// The phases the export times, as steps.csv names them (calibrate/live/README.md).
inline constexpr int kExportedPhaseCount = 5;
inline constexpr const char* kExportedPhases[kExportedPhaseCount] = {"attention", "dispatch", "experts",
                                                                     "combine", "other"};

struct ExportedStep {
  long long index = 0;
  double start_s = 0, end_s = 0;
  double phase_s[kExportedPhaseCount] = {};  // the step's critical path, as steps.csv has it
  std::vector<ExportedRank> ranks;
  std::vector<ExportedLayer> layers;  // one per MoE layer, in model.moe_layers' order
  bool operator==(const ExportedStep& o) const;
};

struct StepExport {
  std::string scenario;
  std::uint64_t seed = 0;
  double rate = 0;  // requests per second of the workload
  int ranks = 0;
  long long first_step = 0;
  ExportedModel model;
  std::vector<ExportedStep> steps;
  bool operator==(const StepExport&) const = default;
};

// Writes the export; numbers in their shortest round-trip form, so writing what was read gives
// the same bytes.
void write_step_export(std::ostream& out, const StepExport& data);
// Reads and validates an export; any error is an InputError naming the file, its line and the key.
StepExport read_step_export(const std::string& path);

}  // namespace semsim
