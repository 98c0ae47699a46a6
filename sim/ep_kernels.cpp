#include "sim/ep_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "calibrate/format/shape_words.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"

namespace semsim {
namespace {

// The measured tables' group: EP over every GPU of one node of the machine they were measured on — the
// profile's topology, else its largest measured collective (an imported database's NCCL tables are of
// one node: 8 GPUs of an HGX H100/H200/B200, 4 of a GB200 compute tray), else 8.
int measured_ranks(const CalibrationProfile& profile) {
  if (!profile.provenance) return 8;
  if (profile.provenance->topology) return profile.provenance->topology->gpus_per_node;
  return profile.provenance->gpus > 0 ? profile.provenance->gpus : 8;
}

// P(a token's top-k over `experts` misses the experts of one of `ranks` equal ranks) under uniform
// routing without repeats.
double miss_probability(int experts, int top_k, int ranks) {
  const int outside = experts - experts / ranks;
  double p = 1;
  for (int j = 0; j < top_k; ++j) p *= static_cast<double>(outside - j) / static_cast<double>(experts - j);
  return std::max(0.0, p);
}

// The devices whose measured DeepEP tables price DeepEP on a device without any (GH100, 132 SMs).
constexpr const char* kReferenceDevices[] = {"h100-sxm", "h200-sxm"};

// The SM counts `kernel`'s tables of `profile` were measured at (normal kernels), increasing.
std::vector<int> measured_sms(const CalibrationProfile& profile, const std::string& kernel) {
  std::vector<int> sms;
  for (const KernelTable& table : profile.kernels)
    if (table.kernel == kernel)
      if (const auto value = shape_value(table.shape, "sms")) sms.push_back(static_cast<int>(*value));
  std::sort(sms.begin(), sms.end());
  sms.erase(std::unique(sms.begin(), sms.end()), sms.end());
  return sms;
}

// The link model of one reference profile at `sms` SMs of its own: between the SM counts measured,
// latency and bandwidth interpolated linearly; below the least, its latency and a bandwidth in
// proportion to the SMs (each SM moves its share); above the most, held (the link caps it after).
std::optional<DeepepLinkModel> link_model_at(const CalibrationProfile& profile, const std::string& kernel,
                                             double sms) {
  if (!kernel.starts_with("deepep_normal")) return fit_deepep_link_model(profile, kernel, 0);
  const std::vector<int> measured = measured_sms(profile, kernel);
  if (measured.empty()) return std::nullopt;
  const auto above = std::lower_bound(measured.begin(), measured.end(), sms);
  if (above == measured.begin() || above == measured.end()) {
    const int at = above == measured.end() ? measured.back() : measured.front();
    auto model = fit_deepep_link_model(profile, kernel, at);
    if (model && sms < at) model->bandwidth *= sms / at, model->per_copy *= at / sms;
    return model;
  }
  const int high = *above, low = *std::prev(above);
  const auto a = fit_deepep_link_model(profile, kernel, low),
             b = fit_deepep_link_model(profile, kernel, high);
  if (!a || !b) return a ? a : b;
  const double t = (sms - low) / (high - low);
  return DeepepLinkModel{a->latency + t * (b->latency - a->latency),
                         a->per_copy + t * (b->per_copy - a->per_copy),
                         a->bandwidth + t * (b->bandwidth - a->bandwidth), a->samples + b->samples};
}

}  // namespace

std::optional<DeepepLinkModel> transferred_deepep_link_model(const std::string& kernel, double sm_share,
                                                             double nvlink_bandwidth) {
  double latency = 0, per_copy = 0, bandwidth = 0;
  int references = 0, samples = 0;
  for (const char* name : kReferenceDevices) {
    const Device device =
        load_device(YamlInput(YAML::Node(name), std::make_shared<const std::string>("reference"), ""), ".");
    const auto profile = CalibrationProfile::measured(device);
    if (!profile) continue;
    const auto model = link_model_at(*profile, kernel, sm_share * device.compute_units);
    if (!model) continue;
    latency += model->latency, per_copy += model->per_copy, bandwidth += model->bandwidth,
        samples += model->samples, ++references;
  }
  if (references == 0) return std::nullopt;
  return DeepepLinkModel{latency / references, per_copy / references,
                         std::min(bandwidth / references, nvlink_bandwidth), samples};
}

std::optional<DeepepLinkModel> fit_deepep_link_model(const CalibrationProfile& profile,
                                                     const std::string& kernel, int sms,
                                                     const std::string& leave_out_shape) {
  const bool normal = kernel.starts_with("deepep_normal");
  const bool combine = kernel.ends_with("combine");
  const double payload = combine ? kBf16Bytes : kFp8BlockScaledBytes;
  // Weighted least squares on relative error: weights 1 / t^2 in t = latency + copies * per_copy +
  // bytes * per_byte (normal equations of the three, and of latency and bytes alone).
  double normal_equations[3][4] = {};
  int samples = 0;
  for (const KernelTable& table : profile.kernels) {
    if (table.kernel != kernel || table.axes.size() != 1) continue;
    const auto hidden = shape_value(table.shape, "hidden"), experts = shape_value(table.shape, "experts"),
               top_k = shape_value(table.shape, "top_k"), table_sms = shape_value(table.shape, "sms");
    if (!hidden || !experts || !top_k || (normal && table_sms != sms)) continue;
    if (!leave_out_shape.empty() &&
        fmt::format("hidden={} experts={} top_k={}", *hidden, *experts, *top_k) == leave_out_shape)
      continue;
    const int e = static_cast<int>(*experts), k = static_cast<int>(*top_k), ranks = measured_ranks(profile);
    const double copies_per_token =
        normal ? (ranks - 1) * (1 - miss_probability(e, k, ranks)) : k * (ranks - 1.0) / ranks;
    for (std::size_t i = 0; i < table.seconds.size(); ++i) {
      if (!table.seconds[i]) continue;
      const double copies = table.axes[0].values[i] * copies_per_token;
      const double x[3] = {1, copies, copies * static_cast<double>(*hidden) * payload};
      const double y = *table.seconds[i], w = 1 / (y * y);
      for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) normal_equations[a][b] += w * x[a] * x[b];
        normal_equations[a][3] += w * x[a] * y;
      }
      ++samples;
    }
  }
  if (samples < 4) return std::nullopt;
  const auto& n = normal_equations;
  const auto det3 = [&](int c0, int c1, int c2) {
    return n[0][c0] * (n[1][c1] * n[2][c2] - n[1][c2] * n[2][c1]) -
           n[0][c1] * (n[1][c0] * n[2][c2] - n[1][c2] * n[2][c0]) +
           n[0][c2] * (n[1][c0] * n[2][c1] - n[1][c1] * n[2][c0]);
  };
  // Cramer's rule; a determinant this small against its diagonal is copies and bytes in one ratio.
  const double det = det3(0, 1, 2);
  if (std::abs(det) > 1e-9 * n[0][0] * n[1][1] * n[2][2]) {
    const double latency = det3(3, 1, 2) / det, per_copy = det3(0, 3, 2) / det,
                 per_byte = det3(0, 1, 3) / det;
    if (latency >= 0 && per_copy >= 0 && per_byte > 0)
      return DeepepLinkModel{latency, per_copy, 1 / per_byte, samples};
  }
  const double det2 = n[0][0] * n[2][2] - n[0][2] * n[0][2];
  double latency = det2 > 0 ? (n[2][2] * n[0][3] - n[0][2] * n[2][3]) / det2 : 0;
  double per_byte = det2 > 0 ? (n[0][0] * n[2][3] - n[0][2] * n[0][3]) / det2 : 0;
  if (latency < 0) {  // through the origin instead
    latency = 0;
    per_byte = n[2][3] / n[2][2];
  }
  if (!(per_byte > 0)) return std::nullopt;
  return DeepepLinkModel{latency, 0, 1 / per_byte, samples};
}

