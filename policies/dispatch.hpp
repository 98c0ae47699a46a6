#pragma once
// What one MoE layer's dispatch moves and where the experts' work lands, given each token's device
// and its routed experts. This is the single place that turns routing + placement into traffic,
// expert loads and local activations; LAR and imbalance are defined over its counters.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

// NCCL-style all-to-allv, every copy sent straight to its destination: kDedup, a token once to each
// remote device hosting any of its experts; kPerExpert, once per remote expert; kAllGather, every
// token to every other device, whatever its routing.
// DeepEP: kHierarchical (its normal, high-throughput kernels), inside the token's node one copy per
// GPU as kDedup; across nodes one RDMA copy per destination node, to the GPU with the source's local
// index there, which forwards it over NVLink to the node's other GPUs holding the token's experts
// (the combine runs in reverse, reducing at the forwarding GPU). kLowLatency, its low-latency
// kernels, moves kPerExpert's copies, directly over NVLink or RDMA. kDeepepAuto is kHierarchical
// for steps with prefill and kLowLatency for decode-only steps (SGLang's auto mode): the engine
// resolves it per step.
enum class DispatchMode { kDedup, kPerExpert, kAllGather, kHierarchical, kLowLatency, kDeepepAuto };
bool is_deepep(DispatchMode mode);

// The bytes of DeepEP's low-latency buffers on each rank, fixed at start-up whatever a step sends:
// two (odd/even) symmetric sets of send, receive and signalling buffers, each receive buffer room
// for `max_tokens_per_rank` tokens from every expert of the group (`experts`, physical), a token
// message `hidden` BF16 values (or FP8 ones with a scale per 128) plus its header (DeepEP's
// LowLatencyLayout).
double low_latency_buffer_bytes(int max_tokens_per_rank, int hidden, int experts, int ranks);

struct LayerDispatch {
  int devices = 0;
  int experts = 0;
  int devices_per_node = 0;              // nodes of the EP group, for kHierarchical
  std::vector<long long> copies;         // [src * devices + dst] token copies moved over each pair
  long long forwarded = 0;               // kHierarchical: copies among them forwarded inside a node
  std::vector<int> expert_tokens;        // [device * experts + expert] tokens each device's replica serves
  std::vector<long long> device_tokens;  // [device] activations served (expert-side load)
  long long activations = 0;             // routed (token, expert) activations
  long long local_activations = 0;       // ... served on the token's own device
  std::vector<std::size_t> last_token_scratch;  // account_dispatch's working memory
  std::vector<std::size_t> last_node_scratch;
  std::vector<int> expert_count_scratch;
  // Replica choice state, kept by clear() so that the rotation continues from step to step.
  std::vector<std::uint32_t> replica_turns;  // [layer * experts + expert] tokens that chose a replica
  std::uint64_t dispatches = 0;              // account_dispatch calls so far (the uniform choice's key)

  // `devices_per_node` (default: all in one node) must divide `devices`.
  LayerDispatch(int devices, int experts, int devices_per_node = 0);
  void clear();  // the counters above; not the replica choice state
};

// Adds the tokens of one MoE layer: token i sits on `token_device[i]` and is routed to
// experts[i*k .. i*k+k). `device_tokens` is recomputed from `expert_tokens` (all calls so far).
// A replicated expert is served on the token's device when it hosts a replica, else in its node
// (Placement::serving_device), choosing among several candidates by `replica_choice`.
void account_dispatch(const Placement& placement, int layer, DispatchMode mode,
                      std::span<const int> token_device, std::span<const ExpertId> experts, int top_k,
                      LayerDispatch& out, ReplicaChoice replica_choice = ReplicaChoice::kRoundRobin);

}  // namespace semsim
