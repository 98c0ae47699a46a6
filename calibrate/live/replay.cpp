// Runs replay plans (calibrate/replay/replay_plan.hpp) with the calibration suite's kernels and times each
// phase with its timing loop (calibrate/bench/timing.hpp).
#include <algorithm>
#include <memory>

#include "calibrate/bench/attention.hpp"
#include "calibrate/bench/check.hpp"
#include "calibrate/bench/experts.hpp"
#include "calibrate/bench/gemm.hpp"
#include "calibrate/bench/tokens.hpp"
#include "calibrate/live/replay.hpp"

namespace semsim::live {

using bench::BenchContext;
using bench::DeviceBuffer;
using bench::DType;
using bench::random_buffer;

// Dense weights: each GEMM launch reads its own slice of a pool of at least 4 x L2, taken in launch
// order, so that consecutive layers stream their weights from HBM as a model's do (one buffer shared
// by every layer would stay in L2 and time too fast).
class WeightPool {
 public:
  WeightPool(const BenchContext& c, long long largest_elements, DType type, std::uint64_t seed)
      : type_(type),
        bytes_(std::max(static_cast<std::size_t>(largest_elements) * bench::dtype_bytes(type),
                        4 * c.l2_bytes())),
        memory_(random_buffer(bytes_ / bench::dtype_bytes(type), type, seed, 0.1f, c.stream)) {}
  const void* take(long long elements) {
    const std::size_t bytes = static_cast<std::size_t>(elements) * bench::dtype_bytes(type_);
    if (next_ + bytes > bytes_) next_ = 0;
    const void* slice = memory_.at(next_);
    next_ += (bytes + 255) / 256 * 256;  // the alignment cuBLAS prefers
    return slice;
  }

 private:
  DType type_;
  std::size_t bytes_, next_ = 0;
  DeviceBuffer memory_;
};

namespace {
DType weight_type(const ExportedModel& m) {
  return m.weights == "fp8" ? DType::kFp8 : DType::kBf16;
}
}  // namespace

// The buffers every kernel of one rank's phase uses, sized by the footprint of the launches the
// replay runs; the routed experts' weights once for all layers, each layer's launch on its own
// rotation of them (the replay measures time, not the model's numbers).
struct RankBuffers {
  RankBuffers(const BenchContext& c, const ExportedModel& m, const ReplayFootprint& f)
      : experts(c, std::max(m.routed_experts, f.active_experts), m.hidden, m.expert_ffn, f.routed_rows,
                weight_type(m)),
        permutation(static_cast<int>(f.routed_rows), std::max(m.routed_experts, f.active_experts), 1,
                    m.hidden),
        weights(c, f.gemm_weights, weight_type(m), 21),
        gate_weights(c, f.gemm_weights, DType::kBf16, 26) {
    const auto elements = [](long long n) { return static_cast<std::size_t>(n); };
    const std::size_t bf16 = 2, word = 4;
    input = random_buffer(elements(f.gemm_inputs), weight_type(m), 22, 1.0f, c.stream);
    gate_input = random_buffer(elements(f.gemm_inputs), DType::kBf16, 27, 1.0f, c.stream);
    output = DeviceBuffer(elements(f.gemm_outputs) * word);  // BF16, or the gate's FP32 logits
    activated = DeviceBuffer(elements(f.activated) * bf16);
    logits = random_buffer(elements(f.router_rows * m.routed_experts), DType::kF32, 23, 1.0f, c.stream);
    choices = DeviceBuffer(elements(f.router_rows * m.top_k) * word);
    choice_weights = DeviceBuffer(elements(f.router_rows * m.top_k) * word);
    routing_weights = random_buffer(elements(f.routed_rows), DType::kF32, 24, 1.0f, c.stream);
    hidden_states = random_buffer(elements(f.routed_rows * m.hidden), DType::kBf16, 25, 1.0f, c.stream);
    permuted = DeviceBuffer(elements(f.routed_rows * m.hidden) * bf16);
  }
  bench::ExpertsState experts;
  bench::Permutation permutation;
  WeightPool weights, gate_weights;  // the model's precision; the router's gate in BF16, as measured
  DeviceBuffer input, gate_input, output, activated;      // dense GEMMs, SwiGLU
  DeviceBuffer logits, choices, choice_weights;           // the router's top-k
  DeviceBuffer routing_weights, hidden_states, permuted;  // permute and unpermute
};

namespace {

using Kernel = std::function<void(long iteration)>;

class RankRunner {
 public:
  RankRunner(BenchContext& c, const StepExport& data, RankBuffers& buffers)
      : c_(c), data_(data), b_(buffers), shape_{data.model.mla,      data.model.heads,   data.model.kv_heads,
                                                data.model.head_dim, data.model.kv_lora, data.model.rope,
                                                data.model.nope,     data.model.v_head} {}