std::optional<DeepepTimes> DeepepTimes::make(const KernelLibrary& library, const CalibrationProfile& profile,
                                             const MoeModel& model, const Cluster& cluster, int ep,
                                             DispatchMode mode, const DeepepChoice& choice,
                                             std::string& why_not) {
  EpKernel kernel = choice.kernel;
  if (is_deepep(mode) && kernel != EpKernel::kNccl)
    kernel = mode == DispatchMode::kHierarchical ? EpKernel::kNormal
             : mode == DispatchMode::kLowLatency ? EpKernel::kLowLatency
                                                 : EpKernel::kAuto;
  // Untimed by DeepEP, an NCCL-style dispatch is priced as NCCL's copies; a DeepEP one as its own
  // copies (hierarchical or per expert), both over the topology.
  const char* instead = is_deepep(mode) ? "its copies over the topology" : "nccl";
  if (kernel == EpKernel::kNccl) {
    why_not = fmt::format("{} (serving.ep_kernel)", instead);
    return std::nullopt;
  }
  const int devices_per_node = std::min(cluster.gpus_per_node, ep);
  const int measured = measured_ranks(profile);
  const bool tables_group = ep == measured && devices_per_node == ep;
  // An NCCL-style dispatch uses DeepEP's time only where DeepEP measured the very group.
  if (!tables_group && !is_deepep(mode)) {
    why_not =
        fmt::format("nccl (DeepEP is measured on one node of {} GPUs; this EP group is {} over nodes of {})",
                    measured, ep, cluster.gpus_per_node);
    return std::nullopt;
  }
  DeepepTimes t;
  t.choice_ = kernel;
  t.ep_ = ep;
  t.devices_per_node_ = devices_per_node;
  t.hidden_ = model.hidden;
  t.rdma_bandwidth_ = cluster.nic_bandwidth * profile.scaleout_efficiency;
  const std::string shape =
      fmt::format("hidden={} experts={} top_k={}", model.hidden, model.routed_experts, model.top_k);
  // DeepEP's normal kernels run on the SMs the communication kernels hold (DeepEP's default 24).
  const int sms = choice.sms > 0                           ? choice.sms
                  : cluster.device.communication_units > 0 ? cluster.device.communication_units
                                                           : 24;
  const bool want_normal = kernel != EpKernel::kLowLatency, want_ll = kernel != EpKernel::kNormal;
  bool found = true;
  if (choice.link_model || !tables_group) {
    const std::string leave_out = choice.leave_own_shape_out ? shape : "";
    t.normal_dispatch_link_ = fit_deepep_link_model(profile, "deepep_normal_dispatch", sms, leave_out);
    t.normal_combine_link_ = fit_deepep_link_model(profile, "deepep_normal_combine", sms, leave_out);
    t.ll_dispatch_link_ = fit_deepep_link_model(profile, "deepep_ll_dispatch", 0, leave_out);
    t.ll_combine_link_ = fit_deepep_link_model(profile, "deepep_ll_combine", 0, leave_out);
    found = (!want_normal || (t.normal_dispatch_link_ && t.normal_combine_link_)) &&
            (!want_ll || (t.ll_dispatch_link_ && t.ll_combine_link_));
  } else {
    const std::string normal = fmt::format("{} sms={}", shape, sms);
    t.normal_dispatch_ = library.curve("deepep_normal_dispatch", normal, "bf16");
    t.normal_combine_ = library.curve("deepep_normal_combine", normal, "bf16");
    t.ll_dispatch_ = library.curve("deepep_ll_dispatch", shape, "bf16");
    t.ll_combine_ = library.curve("deepep_ll_combine", shape, "bf16");
    found = (!want_normal || (t.normal_dispatch_ && t.normal_combine_)) &&
            (!want_ll || (t.ll_dispatch_ && t.ll_combine_));
  }
  if (!found && is_deepep(mode)) {
    // No DeepEP tables in the profile (a datasheet device): the measured H100/H200 kernels' link
    // model at this device's share of SMs, never the raw link rate.
    const double share =
        static_cast<double>(sms) /
        (cluster.device.compute_units > 0 ? cluster.device.compute_units : kReferenceComputeUnits);
    const double nvlink = cluster.scaleup_bandwidth * profile.scaleup_efficiency;
    t.normal_dispatch_link_ = transferred_deepep_link_model("deepep_normal_dispatch", share, nvlink);
    t.normal_combine_link_ = transferred_deepep_link_model("deepep_normal_combine", share, nvlink);
    t.ll_dispatch_link_ = transferred_deepep_link_model("deepep_ll_dispatch", share, nvlink);
    t.ll_combine_link_ = transferred_deepep_link_model("deepep_ll_combine", share, nvlink);
    t.transferred_ = true;
    t.sms_ = sms;
    found = (!want_normal || (t.normal_dispatch_link_ && t.normal_combine_link_)) &&
            (!want_ll || (t.ll_dispatch_link_ && t.ll_combine_link_));
  }
  if (!found) {
    why_not = fmt::format("{} (the calibration profile has no DeepEP tables for it)", instead);
    return std::nullopt;
  }
  const double remote_ranks = static_cast<double>(ep - 1);
  t.dedup_copies_per_token_ = remote_ranks * (1 - miss_probability(model.routed_experts, model.top_k, ep));
  t.per_expert_copies_per_token_ = model.top_k * remote_ranks / ep;
  t.all_gather_copies_per_token_ = remote_ranks;
  return t;
}

