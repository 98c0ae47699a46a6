#include "policies/dispatch.hpp"

#include "policies/dispatch_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "workloads/counter_rng.hpp"

namespace semsim {

LayerDispatch::LayerDispatch(int device_count, int expert_count, int per_node)
    : devices(device_count),
      experts(expert_count),
      devices_per_node(per_node > 0 ? per_node : device_count),
      copies(static_cast<std::size_t>(device_count) * device_count, 0),
      expert_tokens(static_cast<std::size_t>(device_count) * expert_count, 0),
      device_tokens(device_count, 0) {
  if (device_count % devices_per_node != 0)
    throw std::logic_error("LayerDispatch: nodes of " + std::to_string(devices_per_node) +
                           " devices do not divide " + std::to_string(device_count));
}

void LayerDispatch::clear() {
  std::fill(copies.begin(), copies.end(), 0);
  std::fill(expert_tokens.begin(), expert_tokens.end(), 0);
  std::fill(device_tokens.begin(), device_tokens.end(), 0);
  activations = 0;
  local_activations = 0;
  forwarded = 0;
}

bool is_deepep(DispatchMode mode) {
  return mode == DispatchMode::kHierarchical || mode == DispatchMode::kLowLatency ||
         mode == DispatchMode::kDeepepAuto;
}

namespace {

// Where the per-token loops count the tokens each replica serves: counts[device * device_stride +
// expert]. Without replicas an expert is served on one device only, and the loops count per expert
// (a stride of 0) in a table small enough to stay in the L1 cache, added into expert_tokens (one
// cache line per expert on hundreds of devices) once per call.
struct ServedCounts {
  int* counts;
  std::size_t device_stride;
};

// The per-token loop over groups of up to 16 devices (kDedup, kPerExpert, kAllGather).
template <typename Lanes, typename ServingDevice>
long long dispatch_lanes(DispatchMode mode, std::span<const int> token_device, const ExpertId* routed,
                         int top_k, LayerDispatch& out, const ServedCounts& served,
                         ServingDevice serving_device) {
  using Words = LaneWords<Lanes>;
  const int devices = out.devices;
  const Lanes every_device = Words::every_device(devices);
  CopyLanes<Lanes> copies(devices, mode == DispatchMode::kPerExpert ? top_k : 1);
  long long local = 0;
  for (std::size_t token = 0; token < token_device.size(); ++token, routed += top_k) {
    const int src = token_device[token];
    Lanes lanes = 0;
    for (int j = 0; j < top_k; ++j) {
      const int expert = routed[j];
      const int dst = serving_device(expert, src, token);
      ++served.counts[static_cast<std::size_t>(dst) * served.device_stride + expert];
      lanes += Words::one(dst);
    }
    local += Words::lane(lanes, src);
    copies.add(src, token_copies(mode, lanes, src, every_device), out.copies.data());
  }
  copies.flush(out.copies.data());
  return local;
}

// Each helper below is given the devices serving one token's remote experts, one per remote expert
// (`remote`).

// kDedup: one copy per remote device.
void add_dedup_copies(std::span<const int> remote, std::size_t stamp, std::vector<std::size_t>& last_token,
                      long long* copies_from_src) {
  for (const int dst : remote) {
    const bool first = last_token[dst] != stamp;
    last_token[dst] = stamp;
    copies_from_src[dst] += first ? 1 : 0;
  }
}

// kHierarchical: one copy per remote device in the source's node; one RDMA copy per remote node, to
// the device of the source's local index there, which forwards it over NVLink to the others.
void add_forwarded_copies(std::span<const int> remote, int src, std::size_t stamp, LayerDispatch& out) {
  const int devices = out.devices, per_node = out.devices_per_node;
  long long* copies = out.copies.data();
  long long* copies_from_src = copies + static_cast<std::size_t>(src) * devices;
  std::vector<std::size_t>& last_token = out.last_token_scratch;
  std::vector<std::size_t>& last_node = out.last_node_scratch;
  const int src_node = src / per_node;
  const int local_index = src - src_node * per_node;
  for (const int dst : remote) {
    if (last_token[dst] == stamp) continue;
    last_token[dst] = stamp;
    const int node = dst / per_node;
    if (node == src_node) {
      ++copies_from_src[dst];
      continue;
    }
    const int forwarder = node * per_node + local_index;
    if (last_node[node] != stamp) {
      last_node[node] = stamp;
      ++copies_from_src[forwarder];
    }
    if (dst != forwarder) {
      ++copies[static_cast<std::size_t>(forwarder) * devices + dst];
      ++out.forwarded;
    }
  }
}

// The per-token loop, instantiated once per way of finding a token's serving device, so that the
// unreplicated case (a plain lookup) compiles to the tight loop it was before replicas existed.
// Groups of up to 16 devices count in lanes (kHierarchical excepted). Returns the local
// activations.
template <typename ServingDevice>
long long dispatch_tokens(DispatchMode mode, std::span<const int> token_device, const ExpertId* routed,
                          int top_k, LayerDispatch& out, const ServedCounts& served,
                          ServingDevice serving_device) {
  if (counts_in_lanes(mode) && top_k <= kLaneTopK) {
    if (out.devices <= LaneWords<std::uint64_t>::kDevices)
      return dispatch_lanes<std::uint64_t>(mode, token_device, routed, top_k, out, served, serving_device);
    if (out.devices <= LaneWords<Lanes16>::kDevices)
      return dispatch_lanes<Lanes16>(mode, token_device, routed, top_k, out, served, serving_device);
  }
  // Raw pointers held in locals: stores through them cannot then force reloads of `out`'s members.
  const int devices = out.devices;
  long long* copies = out.copies.data();
  int* const counts = served.counts;
  const std::size_t device_stride = served.device_stride;
  // last_token[d] == token + 1 once this token has counted its copy to device d.
  std::vector<std::size_t>& last_token = out.last_token_scratch;
  last_token.assign(devices, 0);
  // kHierarchical: last_node[n] == token + 1 once this token has sent its RDMA copy to node n.
  if (mode == DispatchMode::kHierarchical) out.last_node_scratch.assign(devices / out.devices_per_node, 0);
  constexpr int kMaxTopK = 64;
  int remote[kMaxTopK];
  long long local = 0;
  for (std::size_t token = 0; token < token_device.size(); ++token, routed += top_k) {
    const int src = token_device[token];
    int remote_count = 0;
    for (int j = 0; j < top_k; ++j) {
      const int expert = routed[j];
      const int dst = serving_device(expert, src, token);
      ++counts[static_cast<std::size_t>(dst) * device_stride + expert];
      remote[remote_count] = dst;
      remote_count += dst != src ? 1 : 0;
    }
    local += top_k - remote_count;
    const std::span<const int> remote_devices(remote, static_cast<std::size_t>(remote_count));
    long long* copies_from_src = copies + static_cast<std::size_t>(src) * devices;
    switch (mode) {
      case DispatchMode::kDedup:
        add_dedup_copies(remote_devices, token + 1, last_token, copies_from_src);
        break;
      case DispatchMode::kPerExpert:
        for (const int dst : remote_devices) ++copies_from_src[dst];
        break;
      case DispatchMode::kAllGather:
        for (int dst = 0; dst < devices; ++dst) copies_from_src[dst] += dst != src ? 1 : 0;
        break;
      case DispatchMode::kHierarchical:
        add_forwarded_copies(remote_devices, src, token + 1, out);
        break;
      case DispatchMode::kLowLatency:  // as kPerExpert (account_dispatch maps it)
      case DispatchMode::kDeepepAuto:
        throw std::logic_error("account_dispatch: DeepEP's auto mode is resolved per step by the engine");
    }
  }
  return local;
}

}  // namespace

void account_dispatch(const Placement& placement, int layer, DispatchMode mode,
                      std::span<const int> token_device, std::span<const ExpertId> experts, int top_k,
                      LayerDispatch& out, ReplicaChoice replica_choice) {
  const std::size_t expert_count = static_cast<std::size_t>(out.experts);
  const int* home = placement.home_devices(layer);
  const std::uint64_t dispatch_index = out.dispatches++;
  mode = counted_mode(mode);
  long long local = 0;
  if (!placement.has_replicas()) {
    std::vector<int>& per_expert = out.expert_count_scratch;
    per_expert.assign(expert_count, 0);
    local = dispatch_tokens(mode, token_device, experts.data(), top_k, out, {per_expert.data(), 0},
                            [home](int expert, int, std::size_t) { return home[expert]; });
    for (std::size_t expert = 0; expert < expert_count; ++expert)
      out.expert_tokens[static_cast<std::size_t>(home[expert]) * expert_count + expert] += per_expert[expert];
  } else {
    const std::size_t needed = static_cast<std::size_t>(placement.moe_layers) * expert_count;
    if (out.replica_turns.size() < needed) out.replica_turns.resize(needed, 0);
    std::uint32_t* turns = out.replica_turns.data() + static_cast<std::size_t>(layer) * expert_count;
    // Only tokens whose device hosts no replica choose one (and advance the rotation).
    local = dispatch_tokens(mode, token_device, experts.data(), top_k, out,
                            {out.expert_tokens.data(), expert_count},
                            [&](int expert, int src, std::size_t token) {
                              if (home[expert] == src || placement.replica_count(layer, expert) == 1)
                                return home[expert];
                              if (placement.hosts(layer, expert, src)) return src;
                              const std::uint64_t spread = replica_choice == ReplicaChoice::kRoundRobin
                                                               ? turns[expert]++
                                                               : mix_keys(dispatch_index, token, expert);
                              return placement.serving_device(layer, expert, src, spread);
                            });
  }
  count_device_loads(placement, layer, out);
  out.local_activations += local;
  out.activations += static_cast<long long>(token_device.size()) * top_k;
}

// Device loads from the per-replica counts (one pass over the slots, instead of a second
// read-modify-write per activation on a handful of hot counters).
void count_device_loads(const Placement& placement, int layer, LayerDispatch& out) {
  const std::size_t expert_count = static_cast<std::size_t>(out.experts);
  const int* expert_tokens = out.expert_tokens.data();
  for (int device = 0; device < out.devices; ++device) {
    long long load = 0;
    for (int expert : placement.slots[layer][device])
      load += expert_tokens[static_cast<std::size_t>(device) * expert_count + expert];
    out.device_tokens[device] = load;
  }
}

double low_latency_buffer_bytes(int max_tokens_per_rank, int hidden, int experts, int ranks) {
  const double tokens = max_tokens_per_rank;
  const double scales = hidden / 128;
  const double header = 16;  // an int4 of routing metadata per dispatched token
  const double dispatch_message = header + std::max(2.0 * hidden, hidden + 4 * scales);
  const double combine_message = 4 * scales + 2.0 * hidden;  // BF16, with per-128 min/max pairs
  const double send = std::max(tokens * dispatch_message, experts * tokens * combine_message);
  const double receive = std::max(experts * tokens * dispatch_message, experts * tokens * combine_message);
  const double signalling = std::ceil((8.0 * experts + 4.0 * experts / ranks) / 128) * 128;
  return 2 * (send + receive + signalling);
}

}  // namespace semsim
