#include "calibrate/format/profile_pack.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace semsim {

namespace {

// Every field of every struct of a profile, in declaration order: the one list that packing and
// unpacking both walk (the tests compare a packed and unpacked profile with the profile file it
// came from, field by field, so a field left out here fails them).
template <typename T, typename Struct>
concept Packs = std::same_as<std::remove_const_t<T>, Struct>;

template <typename Archive, Packs<FitResiduals> T>
void walk(Archive& a, T& v) {
  a(v.median, v.p95, v.samples);
}
template <typename Archive, Packs<TableAxis> T>
void walk(Archive& a, T& v) {
  a(v.name, v.values);
}
template <typename Archive, Packs<KernelTable> T>
void walk(Archive& a, T& v) {
  a(v.kernel, v.shape, v.dtype, v.implementation, v.axes, v.tile, v.seconds, v.residuals, v.line);
}
template <typename Archive, Packs<CollectiveFit> T>
void walk(Archive& a, T& v) {
  a(v.collective, v.level, v.ranks, v.alpha, v.bus_bandwidth, v.efficiency, v.factor_bytes, v.factor,
    v.residuals);
}
template <typename Archive, Packs<SourceTable> T>
void walk(Archive& a, T& v) {
  a(v.file, v.rows, v.used, v.repeats, v.skipped);
}
template <typename Archive, Packs<ProfileTopology> T>
void walk(Archive& a, T& v) {
  a(v.nodes, v.gpus_per_node, v.nics_per_node, v.hosts);
}
template <typename Archive, Packs<OutlierRow> T>
void walk(Archive& a, T& v) {
  a(v.kernel, v.shape, v.dtype, v.at, v.seconds, v.neighbours);
}
template <typename Archive, Packs<ProfileProvenance> T>
void walk(Archive& a, T& v) {
  a(v.date, v.gpu, v.gpus, v.driver, v.cuda, v.cublas, v.nccl, v.database, v.frameworks, v.tables, v.topology,
    v.outliers);
}
template <typename Archive, Packs<FamilyResiduals> T>
void walk(Archive& a, T& v) {
  a(v.family, v.within_shape, v.across_shapes);
}
template <typename Archive, Packs<EngineCosts> T>
void walk(Archive& a, T& v) {
  a(v.step_seconds, v.request_step_seconds, v.eager_layer_seconds, v.graph_step_seconds, v.request_seconds);
}
template <typename Archive, Packs<CalibrationProfile> T>
void walk(Archive& a, T& v) {
  a(v.name, v.source, v.device, v.provenance, v.gemm_efficiency, v.attention_efficiency, v.memory_efficiency,
    v.scaleup_efficiency, v.scaleout_efficiency, v.kernel_overhead, v.collective_overhead, v.engine,
    v.kernels, v.collectives, v.residuals, v.cross_shape_weights, v.notes);
}

// The packed form: a format tag, then each field in the order above, numbers as their bytes in
// memory (the packer and the simulator are built together, for one machine), strings and lists as
// a 64-bit count then their items, an optional as a 0/1 byte then its value.
constexpr std::string_view kTag = "semsim-profile-pack/1";

class Packer {
 public:
  std::string bytes;

  template <typename... Ts>
  void operator()(const Ts&... values) {
    (put(values), ...);
  }

 private:
  template <typename T>
  requires std::is_arithmetic_v<T>
  void put(T value) { bytes.append(reinterpret_cast<const char*>(&value), sizeof value); }
  void put(const std::string& text) {
    put(std::uint64_t{text.size()});
    bytes += text;
  }
  template <typename T>
  void put(const std::optional<T>& value) {
    put(static_cast<std::uint8_t>(value.has_value()));
    if (value) put(*value);
  }
  template <typename T>
  void put(const std::vector<T>& items) {
    put(std::uint64_t{items.size()});
    if constexpr (std::is_arithmetic_v<T>)
      bytes.append(reinterpret_cast<const char*>(items.data()), items.size() * sizeof(T));
    else
      for (const T& item : items) put(item);
  }
  template <typename K, typename V>
  void put(const std::map<K, V>& items) {
    put(std::uint64_t{items.size()});
    for (const auto& [key, value] : items) {
      put(key);
      put(value);
    }
  }
  template <typename T>
  requires std::is_class_v<T>
  void put(const T& value) { walk(*this, value); }
};

class Unpacker {
 public:
  explicit Unpacker(std::string_view bytes) : at_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  template <typename... Ts>
  void operator()(Ts&... values) {
    (get(values), ...);
  }
  void expect_tag() {
    if (take(kTag.size()) != kTag) fail("not a packed profile of this format");
  }
  void expect_end() const {
    if (at_ != end_) fail("bytes left after the profile");
  }

 private:
  [[noreturn]] static void fail(const std::string& why) {
    throw std::logic_error("a packed profile that pack_profile did not write: " + why);
  }
  std::string_view take(std::size_t size) {
    if (size > static_cast<std::size_t>(end_ - at_)) fail("it ends early");
    const std::string_view out(at_, size);
    at_ += size;
    return out;
  }
  std::size_t count(std::size_t item_bytes) {
    std::uint64_t n = 0;
    get(n);
    // Every item takes at least a byte: a count beyond what is left is a corrupt pack, not an allocation.
    if (n > static_cast<std::uint64_t>(end_ - at_) / item_bytes) fail("a count beyond its bytes");
    return static_cast<std::size_t>(n);
  }
  template <typename T>
  requires std::is_arithmetic_v<T>
  void get(T& value) { std::memcpy(&value, take(sizeof value).data(), sizeof value); }
  void get(std::string& text) { text = take(count(1)); }
  template <typename T>
  void get(std::optional<T>& value) {
    std::uint8_t present = 0;
    get(present);
    if (present > 1) fail("an optional's flag is neither 0 nor 1");
    if (!present) {
      value.reset();
      return;
    }
    get(value.emplace());
  }
  template <typename T>
  void get(std::vector<T>& items) {
    if constexpr (std::is_arithmetic_v<T>) {
      items.resize(count(sizeof(T)));
      std::memcpy(items.data(), take(items.size() * sizeof(T)).data(), items.size() * sizeof(T));
    } else {
      items.resize(count(1));
      for (T& item : items) get(item);
    }
  }
  template <typename K, typename V>
  void get(std::map<K, V>& items) {
    items.clear();
    for (std::size_t n = count(1); n > 0; --n) {
      std::pair<K, V> item;
      get(item.first);
      get(item.second);
      if (!items.insert(std::move(item)).second) fail("a map key twice");
    }
  }
  template <typename T>
  requires std::is_class_v<T>
  void get(T& value) { walk(*this, value); }

  const char* at_;
  const char* end_;
};

}  // namespace

std::string pack_profile(const CalibrationProfile& profile) {
  Packer packer;
  packer.bytes = kTag;
  packer(profile);
  return std::move(packer.bytes);
}

CalibrationProfile unpack_profile(std::string_view packed) {
  Unpacker unpacker(packed);
  unpacker.expect_tag();
  CalibrationProfile profile;
  unpacker(profile);
  unpacker.expect_end();
  return profile;
}

}  // namespace semsim
