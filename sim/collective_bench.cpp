#include "sim/collective_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>

#include "calibrate/fit/kernel_library.hpp"
#include "models/input_error.hpp"
#include "models/topology.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/dispatch.hpp"
#include "policies/policy_registry.hpp"
#include "sim/collective_pricing.hpp"
#include "sim/collectives.hpp"
#include "sim/dispatch_timing.hpp"
#include "sim/nccl_collectives.hpp"
#include "sim/network.hpp"
#include "sim/run_plan.hpp"
#include "workloads/alias_table.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/expert_groups.hpp"

namespace semsim {
namespace {

struct NcclKernel {
  const char* name;
  ShardCollective kind;
  double bus_factor_numerator;  // busbw = algbw x this x (n - 1) / n
};
constexpr NcclKernel kNcclKernels[] = {{"all_reduce", ShardCollective::kAllReduce, 2},
                                       {"all_gather", ShardCollective::kAllGather, 1},
                                       {"reduce_scatter", ShardCollective::kReduceScatter, 1}};

// Expert popularity: 1 / rank^zipf over an order shuffled by `seed` (Fisher-Yates on counter draws,
// the same on every platform).
std::vector<double> popularity(int experts, double zipf, std::uint64_t seed) {
  std::vector<int> order(experts);
  std::iota(order.begin(), order.end(), 0);
  for (int i = experts - 1; i > 0; --i)
    std::swap(order[i], order[mix_keys(seed, 0xC011EC7, static_cast<std::uint64_t>(i)) % (i + 1)]);
  std::vector<double> weights(experts);
  for (int rank = 0; rank < experts; ++rank) weights[order[rank]] = 1.0 / std::pow(rank + 1.0, zipf);
  return weights;
}

// Each rank's `tokens` tokens, each routed to top_k distinct experts drawn in proportion to
// `weights`, within the group limit when it limits.
class Router {
 public:
  Router(const std::vector<double>& weights, const ExpertGroupLimit& limit, int top_k, std::uint64_t seed)
      : weights_(weights), table_(weights), top_k_(top_k), seed_(seed) {
    if (limit.limits()) grouped_.emplace(limit, top_k);
  }

  void route(int ep, int tokens, std::uint64_t call, std::vector<int>& token_device,
             std::vector<ExpertId>& experts) {
    token_device.assign(static_cast<std::size_t>(ep) * tokens, 0);
    experts.resize(token_device.size() * top_k_);
    std::mt19937_64 rng(mix_keys(seed_, 0x6E0C, call));
    std::uint64_t draw = 0;
    for (std::size_t token = 0; token < token_device.size(); ++token) {
      token_device[token] = static_cast<int>(token / tokens);
      ExpertId* set = experts.data() + token * top_k_;
      if (grouped_) {
        grouped_->fill(weights_, set, 0, rng);
        continue;
      }
      for (int drawn = 0; drawn < top_k_;) {
        const auto expert = static_cast<ExpertId>(table_.draw(mix_keys(seed_, call + 1, draw++)));
        if (std::find(set, set + drawn, expert) == set + drawn) set[drawn++] = expert;
      }
    }
  }