DeepepTimes::LinkLoads DeepepTimes::link_loads(std::span<const long long> copies) const {
  const auto at = [&](int src, int dst) { return copies[static_cast<std::size_t>(src) * ep_ + dst]; };
  LinkLoads busiest;
  for (int r = 0; r < ep_; ++r) {
    long long nvlink_out = 0, nvlink_in = 0, rdma_out = 0, rdma_in = 0;
    for (int peer = 0; peer < ep_; ++peer) {
      if (peer == r) continue;
      const bool same_node = r / devices_per_node_ == peer / devices_per_node_;
      (same_node ? nvlink_out : rdma_out) += at(r, peer);
      (same_node ? nvlink_in : rdma_in) += at(peer, r);
    }
    busiest.nvlink = std::max({busiest.nvlink, nvlink_out, nvlink_in});
    busiest.rdma = std::max({busiest.rdma, rdma_out, rdma_in});
    busiest.copies = std::max({busiest.copies, nvlink_out + rdma_out, nvlink_in + rdma_in});
  }
  return busiest;
}

double DeepepTimes::link_seconds(const DeepepLinkModel& link, const LinkLoads& loads,
                                 double bytes_per_copy) const {
  if (loads.nvlink == 0 && loads.rdma == 0) return 0.0;
  const double rdma_bandwidth =
      std::min(link.bandwidth, rdma_bandwidth_ > 0 ? rdma_bandwidth_ : link.bandwidth);
  const double busiest = std::max(static_cast<double>(loads.nvlink) * bytes_per_copy / link.bandwidth,
                                  static_cast<double>(loads.rdma) * bytes_per_copy / rdma_bandwidth);
  return link.latency + static_cast<double>(loads.copies) * link.per_copy + busiest;
}

