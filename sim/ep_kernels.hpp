#pragma once
// The time of the MoE dispatch and combine as DeepEP's kernels take it, from a profile's measured
// DeepEP tables (every GPU of one node: 8 of an HGX H100/H200/B200, 4 of a GB200 compute tray, as the
// profile's provenance says): normal (high-throughput) for steps with prefill, low-latency for
// decode-only steps under SGLang's auto rule.
// - On the tables' group (one node of that many), from the table of the model's shape. The tables time
//   uniformly random top-k routing; the engine's own traffic enters through its busiest rank: the
//   remote copies that rank sends are turned into the tokens per rank that would send as many under
//   uniform routing, and the kernel is timed at that. Routing that keeps tokens local (Sem-MoE's
//   goal) so takes less time, as the measured kernel's bandwidth curve says.
// - Elsewhere (a group over nodes, or of another size), from a link model fit on every measured
//   shape of the kernel: a fixed latency plus the busiest rank's bytes over the bandwidth the
//   kernel's SMs reach on NVLink, and over the lesser of that and the NICs' calibrated bandwidth for
//   the bytes it sends or receives by RDMA. A GB200 NVL72 rack is one NVLink domain (one node of 72):
//   EP over up to 72 of its GPUs is all NVLink at the link model of the tray's tables.
// - Without DeepEP tables in the profile (a datasheet device), a DeepEP dispatch mode is priced by the
//   link model of the measured H100/H200 tables at the device's share of SMs, its NVLink bandwidth
//   capped by the device's calibrated link; an NCCL-style dispatch as its copies over the topology.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/fit/kernel_library.hpp"
#include "models/choice_names.hpp"
#include "models/cluster.hpp"
#include "models/moe_model.hpp"
#include "policies/dispatch.hpp"
#include "sim/integer_memo.hpp"

namespace semsim {

// serving.ep_kernel.
enum class EpKernel { kAuto, kNormal, kLowLatency, kNccl };
inline constexpr ChoiceNames<EpKernel, 4> kEpKernelNames{{{EpKernel::kAuto, "auto"},
                                                          {EpKernel::kNormal, "normal"},
                                                          {EpKernel::kLowLatency, "low_latency"},
                                                          {EpKernel::kNccl, "nccl"}}};

// t = latency + copies x per_copy + bytes / bandwidth for one DeepEP kernel, fit by least squares on
// relative error over the measured rows of every shape of `kernel` (normal kernels: at `sms` SMs) but
// `leave_out_shape`; a rank's copies and bytes are what it receives on the tables' node under uniform
// routing: the tables' tokens x the kernel's copies per token, times hidden x the payload for the
// bytes (dispatch FP8, 1 B and a 4 B scale per 128 elements; combine BF16). The per-copy cost is the
// SMs' work per token message, whatever its size: without it a narrow model's tokens (hidden 2048)
// came back 35-49 % too fast and a wide one's (7168) 28-36 % too slow on B200/GB200 shapes left out.
// Where the rows cannot tell it apart (one hidden size) or it fits below zero, it is 0 and the
// latency and bandwidth are fitted alone. Nothing when fewer than 4 rows fit.
struct DeepepLinkModel {
  double latency = 0;    // seconds
  double per_copy = 0;   // seconds per token copy a rank sends or receives
  double bandwidth = 0;  // bytes/s a rank moves
  int samples = 0;
};
std::optional<DeepepLinkModel> fit_deepep_link_model(const CalibrationProfile& profile,
                                                     const std::string& kernel, int sms,
                                                     const std::string& leave_out_shape = "");

// The SMs of the reference devices (H100/H200 SXM), for a device that does not say its own.
inline constexpr int kReferenceComputeUnits = 132;

// DeepEP's `kernel` on a device without DeepEP tables: the link model of the measured H100 and H200
// SXM tables (the embedded profiles; their mean), at the same share of the device's SMs as the
// kernel holds (normal kernels: interpolated between the SM counts measured, in proportion below
// the least), its NVLink bandwidth at most `nvlink_bandwidth` (the device's link at the profile's
// scale-up efficiency: an H800's 200 GB/s link caps what an H100's SMs would push). Nothing when
// no reference profile has the kernel.
std::optional<DeepepLinkModel> transferred_deepep_link_model(const std::string& kernel, double sm_share,
                                                             double nvlink_bandwidth);

struct DeepepChoice {
  EpKernel kernel = EpKernel::kAuto;  // serving.ep_kernel (a DeepEP dispatch mode names its own)
  int sms = 0;                        // normal kernels' SMs (0: the device's communication_units)
  bool link_model = false;            // the link model even where the tables measure the group
  bool leave_own_shape_out = false;   // fit it without the model's own shape (validation)
};

// Seconds of an MoE layer's dispatch and of its combine.
struct ExchangeSeconds {
  double dispatch = 0, combine = 0;
};

class DeepepTimes {
 public:
  // Nothing when the choice is kNccl or the profile cannot time DeepEP for this group; `why_not`
  // then says why (for the summary). A DeepEP dispatch mode (normal, low_latency, auto) names the
  // kernel itself: the choice then only says whether DeepEP's tables time it (auto) or not (nccl).
  static std::optional<DeepepTimes> make(const KernelLibrary& library, const CalibrationProfile& profile,
                                         const MoeModel& model, const Cluster& cluster, int ep,
                                         DispatchMode mode, const DeepepChoice& choice, std::string& why_not);

