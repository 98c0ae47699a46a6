#pragma once
// The largest sizes semsim accepts (README, "Limits"). Counts read from any input are checked
// against these before anything is allocated for them, so a hostile or mistyped count is an error
// naming it rather than an exhausted machine; what passes is then checked against the memory the
// machine has (memory_budget.hpp).
#include <cstddef>

namespace semsim::limits {

inline constexpr long long kRequests = 10'000'000;    // workload.requests
inline constexpr int kLayers = 1024;                  // a model's layers (so MoE layers too)
inline constexpr int kExperts = 32767;                // routed experts per layer (16-bit expert ids)
inline constexpr long long kVocabulary = 1 << 24;     // token ids of a model, trace or profile
inline constexpr long long kRequestTokens = 1 << 24;  // input or output tokens of one request
inline constexpr std::size_t kSweepPoints = 100'000;  // points of one sweep file
inline constexpr std::size_t kLineBytes = std::size_t{256} << 20;     // one line of a text input
inline constexpr std::size_t kTextFileBytes = std::size_t{1} << 30;   // a whole text input (decompressed)
inline constexpr std::size_t kYamlFileBytes = std::size_t{64} << 20;  // a YAML file
inline constexpr std::size_t kYamlNodes = 1'000'000;  // nodes of a YAML document, aliases counted per use
inline constexpr std::size_t kYamlDepth = 256;        // nesting of a YAML document, aliases expanded
inline constexpr int kClusterNodes = 4096;            // nodes of a cluster
// Devices of one scale-up domain (a node): room above CloudMatrix384's 384 NPUs, the largest preset.
inline constexpr int kDevicesPerNode = 1024;

// Sane ranges of physical quantities: a value outside one is a typo (a lost exponent) or hostile,
// and would make simulated times overflow, vanish or stop advancing.
struct Range {
  double min, max;
  bool contains(double value) const { return value >= min && value <= max; }  // false for NaN
};
inline constexpr Range kFlopsPerSecond{1e9, 1e18};
inline constexpr Range kBytesPerSecond{1e6, 1e15};  // memory, link and NIC bandwidths
inline constexpr Range kMemoryBytes{1e6, 1e15};
inline constexpr Range kRequestRate{1e-3, 1e9};      // requests per second
inline constexpr Range kArrivalCv{1e-2, 1e2};        // coefficient of variation of gamma inter-arrival times
inline constexpr Range kMeasuredValue{1e-12, 1e18};  // calibration tables: sizes and seconds
inline constexpr Range kTimeScale{1e-6, 1e6};        // a request log's time_scale
inline constexpr double kSimulatedSeconds = 1e9;     // arrival times and time limits
// The device-pair visits of the all-to-alls (MoE layers x 2 x EP size squared per step) a run starts
// with unless --work-limit says otherwise: about a minute at ~6 ns each (README, "Limits").
inline constexpr double kAllToAllPairVisits = 1e10;

}  // namespace semsim::limits
