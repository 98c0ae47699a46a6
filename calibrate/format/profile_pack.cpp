#include "calibrate/format/profile_pack.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>

// The JSON library of Debian 12 (3.11.2) has no std::optional: null is nothing.
namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value)
      j = *value;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null())
      value.reset();
    else
      value = j.get<T>();
  }
};
}  // namespace nlohmann

namespace semsim {

// Every field of every struct of a profile, in declaration order (the tests compare a packed and
// unpacked profile with the profile file it came from, field by field).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FitResiduals, median, p95, samples)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TableAxis, name, values)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(KernelTable, kernel, shape, dtype, implementation, axes, tile, seconds,
                                   residuals)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CollectiveFit, collective, level, ranks, alpha, bus_bandwidth, efficiency,
                                   factor_bytes, factor, residuals)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SourceTable, file, rows, used, repeats, skipped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfileTopology, nodes, gpus_per_node, nics_per_node, hosts)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OutlierRow, kernel, shape, dtype, at, seconds, neighbours)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfileProvenance, date, gpu, gpus, driver, cuda, cublas, nccl, database,
                                   frameworks, tables, topology, outliers)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FamilyResiduals, family, within_shape, across_shapes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EngineCosts, step_seconds, request_step_seconds, eager_layer_seconds,
                                   graph_step_seconds, request_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CalibrationProfile, name, source, device, provenance, gemm_efficiency,
                                   attention_efficiency, memory_efficiency, scaleup_efficiency,
                                   scaleout_efficiency, kernel_overhead, collective_overhead, engine, kernels,
                                   collectives, residuals, cross_shape_weights, notes)

std::string pack_profile(const CalibrationProfile& profile) {
  return nlohmann::json(profile).dump();
}

CalibrationProfile unpack_profile(std::string_view packed) {
  try {
    return nlohmann::json::parse(packed).get<CalibrationProfile>();
  } catch (const nlohmann::json::exception& e) {
    throw std::logic_error(std::string("a packed profile that pack_profile did not write: ") + e.what());
  }
}

}  // namespace semsim