  // The launch's kernel with its inputs prepared (allocations and copies happen here, not timed).
  Kernel prepare(const KernelLaunch& l) {
    const int rows = static_cast<int>(l.rows);
    switch (l.kernel) {
      case LiveKernel::kGemm: {
        const int n = static_cast<int>(l.n), k = static_cast<int>(l.k);
        // The router's gate runs in BF16 with FP32 logits whatever the weights, as the suite measures it.
        if (l.op == "gate")
          return [this, rows, n, k, w = b_.gate_weights.take(l.n * l.k)](long) {
            bench::gemm_bf16(c_, w, b_.gate_input.get(), b_.output.get(), n, rows, k, DType::kF32);
          };
        return [this, rows, n, k, w = b_.weights.take(l.n * l.k)](long) {
          bench::weight_gemm(c_, data_.model.weights, w, b_.input.get(), b_.output.get(), n, rows, k);
        };
      }
      case LiveKernel::kSwiglu:
        return [this, rows, ffn = static_cast<int>(l.ffn)](long) {
          bench::swiglu(c_, b_.output.get(), b_.activated.get(), rows, ffn, DType::kBf16);
        };
      case LiveKernel::kAttentionDecode:
      case LiveKernel::kAttentionPrefill: {
        const bool prefill = l.kernel == LiveKernel::kAttentionPrefill;
        const int context = static_cast<int>(l.context);
        const bench::AttentionLayout layout = prefill ? bench::prefill_layout(shape_, rows, context)
                                                      : bench::decode_layout(shape_, rows, context);
        std::shared_ptr<bench::AttentionCase> one = bench::make_attention_case(c_, shape_, layout, prefill);
        return [this, one](long) { bench::run_attention_case(c_, shape_, *one); };
      }
      case LiveKernel::kTopK:
        return [this, rows](long) {
          bench::top_k(c_, b_.logits.as<float>(), rows, data_.model.routed_experts, data_.model.top_k,
                       b_.choices.as<int>(), b_.choice_weights.as<float>());
        };
      case LiveKernel::kPermute:
      case LiveKernel::kUnpermute:
        return permutation(l);
      case LiveKernel::kRoutedExperts: {
        // Every launch on the next rotation of the experts' weights, as each layer has its own.
        auto one = std::make_shared<bench::ExpertsCase>(c_, b_.experts, l.expert_tokens);
        return [this, one](long) { bench::run_routed_experts(c_, b_.experts, *one, expert_launches_++); };
      }
      case LiveKernel::kSendRecv:
        break;  // the exchange runs over every rank's GPU (Exchange)
    }
    throw std::logic_error("live: " + describe(l) + " is not a compute kernel");
  }

 private:
  // Each routed activation one row with its local expert's id, so that the permute groups exactly
  // the exported tokens per expert.
  Kernel permutation(const KernelLaunch& l) {
    const int rows = static_cast<int>(l.rows);
    if (l.kernel == LiveKernel::kUnpermute)
      return [this, rows](long) {
        bench::unpermute(c_, b_.permuted.as<__nv_bfloat16>(), b_.routing_weights.as<float>(), rows,
                         b_.permutation, b_.hidden_states.as<__nv_bfloat16>());
      };
    std::vector<int> host;
    for (std::size_t expert = 0; expert < l.expert_tokens.size(); ++expert)
      host.insert(host.end(), static_cast<std::size_t>(l.expert_tokens[expert]), static_cast<int>(expert));
    auto ids = std::make_shared<DeviceBuffer>(host.size() * sizeof(int));
    bench::to_device(ids->get(), host.data(), host.size() * sizeof(int));
    return [this, rows, ids](long) {
      bench::permute(c_, b_.hidden_states.as<__nv_bfloat16>(), ids->as<int>(), rows, b_.permutation,
                     b_.permuted.as<__nv_bfloat16>());
    };
  }