double DeepepTimes::table_seconds(bool low_latency, bool combine, long long busiest, DispatchMode traffic,
                                  double bytes_per_copy) const {
  if (busiest == 0) return 0.0;
  // One node: the hierarchical dispatch moves the dedup copies.
  const bool all_gather = traffic == DispatchMode::kAllGather;
  const bool per_expert = traffic == DispatchMode::kPerExpert || traffic == DispatchMode::kLowLatency;
  const double per_token = all_gather   ? all_gather_copies_per_token_
                           : per_expert ? per_expert_copies_per_token_
                                        : dedup_copies_per_token_;
  const std::size_t row = ((low_latency * 2 + combine) * 2 + per_expert) * 2 + all_gather;
  if (row >= row_bytes_per_copy_.size()) row_bytes_per_copy_.resize(row + 1, 0.0);
  if (row_bytes_per_copy_[row] != bytes_per_copy) {
    table_seconds_.clear(row);
    row_bytes_per_copy_[row] = bytes_per_copy;
  }
  return table_seconds_.get(row, busiest, [&] {
    const double table_bytes_per_copy = hidden_ * (combine ? kBf16Bytes : kFp8BlockScaledBytes);
    const double tokens = static_cast<double>(busiest) / per_token * bytes_per_copy / table_bytes_per_copy;
    const KernelCurve& curve = low_latency ? (combine ? *ll_combine_ : *ll_dispatch_)
                                           : (combine ? *normal_combine_ : *normal_dispatch_);
    return curve.seconds(tokens);
  });
}

ExchangeSeconds DeepepTimes::seconds(EpKernel kernel, std::span<const long long> copies, DispatchMode traffic,
                                     double dispatch_bytes_per_copy, double combine_bytes_per_copy) const {
  const bool low_latency = kernel == EpKernel::kLowLatency;
  if (normal_dispatch_link_ || ll_dispatch_link_) {
    const LinkLoads loads = link_loads(copies);
    return {
        link_seconds(low_latency ? *ll_dispatch_link_ : *normal_dispatch_link_, loads,
                     dispatch_bytes_per_copy),
        link_seconds(low_latency ? *ll_combine_link_ : *normal_combine_link_, loads, combine_bytes_per_copy)};
  }
  long long busiest = 0;  // remote copies a rank sends
  for (int src = 0; src < ep_; ++src) {
    long long remote = 0;
    for (int dst = 0; dst < ep_; ++dst)
      if (dst != src) remote += copies[static_cast<std::size_t>(src) * ep_ + dst];
    busiest = std::max(busiest, remote);
  }
  return {table_seconds(low_latency, false, busiest, traffic, dispatch_bytes_per_copy),
          table_seconds(low_latency, true, busiest, traffic, combine_bytes_per_copy)};
}

std::string DeepepTimes::description() const {
  const std::string kernel = choice_ == EpKernel::kNormal ? "deepep normal"
                             : choice_ == EpKernel::kLowLatency
                                 ? "deepep low_latency"
                                 : "deepep auto (low_latency for decode-only steps, "
                                   "normal otherwise)";
  if (!normal_dispatch_link_ && !ll_dispatch_link_) return kernel;
  const auto& link =
      choice_ == EpKernel::kLowLatency || !normal_dispatch_link_ ? ll_dispatch_link_ : normal_dispatch_link_;
  return fmt::format(
      "{}, link model of {} (dispatch {:.1f} us + {:.1f} ns a copy + bytes at {:.0f} GB/s; RDMA at most "
      "{:.0f} "
      "GB/s)",
      kernel,
      transferred_ ? fmt::format("the measured H100/H200 DeepEP tables at this device's SM share ({} SMs), "
                                 "NVLink at most its calibrated bandwidth",
                                 sms_)
                   : "its measured tables",
      link->latency * 1e6, link->per_copy * 1e9, link->bandwidth / 1e9,
      std::min(link->bandwidth, rdma_bandwidth_) / 1e9);
}

}  // namespace semsim
