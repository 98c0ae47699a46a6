#pragma once
// Scenario schema version 1: what to simulate, fully resolved and validated. See
// sim/scenarios/default.yaml for an annotated example of every section.
#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "calibrate/format/topology_check.hpp"
#include "models/choice_names.hpp"
#include "models/cluster.hpp"
#include "models/input_limits.hpp"
#include "models/moe_model.hpp"
#include "models/operator_costs.hpp"
#include "models/yaml_input.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "sim/ep_kernels.hpp"
#include "sim/network.hpp"
#include "sim/scenario_overrides.hpp"
#include "workloads/routing_drift.hpp"
#include "workloads/speculative_acceptance.hpp"
#include "workloads/workload.hpp"

namespace semsim {

// serving.overlap: two_batch splits each rank's batch into two micro-batches whose communication
// runs under each other's compute (SGLang's two-batch overlap).
enum class Overlap { kNone, kTwoBatch };
inline constexpr ChoiceNames<Overlap, 2> kOverlapNames{
    {{Overlap::kNone, "none"}, {Overlap::kTwoBatch, "two_batch"}}};

// serving.pool: which part of serving the ranks run. A colocated server prefills and decodes; a
// prefill pool's requests end at their first token (their KV cache would leave for a decode pool);
// a decode pool's requests arrive with their prompt (the workload's input tokens) already in their
// KV cache and decode every output token. The two single-pool modes are how disaggregated
// deployments measure each pool's steady-state throughput per node.
enum class ServingPool { kColocated, kPrefill, kDecode };
inline constexpr ChoiceNames<ServingPool, 3> kServingPoolNames{{{ServingPool::kColocated, "colocated"},
                                                                {ServingPool::kPrefill, "prefill"},
                                                                {ServingPool::kDecode, "decode"}}};
inline const char* serving_pool_name(ServingPool pool) {
  return name_of(kServingPoolNames, pool);
}

// serving.batching: what one step of a rank runs. mixed: every running decode, then prompt chunks
// within the token budget (SGLang with --enable-mixed-chunk). prefill_first: SGLang's default
// scheduler, a step of prompt chunks only whenever the rank can form one, else a step decoding every
// running request (sim/dp_serving_loop.cpp).
enum class Batching { kMixed, kPrefillFirst };
inline constexpr ChoiceNames<Batching, 2> kBatchingNames{
    {{Batching::kMixed, "mixed"}, {Batching::kPrefillFirst, "prefill_first"}}};

// The KV-cache tokens a request reserves on its rank from admission to completion: a prefill pool's
// request keeps only its prompt's.
constexpr long long kv_reservation(ServingPool pool, long long input_tokens, long long output_tokens) {
  return pool == ServingPool::kPrefill ? input_tokens : input_tokens + output_tokens;
}

struct ServingLimits {
  int max_batch_tokens = 8192;     // per DP rank per step (chunked-prefill budget); TP: per group
  int max_running_requests = 256;  // per DP rank; TP: per group
  double memory_fraction = 0.90;   // of device memory for weights + KV cache (engine sglang: README)
  double time_limit = 0;           // stop after this much simulated time (0: when every request is done)
  Overlap overlap = Overlap::kNone;
  ServingPool pool = ServingPool::kColocated;
  Batching batching = Batching::kMixed;
  // serving.ep_kernel: the kernels timing dispatch and combine (sim/ep_kernels.hpp).
  EpKernel ep_kernel = EpKernel::kAuto;
  SpeculativeDecoding speculative;  // serving.speculative (sim/scenario_speculative.hpp)
  // serving.prefix_cache: each rank keeps its prompts' KV for later requests with the same prefix
  // (sim/prefix_cache.hpp); a decode pool prefills nothing and keeps none.
  bool prefix_cache = false;
  // The tokens one decoding request runs per step: its last token, and the drafts verified with it.
  int decode_step_tokens() const { return 1 + speculative.tokens; }
};

// engine.name: which serving engine's host work a step pays besides its kernels (sglang: SGLang
// 0.5.x's scheduler, CUDA graphs and overlap scheduling, priced by the profile's `engine:` costs);
// none prices the kernels alone.
enum class EngineName { kNone, kSglang };
inline constexpr ChoiceNames<EngineName, 2> kEngineNames{
    {{EngineName::kNone, "none"}, {EngineName::kSglang, "sglang"}}};

// Where a setting the engine depends on came from, for `semsim check`.
enum class SettingOrigin { kScenario, kEngineDefault, kSemsimDefault };

struct EngineSettings {
  EngineName name = EngineName::kNone;
  int cuda_graph_max_bs = 0;     // decode batches per rank up to the largest captured size replay a graph
  bool overlap_schedule = true;  // the scheduler prepares step n+1 while step n computes
  SettingOrigin cuda_graph_max_bs_from = SettingOrigin::kScenario;
  SettingOrigin overlap_schedule_from = SettingOrigin::kScenario;
  SettingOrigin max_batch_tokens_from = SettingOrigin::kScenario;
  SettingOrigin max_running_requests_from = SettingOrigin::kScenario;
  SettingOrigin memory_fraction_from = SettingOrigin::kScenario;  // serving.memory_fraction
  bool on() const { return name != EngineName::kNone; }
};

struct Disaggregation;
struct Deployment;

// Scenario::file of the embedded default scenario (`semsim run default`).
inline constexpr const char* kDefaultScenarioFile = "<default>";

struct Scenario {
  std::string file;  // where it was read from (kDefaultScenarioFile for the embedded one)
  std::string name;
  MoeModel model;
  Cluster cluster;
  Precision precision;
  double dispatch_bytes_per_element = kFp8BlockScaledBytes;
  // parallelism: the pool's devices (with moe.tp 1, the EP group); attention in dp groups of tp ranks
  // (Attention-DP: dp = ep, tp = 1; Attention-TP: one group, tp = ep); each routed expert's FFN split
  // moe_tp ways (1, or every device: then every device holds a slice of every expert).
  int ep = 8;
  AttentionMode attention = AttentionMode::kDataParallel;
  int dp = 8;
  int tp = 1;
  int moe_tp = 1;
  bool experts_tensor_parallel() const { return moe_tp > 1; }
  // The devices the routed experts spread over (placement, dispatch): 1 when each is split over all.
  int expert_ranks() const { return ep / moe_tp; }
  ServingLimits serving;
  EngineSettings engine;
  WorkloadSpec workload;
  PolicyChoice placement;      // the policy, or for a placement file the one that made it
  std::string placement_file;  // `placement: {file: PATH}`, resolved; empty when a policy runs inline
  std::string placement_file_as_written;  // PATH as the scenario gives it: outputs name it so, and
                                          // stay the same wherever the scenario is run from
  std::string profile;  // `profile: DIR`, resolved: routing profile for profile-driven policies
  std::shared_ptr<const PlacementPlan> placement_from_file;  // `placement: {file: PATH}`, read and checked
  PolicyChoice request_scheduling;
  PolicyChoice token_scheduling;
  DispatchMode dispatch = DispatchMode::kDedup;
  std::string dispatch_name;
  // DeepEP low_latency and auto: the tokens per rank its fixed low-latency buffers hold (0: none).
  int low_latency_buffer_tokens = 0;
  ReplicaChoice replica_choice = ReplicaChoice::kRoundRobin;
  std::string replica_choice_name;
  NetworkFidelity fidelity = NetworkFidelity::kBottleneck;
  // Shared, not copied: a measured profile is megabytes, and a sweep holds a scenario per point.
  std::shared_ptr<const CalibrationProfile> calibration = std::make_shared<const CalibrationProfile>();
  // The profile's file as errors name it: the path the scenario gives, or the embedded one's source
  // ("" for the generic datasheet assumptions); the note says which ("embedded", "").
  std::string calibration_file, calibration_note;
  bool calibration_extrapolation = false;  // answer queries far outside a measured table's grid
  // --work-limit: the most all-to-all device-pair visits a run is started with (0: no limit).
  double work_limit = limits::kAllToAllPairVisits;
  CalibrationLinks calibration_links;  // which link levels the profile measured (summary.json)
  bool write_requests_csv = true;
  bool write_steps_csv = true;
  bool write_layers_csv = false;  // per MoE layer: phase times and per-device loads (for plots)
  std::shared_ptr<const Disaggregation> disaggregation;  // none: one colocated or single-pool server
  std::shared_ptr<const Deployment> deployment;          // none: one instance