 private:
  const std::vector<double>& weights_;
  AliasTable table_;
  std::optional<GroupLimitedDraw> grouped_;
  int top_k_;
  std::uint64_t seed_;
};

// Per-rank bytes of a level over that level's per-GPU bandwidth: the longer names the bottleneck.
// DeepEP reports its intranode kernels' bandwidth over NVLink and its internode kernels' over RDMA
// (the NIC bytes): the group's span names the link its convention reports.
void name_links(const Cluster& cluster, const Topology& topology, CollectiveBenchResult& r) {
  const double nvlink = r.scale_up_bytes / cluster.scaleup_bandwidth;
  const double rdma = cluster.nic_bandwidth > 0 ? r.scale_out_bytes / cluster.nic_bandwidth : 0.0;
  r.bottleneck_link = rdma > nvlink ? "rdma" : "nvlink";
  r.reported_link = topology.devices > topology.devices_per_node ? "rdma" : "nvlink";
}

double gbps(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
}

void check_group(const CollectiveBenchSpec& spec) {
  if (spec.ep < 2 || spec.ep > spec.cluster.devices())
    throw InputError(fmt::format("--ep {}: the cluster '{}' holds groups of 2 to {} GPUs", spec.ep,
                                 spec.cluster.name, spec.cluster.devices()));
  const int slots = spec.model.routed_experts + spec.redundant;
  if (spec.redundant < 0 || slots % spec.ep != 0)
    throw InputError(fmt::format(
        "--ep {} does not divide the {} routed experts{} of '{}'", spec.ep, spec.model.routed_experts,
        spec.redundant > 0 ? fmt::format(" + {} redundant slots", spec.redundant) : "", spec.model.name));
  if (spec.group_limited && !ExpertGroupLimit::of(spec.model).limits())
    throw InputError(fmt::format("--group-limited: '{}' has no group limit (n_group {}, topk_group {})",
                                 spec.model.name, spec.model.expert_groups, spec.model.topk_expert_groups));
  if (spec.tokens < 1 || spec.repeat < 1) throw InputError("--tokens and --repeat must be at least 1");
}

// --sms sets the SMs of DeepEP's normal kernels, whose share of the device their tables and link
// model price; refused where no such kernel times the call, rather than ignored.
void refuse_unused_sms(const CollectiveBenchSpec& spec, const DispatchTiming& timing, bool decode_only,
                       const std::string& timed_by) {
  if (spec.sms == 0 || (timing.measured() && timing.for_step(decode_only).kernel == EpKernel::kNormal))
    return;
  const std::string why =
      !spec.measured_tables
          ? "--timing topology prices the copies over the topology at the links' calibrated "
            "rates (as serving.ep_kernel: nccl does), which no SM count changes; DeepEP's "
            "tables and link model price its SMs' share (--timing tables or model)"
      : timing.measured() ? "DeepEP's low-latency kernel times this call, whose tables have no SM count"
                          : "it is timed by " + timed_by + ", which no SM count changes";
  throw InputError(
      fmt::format("--sms {} sets the SMs of DeepEP's normal kernels, and --kernel {} runs none: {}", spec.sms,
                  spec.kernel, why));
}

CollectiveBenchResult bench_dispatch(const CollectiveBenchSpec& spec, DispatchMode mode) {
  const int per_node = std::min(spec.cluster.gpus_per_node, spec.ep);
  if (is_deepep(mode) && spec.ep % per_node != 0)
    throw InputError(fmt::format("--kernel {} forwards over nodes of {} GPUs: --ep {} must fill whole nodes",
                                 spec.kernel, per_node, spec.ep));
  // Each call routes every token of the group: bounded as a trace's tokens are.
  constexpr long long kMaxGroupTokens = 1 << 24;
  if (static_cast<long long>(spec.tokens) * spec.ep > kMaxGroupTokens)
    throw InputError(fmt::format("--tokens {} over EP {}: a dispatch routes at most {} tokens per call",
                                 spec.tokens, spec.ep, kMaxGroupTokens));
  // The calls route afresh each time: their work grows with every factor (about 0.2 us per routed copy),
  // so all of them together are bounded too, to minutes rather than days.
  constexpr long long kMaxRoutedTokens = 1 << 26;
  if (static_cast<long long>(spec.tokens) * spec.ep * spec.repeat > kMaxRoutedTokens)
    throw InputError(
        fmt::format("--repeat {} calls of --tokens {} over EP {}: {} tokens to route, more than the {} a "
                    "collective routes "
                    "in all; lower --repeat (the mean settles within a few calls)",
                    spec.repeat, spec.tokens, spec.ep,
                    static_cast<long long>(spec.tokens) * spec.ep * spec.repeat, kMaxRoutedTokens));
  const CalibrationProfile& profile = *spec.profile;
  // What a run of this group prices its dispatch with: the effective topology (link bandwidths at the
  // profile's efficiencies), the same timing resolution and the same pricing of each exchange.
  const Topology topology = effective_topology(spec.cluster, spec.ep, profile);
  const Placement placement = contiguous_placement(1, spec.model.routed_experts, spec.ep, spec.redundant);
  const ExchangeShape shape{spec.ep, spec.model.hidden * dispatch_format_bytes(spec.dispatch_format),
                            spec.model.hidden * kBf16Bytes};

  CollectiveBenchResult r;
  const KernelLibrary library(profile, spec.cluster.device, spec.extrapolate);
  const DeepepChoice choice{spec.measured_tables ? EpKernel::kAuto : EpKernel::kNccl, spec.sms,
                            spec.link_model, spec.link_model};
  const DispatchTiming timing =
      DispatchTiming::resolve(library, profile, spec.model, spec.cluster, spec.ep, mode, choice);
  r.timed_by = timing.measured()       ? timing.description()
               : !spec.measured_tables ? "the copies over the topology (--timing topology)"
               : is_deepep(mode)       ? timing.description()
                                       : "NCCL-style copies over the topology";
  // One call is one step's dispatch: DeepEP's auto mode runs a decode-only one as low_latency.
  const bool decode_only =
      mode == DispatchMode::kLowLatency || (mode == DispatchMode::kDeepepAuto && spec.decode_step);
  refuse_unused_sms(spec, timing, decode_only, r.timed_by);
  CollectivePricing pricing(shape, profile, topology, profile.collective_overhead, timing, nullptr);
  pricing.start_step(decode_only);
  LoneCollectiveTime lone(topology, BandwidthFactors(profile, topology));
  const double dispatch_copy = shape.dispatch_bytes_per_copy, combine_copy = shape.combine_bytes_per_copy;

  const std::vector<double> weights = popularity(spec.model.routed_experts, spec.zipf, spec.seed);
  const ExpertGroupLimit limit =
      spec.group_limited ? ExpertGroupLimit::of(spec.model) : ExpertGroupLimit{spec.model.routed_experts};
  Router router(weights, limit, spec.model.top_k, spec.seed);
  std::vector<int> token_device;
  std::vector<ExpertId> experts;
  LayerDispatch dispatch(spec.ep, spec.model.routed_experts, is_deepep(mode) ? per_node : 0);
  for (int call = 0; call < spec.repeat; ++call) {
    router.route(spec.ep, spec.tokens, static_cast<std::uint64_t>(call), token_device, experts);
    dispatch.clear();
    account_dispatch(placement, 0, pricing.traffic(), token_device, experts, spec.model.top_k, dispatch);
    const CollectivePricing::Exchanges both = pricing.exchanges(dispatch.copies);
    r.dispatch_seconds += alone_seconds(both.dispatch, lone);
    r.combine_seconds += alone_seconds(both.combine, lone);
    const LevelBytes moved =
        level_bytes(CopyTraffic{dispatch.copies, spec.ep, dispatch_copy, false}, topology);
    r.scale_up_bytes += moved.scale_up;
    r.scale_out_bytes += moved.scale_out;
    r.forwarded_bytes += static_cast<double>(dispatch.forwarded) * dispatch_copy;
  }
  const double per_call_rank = 1.0 / (static_cast<double>(spec.repeat) * spec.ep);
  r.dispatch_seconds /= spec.repeat;
  r.combine_seconds /= spec.repeat;
  r.scale_up_bytes *= per_call_rank;
  r.scale_out_bytes *= per_call_rank;
  r.forwarded_bytes *= per_call_rank;
  name_links(spec.cluster, topology, r);
  r.combine_bytes_per_dispatch_byte = combine_copy / dispatch_copy;
  const double combine_share = r.combine_bytes_per_dispatch_byte;
  r.dispatch_nvlink_gbps = gbps(r.scale_up_bytes, r.dispatch_seconds);
  r.dispatch_rdma_gbps = gbps(r.scale_out_bytes, r.dispatch_seconds);
  r.combine_nvlink_gbps = gbps(r.scale_up_bytes * combine_share, r.combine_seconds);
  r.combine_rdma_gbps = gbps(r.scale_out_bytes * combine_share, r.combine_seconds);
  const double n = spec.ep;
  const double buffer = (r.scale_up_bytes + r.scale_out_bytes - r.forwarded_bytes) * n / (n - 1);
  r.algbw_gbps = gbps(buffer, r.dispatch_seconds);
  r.busbw_gbps = r.algbw_gbps * (n - 1) / n;
  return r;
}

CollectiveBenchResult bench_nccl(const CollectiveBenchSpec& spec, const NcclKernel& kernel) {
  if (spec.sms > 0)
    throw InputError(
        fmt::format("--sms {} sets the SMs of DeepEP's normal kernels, and --kernel {} (NCCL's) "
                    "runs none",
                    spec.sms, spec.kernel));
  const CalibrationProfile& profile = *spec.profile;
  const Topology topology = effective_topology(spec.cluster, spec.ep, profile);
  const double buffer = static_cast<double>(spec.tokens) * spec.model.hidden * 2.0;  // BF16 per rank
  const double shard = buffer / spec.ep;
  std::optional<NcclTimes> nccl;
  std::string why_not = "the shards over the topology (--timing topology)";
  if (spec.measured_tables) nccl = NcclTimes::make(profile, spec.ep, spec.cluster.gpus_per_node, why_not);
  CollectiveBenchResult r;
  r.nccl_collective = true;
  const std::vector<long long> pairs = shard_exchange_pairs(spec.ep, topology.devices_per_node);
  const Collective exchange = equal_shard_exchange(
      pairs, spec.ep, shard, all_to_all_overhead(profile, topology, profile.collective_overhead));
  // Without a measured all-reduce the engine runs a reduce-scatter then an all-gather.
  const int exchanges = kernel.kind == ShardCollective::kAllReduce ? 2 : 1;
  if (nccl && (kernel.kind != ShardCollective::kAllReduce || nccl->has_all_reduce())) {
    r.timed_by = nccl->description();
    r.dispatch_seconds = nccl->seconds(kernel.kind, shard);
  } else if (nccl) {
    r.timed_by = nccl->description() + " (a reduce-scatter then an all-gather)";
    r.dispatch_seconds = nccl->seconds(ShardCollective::kReduceScatter, shard) +
                         nccl->seconds(ShardCollective::kAllGather, shard);
  } else {
    r.timed_by = why_not;
    LoneCollectiveTime lone(topology, BandwidthFactors(profile, topology));
    r.dispatch_seconds = exchanges * (exchange.overhead + lone.seconds(exchange.traffic));
  }
  const LevelBytes moved = level_bytes(exchange.traffic, topology);
  r.scale_up_bytes = exchanges * moved.scale_up / spec.ep;
  r.scale_out_bytes = exchanges * moved.scale_out / spec.ep;
  name_links(spec.cluster, topology, r);
  r.dispatch_nvlink_gbps = gbps(r.scale_up_bytes, r.dispatch_seconds);
  r.dispatch_rdma_gbps = gbps(r.scale_out_bytes, r.dispatch_seconds);
  const double n = spec.ep;
  r.algbw_gbps = gbps(buffer, r.dispatch_seconds);
  r.busbw_gbps = r.algbw_gbps * kernel.bus_factor_numerator * (n - 1) / n;
  return r;
}

}  // namespace

const std::vector<std::string>& collective_kernel_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const PolicyEntry& dispatch : policies_of(PolicyKind::kDispatch)) all.push_back(dispatch.name);
    for (const NcclKernel& k : kNcclKernels) all.emplace_back(k.name);
    return all;
  }();
  return names;
}

CollectiveBenchResult bench_collective(const CollectiveBenchSpec& spec) {
  check_group(spec);
  for (const PolicyEntry& dispatch : policies_of(PolicyKind::kDispatch))
    if (spec.kernel == dispatch.name) return bench_dispatch(spec, std::get<DispatchMode>(dispatch.factory));
  for (const NcclKernel& k : kNcclKernels)
    if (spec.kernel == k.name) return bench_nccl(spec, k);
  throw InputError(fmt::format("--kernel '{}': expected one of {}", spec.kernel,
                               fmt::join(collective_kernel_names(), ", ")));
}

}  // namespace semsim
