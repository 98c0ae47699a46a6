#pragma once
// One collective timed alone and repeated back to back, as `semsim collective` reports it: the MoE
// dispatch and combine of `tokens` tokens per rank, routed by a popularity law (optionally
// group-limited) over contiguously placed experts (optionally with redundant slots) and moved by any
// dispatch mode, priced as a run prices them (DeepEP's measured
// tables where they time the group, else the copies over the topology); or an NCCL collective over
// buffers of `tokens` hidden states per rank. A collective alone takes its closed form in both
// network fidelities (sim/network.hpp), so the fidelity changes nothing here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "models/cluster.hpp"
#include "models/moe_model.hpp"
#include "models/operator_costs.hpp"

namespace semsim {

// The dispatch modes as policies.dispatch names them (dedup, per_expert, allgather, normal,
// low_latency, auto), then NCCL's all_reduce, all_gather and reduce_scatter.
const std::vector<std::string>& collective_kernel_names();

struct CollectiveBenchSpec {
  MoeModel model;
  Cluster cluster;
  std::shared_ptr<const CalibrationProfile> profile;
  int ep = 8;
  int tokens = 128;  // per rank
  std::string kernel = "normal";
  double zipf = 0;  // expert popularity ~ 1 / rank^zipf over a seeded order (0: uniform)
  // Each token's top-k kept to the model's best topk_expert_groups of expert_groups groups, as
  // DeepSeek-V3's gate keeps them (workloads/expert_groups.hpp); groups are consecutive experts.
  bool group_limited = false;
  // Physical expert slots beyond the logical experts: SGLang's trivial layout (experts 0..R-1 get a
  // second slot; policies/contiguous_placement.hpp), replicas chosen round robin as a run does.
  int redundant = 0;
  int repeat = 1;  // calls, each with freshly drawn routing
  std::uint64_t seed = 1;
  int sms = 0;               // DeepEP normal's SMs (0: the device's communication_units)
  bool decode_step = false;  // `auto` times a decode-only step (low_latency), else one with prefill
  DispatchFormat dispatch_format = DispatchFormat::kFp8;  // the dispatch payload
  bool measured_tables = true;  // false: never DeepEP's or NCCL's tables, always the topology
  // DeepEP's link model even where its tables measure the group, fit without the model's own shape:
  // what validates the model that prices DeepEP across nodes.
  bool link_model = false;
  bool extrapolate = false;  // calibration.extrapolate: tables queried far outside their measured grid
};

struct CollectiveBenchResult {
  std::string timed_by;          // what priced it (DeepEP's tables, NCCL's fits, the topology)
  bool nccl_collective = false;  // all_reduce | all_gather | reduce_scatter: one time, no combine
  double dispatch_seconds = 0;   // mean per call (an NCCL collective's time)
  double combine_seconds = 0;
  // Mean per rank and call, of the dispatch; the combine moves the same copies back in BF16, so its
  // bytes are these times combine_bytes_per_dispatch_byte.
  double scale_up_bytes = 0;   // sent over NVLink (forwarded copies included)
  double scale_out_bytes = 0;  // sent over the NICs
  double forwarded_bytes = 0;
  double combine_bytes_per_dispatch_byte = 1;
  std::string bottleneck_link;  // nvlink | rdma: the level whose bytes take longest at its bandwidth
  // The level DeepEP's convention reports: NVLink for a group on one node, RDMA for one over nodes
  // (its internode kernels report the NIC bytes).
  std::string reported_link;
  // DeepEP's convention: a rank's bytes over a level per second of the call, for both levels.
  double dispatch_nvlink_gbps = 0, dispatch_rdma_gbps = 0, combine_nvlink_gbps = 0, combine_rdma_gbps = 0;
  // nccl-tests': algbw = S / t over a rank's buffer S (for a dispatch, the copies it sends, its own
  // included); busbw = algbw x the collective's bus factor ((n-1)/n, all-reduce 2(n-1)/n).
  double algbw_gbps = 0, busbw_gbps = 0;
};

// InputError for a kernel name it does not know or an EP group the cluster cannot hold.
CollectiveBenchResult bench_collective(const CollectiveBenchSpec& spec);

}  // namespace semsim