  // Where the values came from, for the errors build_run() can still raise at their keys.
  std::optional<YamlInput> document;
  std::vector<ScenarioOverride> overrides;
  std::string base_dir;  // what its relative paths resolve against
};

// disaggregation.kv_transfer: a request's KV cache moves from its prefill rank to its decode rank
// layer by layer as its last prompt chunk computes it (from that step's start; it lands no earlier
// than the step's end plus one layer's share), or whole once the step ends.
enum class KvTransferMode { kLayerwise, kWhole };
inline constexpr ChoiceNames<KvTransferMode, 2> kKvTransferModeNames{
    {{KvTransferMode::kLayerwise, "layerwise"}, {KvTransferMode::kWhole, "whole"}}};

// disaggregation.decode_kv: the decode rank reserves a request's KV when the transfer lands, or before
// the prefill starts (SGLang's DecodePreallocQueue: the prefill of a request waits in its bootstrap
// queue until the decode side has allocated its KV, python/sglang/srt/disaggregation/decode.py).
enum class DecodeKv { kOnLanding, kPreallocated };
inline constexpr ChoiceNames<DecodeKv, 2> kDecodeKvNames{
    {{DecodeKv::kOnLanding, "on_landing"}, {DecodeKv::kPreallocated, "preallocated"}}};

// `disaggregation:` a prefill pool on the cluster's first nodes and a decode pool on the nodes after
// them. Each pool is the scenario with the keys its `set:` gives (parallelism, serving, policies,
// profile), its node count as the cluster's and serving.pool its role; the workload, model,
// precision, network and calibration are shared.
struct Disaggregation {
  std::shared_ptr<const Scenario> prefill, decode;
  KvTransferMode kv_transfer = KvTransferMode::kLayerwise;
  DecodeKv decode_kv = DecodeKv::kOnLanding;
  int prefill_nodes() const { return prefill->cluster.nodes; }
};

// `deployment:` N instances of the serving configuration, each its own EP group on whole nodes of
// its own (instance i on the i-th group of nodes), fed by one request stream through a router.
// Each instance is the scenario with its nodes as the cluster's and the keys its `set:` gives (its
// profile and policies: the placement its experts follow); the rest is shared.
struct Deployment {
  int instances = 1;
  PolicyChoice router;
  std::vector<std::shared_ptr<const Scenario>> instance;
  int instance_nodes() const { return instance.front()->cluster.nodes; }
};

// The scenario as it ran, as YAML: its document with every --set and the seed applied, and the
// relative paths that name existing files made absolute, so that `semsim run` of it runs it again
// from anywhere (on this machine).
std::string resolved_scenario_yaml(const Scenario& scenario);

// The files and folders a scenario reads: its file (none for the embedded default) and those its
// values name (model, cluster, profile, calibration, placement, routing and request files).
std::vector<std::string> scenario_input_files(const Scenario& scenario);

// `text` is the YAML; `file` names it in errors; relative paths resolve against `base_dir`.
// `overrides` are "key.path=value" strings applied before validation; `seed` (if >= 0) replaces
// workload.seed.
Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<std::string>& overrides = {}, long long seed = -1);
Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<ScenarioOverride>& overrides, long long seed = -1);

// A scenario's text, the name errors give it, and the folder its relative paths resolve against.
struct ScenarioSource {
  std::string text;
  std::string file;
  std::string base_dir;
};
ScenarioSource read_scenario_source(const std::string& path_or_default);  // a path, or "default"
// `nodes` (--nodes) is applied after every override.
Scenario load_scenario_file(const std::string& path_or_default,
                            const std::vector<std::string>& overrides = {}, long long seed = -1,
                            const std::optional<std::string>& nodes = std::nullopt);

// The scenario that `semsim run default` simulates.
std::string default_scenario_text();

}  // namespace semsim