  // The kernel it times: normal, low_latency, or auto (sim/dispatch_timing.hpp resolves auto per step).
  EpKernel kernel() const { return choice_; }
  // Seconds of one dispatch (or combine) whose copies, moved as `traffic` counts them, are
  // `copies[src * ep + dst]`, of `bytes_per_copy` each. The link model reads the bytes; the tables,
  // measured with an FP8 dispatch and a BF16 combine payload, are read at the tokens that move as
  // many bytes (a BF16 or NVFP4 dispatch payload there takes the FP8 table's time for its bytes).
  // The dispatch's and the combine's (which moves the same copies back, of `combine_bytes_per_copy`),
  // the copies read once for both.
  ExchangeSeconds seconds(EpKernel kernel, std::span<const long long> copies, DispatchMode traffic,
                          double dispatch_bytes_per_copy, double combine_bytes_per_copy) const;
  // What summary.json says priced the dispatch.
  std::string description() const;

 private:
  DeepepTimes() = default;
  // The busiest rank's copies (the larger of those it sends and receives) over NVLink and over RDMA,
  // and over both (each copy's fixed cost).
  struct LinkLoads {
    long long nvlink = 0, rdma = 0, copies = 0;
  };
  LinkLoads link_loads(std::span<const long long> copies) const;
  double link_seconds(const DeepepLinkModel& link, const LinkLoads& loads, double bytes_per_copy) const;
  // A table's time (low-latency or normal, combine or dispatch) at the tokens that move `busiest`
  // remote copies of `bytes_per_copy`.
  double table_seconds(bool low_latency, bool combine, long long busiest, DispatchMode traffic,
                       double bytes_per_copy) const;

  EpKernel choice_ = EpKernel::kAuto;
  bool transferred_ = false;  // the link model of the reference devices' tables (a profile without any)
  int sms_ = 0;
  int ep_ = 0;
  int devices_per_node_ = 0;
  int hidden_ = 0;
  double rdma_bandwidth_ = 0;  // a GPU's NIC at the profile's scale-out efficiency
  // Remote copies per token under uniform routing, the tables' routing, by traffic mode.
  double dedup_copies_per_token_ = 0, per_expert_copies_per_token_ = 0, all_gather_copies_per_token_ = 0;
  // The tables of the model's shape, or (link model) the fits: dispatch and combine, normal and LL.
  std::shared_ptr<KernelCurve> normal_dispatch_, normal_combine_, ll_dispatch_, ll_combine_;
  std::optional<DeepepLinkModel> normal_dispatch_link_, normal_combine_link_, ll_dispatch_link_,
      ll_combine_link_;
  // The tables' seconds by (kernel, direction, traffic mode) and the busiest rank's remote copies:
  // two a MoE layer of every step. A row is of one payload (bytes per copy): a question at another
  // forgets it.
  mutable IntegerMemo table_seconds_;
  mutable std::vector<double> row_bytes_per_copy_;
};

}  // namespace semsim