  BenchContext& c_;
  const StepExport& data_;
  RankBuffers& b_;
  bench::AttentionShape shape_;
  long expert_launches_ = 0;  // routed-experts launches run so far
};

}  // namespace

// The phase's kernels captured into one CUDA graph, as engines replay their steps (SGLang's CUDA
// graphs): launched one by one, a phase of small kernels would time the host's launch rate, not the
// GPU. Empty when the stream cannot capture them; the phase then runs kernel by kernel.
class PhaseGraph {
 public:
  PhaseGraph(cudaStream_t stream, const std::vector<Kernel>& kernels) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    bool enqueued = true;
    try {
      for (const Kernel& k : kernels) k(0);
    } catch (const std::exception&) {
      enqueued = false;  // a call refused under capture
    }
    cudaGraph_t graph = nullptr;
    const bool captured = cudaStreamEndCapture(stream, &graph) == cudaSuccess && enqueued && graph != nullptr;
    if (!captured || cudaGraphInstantiate(&exec_, graph, 0) != cudaSuccess) exec_ = nullptr;
    if (graph != nullptr) cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // what a failed capture left, before the phase runs eagerly
  }
  ~PhaseGraph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  PhaseGraph(const PhaseGraph&) = delete;
  PhaseGraph& operator=(const PhaseGraph&) = delete;
  bool captured() const { return exec_ != nullptr; }
  void launch(cudaStream_t stream) const { SEMSIM_CUDA(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

struct ReplayRank {
  std::unique_ptr<BenchContext> context;
  std::unique_ptr<RankBuffers> buffers;
  DeviceBuffer blas_workspace;  // cuBLAS's own, so that it allocates nothing under graph capture
};

Replay::Replay(const StepExport& data, std::vector<int> ranks, std::vector<int> devices)
    : data_(data), ranks_(std::move(ranks)) {
  ReplayFootprint footprint;
  for (const ExportedStep& step : data.steps)
    for (const int r : ranks_)
      for (const PhasePlan& phase : plan_rank_step(data, step, r))
        for (const KernelLaunch& l : phase.launches) footprint.include(l);
  for (const int device : devices) {
    auto& rank = ranks_state_.emplace_back(std::make_unique<ReplayRank>());
    rank->context = std::make_unique<BenchContext>(device, false);
    rank->buffers = std::make_unique<RankBuffers>(*rank->context, data.model, footprint);
    rank->blas_workspace = DeviceBuffer(rank->context->lt_workspace_bytes);
    SEMSIM_CUBLAS(
        cublasSetWorkspace(rank->context->blas, rank->blas_workspace.get(), rank->blas_workspace.bytes()));
  }
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  if (devices.size() > 1) {
    comms_.resize(devices.size());
    SEMSIM_NCCL(ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
    double most = 1;
    for (const ExportedStep& step : data.steps)
      for (const ExportedLayer& l : step.layers)
        for (int r = 0; r < data.ranks; ++r) {
          double sent = 0, received = 0;
          for (int p = 0; p < data.ranks; ++p) {
            sent += l.dispatch_bytes[r * data.ranks + p] + l.combine_bytes[r * data.ranks + p];
            received += l.dispatch_bytes[p * data.ranks + r] + l.combine_bytes[p * data.ranks + r];
          }
          most = std::max({most, sent, received});
        }
    for (auto& rank : ranks_state_) {
      SEMSIM_CUDA(cudaSetDevice(rank->context->device));
      send_.emplace_back(static_cast<std::size_t>(most));
      receive_.emplace_back(static_cast<std::size_t>(most));
    }
  }
#endif
}

Replay::~Replay() {
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  for (ncclComm_t comm : comms_) ncclCommDestroy(comm);
#endif
}

std::vector<bench::CheckResult> Replay::self_checks() {
  std::vector<bench::CheckResult> all;
  for (auto& rank : ranks_state_) {
    SEMSIM_CUDA(cudaSetDevice(rank->context->device));
    for (bench::CheckResult& r : bench::run_self_checks(*rank->context)) all.push_back(std::move(r));
  }
  return all;
}

std::vector<PhaseTiming> Replay::run_step(const ExportedStep& step, const bench::TimingOptions& timing) {
  std::vector<PhaseTiming> out;
  std::vector<std::vector<PhasePlan>> plans;
  for (const int r : ranks_) plans.push_back(plan_rank_step(data_, step, r));
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    ReplayRank& rank = *ranks_state_[ranks_state_.size() == 1 ? 0 : i];
    SEMSIM_CUDA(cudaSetDevice(rank.context->device));
    RankRunner runner(*rank.context, data_, *rank.buffers);
    for (const PhasePlan& phase : plans[i]) {
      if (phase.phase == "dispatch" || phase.phase == "combine") continue;
      std::vector<Kernel> kernels;
      for (const KernelLaunch& l : phase.launches) kernels.push_back(runner.prepare(l));
      cudaStream_t stream = rank.context->stream;
      for (const Kernel& k : kernels) k(0);  // once outside capture: lazy plans and allocations
      SEMSIM_CUDA(cudaStreamSynchronize(stream));
      const PhaseGraph graph(stream, kernels);
      const bench::Timing t =
          graph.captured()
              ? bench::time_launches([&](cudaStream_t s, long) { graph.launch(s); }, stream, timing)
              : bench::time_launches(
                    [&](cudaStream_t, long iteration) {
                      for (const Kernel& k : kernels) k(iteration);
                    },
                    stream, timing);
      out.push_back({ranks_[i], phase.phase, t, graph.captured()});
    }
  }
#ifndef SEMSIM_BENCH_WITHOUT_NCCL
  if (comms_.empty()) return out;
  for (const char* phase : {"dispatch", "combine"}) {
    std::vector<const PhasePlan*> exchanges;
    for (const auto& plan : plans)
      exchanges.push_back(
          &*std::find_if(plan.begin(), plan.end(), [&](const PhasePlan& p) { return p.phase == phase; }));
    const bench::Timing t = bench::time_launches([&](cudaStream_t, long) { exchange(exchanges); },
                                                 ranks_state_.front()->context->stream, timing);
    for (const int r : ranks_) out.push_back({r, phase, t});
  }
#endif
  return out;
}

#ifndef SEMSIM_BENCH_WITHOUT_NCCL
// Every layer's grouped send/recv with the exact per-pair bytes, each rank on its own GPU; the first
// GPU's stream then waits for all of them, so that its events time the whole exchange.
void Replay::exchange(const std::vector<const PhasePlan*>& plans) {
  const std::size_t layers = plans.front()->launches.size();
  for (std::size_t layer = 0; layer < layers; ++layer) {
    SEMSIM_NCCL(ncclGroupStart());
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const KernelLaunch& l = plans[r]->launches[layer];
      // The export's bytes are whole numbers, kept as doubles like the simulator's.
      const std::vector<long long> out(l.send_bytes.begin(), l.send_bytes.end()),
          in(l.receive_bytes.begin(), l.receive_bytes.end());
      bench::post_all_to_allv(out, in, send_[r], receive_[r], comms_[r], ranks_state_[r]->context->stream);
    }
    SEMSIM_NCCL(ncclGroupEnd());
  }
  cudaStream_t first = ranks_state_.front()->context->stream;
  for (std::size_t r = 1; r < ranks_state_.size(); ++r) {
    SEMSIM_CUDA(cudaSetDevice(ranks_state_[r]->context->device));
    cudaEvent_t done;
    SEMSIM_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    SEMSIM_CUDA(cudaEventRecord(done, ranks_state_[r]->context->stream));
    SEMSIM_CUDA(cudaStreamWaitEvent(first, done, 0));
    SEMSIM_CUDA(cudaEventDestroy(done));
  }
  SEMSIM_CUDA(cudaSetDevice(ranks_state_.front()->context->device));
}
#endif

}  // namespace semsim::live
