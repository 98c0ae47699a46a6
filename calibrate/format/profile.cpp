#include "calibrate/format/profile.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "calibrate/format/kernels.hpp"

namespace semsim {
namespace {

// Version 2 added kernel-scope tables, family residuals and database provenance; version 1 files
// (a subset) read unchanged.
constexpr int kFormatVersion = 2;

// The numbers of a sequence ([1, 2, ~]) or of `text`, space-separated ("1 2 ~"): the compact form
// profiles are written in, one YAML scalar per row, which parses many times faster than a node per
// number. Null (~) is nothing; everything else must be a positive number. `row` names the line of a
// multi-line block in errors.
std::vector<std::optional<double>> read_numbers(const YamlInput& in, std::string_view text, int row = 0) {
  std::vector<std::optional<double>> values;
  if (in.is_sequence()) {
    for (const YamlInput& item : in.items())
      values.push_back(item.node().IsNull()
                           ? std::nullopt
                           : std::optional<double>(item.as_double_in(limits::kMeasuredValue)));
    return values;
  }
  const std::string where = row > 0 ? fmt::format("row {}, ", row) : "";
  for (std::size_t at = 0; at < text.size();) {
    if (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r') {
      ++at;
      continue;
    }
    const std::size_t end = std::min(text.find_first_of(" \t\r\n", at), text.size());
    const std::string word(text.substr(at, end - at));
    if (word == "~" || word == "null") {
      values.emplace_back();
    } else {
      const auto value = parse_number(word);
      if (!value || !limits::kMeasuredValue.contains(*value))
        in.fail(fmt::format("{}value {}: expected a number in [{:g}, {:g}] or ~, got '{}'", where,
                            values.size() + 1, limits::kMeasuredValue.min, limits::kMeasuredValue.max, word));
      values.emplace_back(*value);
    }
    at = end;
  }
  return values;
}

std::vector<double> read_increasing(const YamlInput& in, std::size_t min_size) {
  std::vector<double> values;
  for (const std::optional<double>& value : read_numbers(in, in.is_scalar() ? in.as_string() : "")) {
    if (!value) in.fail("a grid has no empty values");
    if (!values.empty() && !(*value > values.back()))
      in.fail(fmt::format("values must increase strictly, got {} after {}", *value, values.back()));
    values.push_back(*value);
  }
  if (values.size() < min_size)
    in.fail(fmt::format("needs at least {} values, got {}", min_size, values.size()));
  return values;
}

FitResiduals read_residuals(const YamlInput& in) {
  in.expect_map({"median", "p95", "samples"});
  FitResiduals r;
  r.median = in.required("median").as_double_in(0, 1e6);
  r.p95 = in.required("p95").as_double_in(0, 1e6);
  r.samples = static_cast<int>(in.required("samples").as_int_in(0, 1 << 30));
  return r;
}

// One row of a table: measured seconds (positive) or null, measured entries contiguous and at least
// two of them, so that every row interpolates over one range.
void read_row(const YamlInput& in, std::string_view text, int row, std::size_t columns,
              std::vector<std::optional<double>>& out) {
  const std::vector<std::optional<double>> values = read_numbers(in, text, row);
  const std::string where = row > 0 ? fmt::format("row {}: ", row) : "";
  if (values.size() != columns)
    in.fail(fmt::format("{}expected {} values (one per grid point of the last axis), got {}", where, columns,
                        values.size()));
  int measured = 0, runs = 0;
  bool previous = false;
  for (const std::optional<double>& value : values) {
    out.push_back(value);
    measured += value ? 1 : 0;
    runs += value && !previous ? 1 : 0;
    previous = value.has_value();
  }
  if (measured < 2 || runs != 1)
    in.fail(where + "needs at least two measured values, contiguous (null only before and after them)");
}

KernelTable read_kernel_table(const YamlInput& in) {
  in.expect_map({"kernel", "shape", "dtype", "implementation", "axes", "tile", "seconds", "residuals"});
  KernelTable t;
  if (const YAML::Mark mark = in.node().Mark(); !mark.is_null()) t.line = mark.line + 1;
  t.kernel = in.required("kernel").as_choice(kernel_names());
  const KernelSpec& spec = *find_kernel_spec(t.kernel);
  t.shape = in.get_string("shape", "");
  t.dtype = in.required("dtype").as_choice(kernel_dtype_names());
  t.implementation = in.get_string("implementation", "");
  const YamlInput axes = in.required("axes");
  const std::vector<YamlInput> axis_items = axes.items();
  if (axis_items.size() != spec.axes.size())
    axes.fail(fmt::format("{} has {} axes, got {}", t.kernel, spec.axes.size(), axis_items.size()));
  for (std::size_t i = 0; i < axis_items.size(); ++i) {
    const YamlInput& axis = axis_items[i];
    axis.expect_map({"name", "values"});
    TableAxis a;
    a.name = axis.required("name").as_string();
    if (a.name != spec.axes[i])
      axis.required("name").fail(fmt::format("axis {} of {} is '{}'", i + 1, t.kernel, spec.axes[i]));
    a.values = read_increasing(axis.required("values"), 2);
    t.axes.push_back(std::move(a));
  }
  t.tile = static_cast<double>(in.get_int_in("tile", 1, 1, 1 << 20));
  const YamlInput seconds = in.required("seconds");
  if (t.axes.size() == 1) {
    read_row(seconds, seconds.is_scalar() ? seconds.as_string() : "", 0, t.axes[0].values.size(), t.seconds);
  } else {
    // A sequence of rows, or a block of lines, one row each.
    std::vector<std::pair<YamlInput, std::string>> rows;
    if (seconds.is_scalar()) {
      const std::string block = seconds.as_string();
      for (std::size_t at = 0; at < block.size();) {
        const std::size_t end = std::min(block.find('\n', at), block.size());
        if (end > at) rows.emplace_back(seconds, block.substr(at, end - at));
        at = end + 1;
      }
    } else {
      for (const YamlInput& row : seconds.items()) rows.emplace_back(row, "");
    }
    if (rows.size() != t.axes[0].values.size())
      seconds.fail(fmt::format("expected {} rows (one per {} value), got {}", t.axes[0].values.size(),
                               t.axes[0].name, rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r)
      read_row(rows[r].first, rows[r].second, seconds.is_scalar() ? static_cast<int>(r) + 1 : 0,
               t.axes[1].values.size(), t.seconds);
  }
  if (const auto residuals = in.optional("residuals")) t.residuals = read_residuals(*residuals);
  return t;
}

CollectiveFit read_collective_fit(const YamlInput& in) {
  in.expect_map({"collective", "level", "ranks", "alpha", "bus_bandwidth", "efficiency", "bandwidth_factor",
                 "residuals"});
  CollectiveFit f;
  f.collective = in.required("collective").as_choice(collective_names());
  f.level = in.required("level").as_choice(link_level_names());
  f.ranks = static_cast<int>(in.required("ranks").as_int_in(2, 1 << 20));
  f.alpha = in.required("alpha").as_double_in(0, 1.0);
  f.bus_bandwidth = in.required("bus_bandwidth").as_double_in(limits::kBytesPerSecond);
  f.efficiency = in.required("efficiency").as_double_in(1e-3, 2.0);
  if (const auto curve = in.optional("bandwidth_factor")) {
    curve->expect_map({"bytes", "factor"});
    f.factor_bytes = read_increasing(curve->required("bytes"), 2);
    const YamlInput factor = curve->required("factor");
    for (const YamlInput& item : factor.items()) f.factor.push_back(item.as_double_in(1e-3, 1e3));
    if (f.factor.size() != f.factor_bytes.size())
      factor.fail(fmt::format("expected {} factors (one per size in bytes), got {}", f.factor_bytes.size(),
                              f.factor.size()));
  }
  if (const auto residuals = in.optional("residuals")) f.residuals = read_residuals(*residuals);
  return f;
}

SourceTable read_source_table(const YamlInput& in) {
  in.expect_map({"file", "rows", "used", "repeats", "skipped"});
  SourceTable t;
  t.file = in.required("file").as_string();
  t.rows = static_cast<int>(in.required("rows").as_int_in(0, 1 << 30));
  t.used = static_cast<int>(in.required("used").as_int_in(0, t.rows));
  t.repeats = static_cast<int>(in.get_int_in("repeats", 0, 0, t.rows));
  if (const auto skipped = in.optional("skipped"))
    for (const std::string& reason : skipped->keys())
      t.skipped[reason] = static_cast<int>(skipped->required(reason).as_int_in(1, t.rows));
  return t;
}

ProfileTopology read_topology(const YamlInput& in) {
  in.expect_map({"nodes", "gpus_per_node", "nics_per_node", "hosts"});
  ProfileTopology t;
  t.nodes = static_cast<int>(in.required("nodes").as_int_in(1, 1 << 20));
  t.gpus_per_node = static_cast<int>(in.required("gpus_per_node").as_int_in(1, 1 << 20));
  t.nics_per_node = static_cast<int>(in.get_int_in("nics_per_node", 0, 0, 1 << 20));
  if (const auto hosts = in.optional("hosts"))
    for (const YamlInput& host : hosts->items()) t.hosts.push_back(host.as_string());
  return t;
}

OutlierRow read_outlier(const YamlInput& in) {
  in.expect_map({"kernel", "shape", "dtype", "at", "seconds", "neighbours"});
  OutlierRow o;
  o.kernel = in.required("kernel").as_string();
  o.shape = in.required("shape").as_string();
  o.dtype = in.required("dtype").as_string();
  for (const YamlInput& value : in.required("at").items())
    o.at.push_back(value.as_double_in(limits::kMeasuredValue));
  o.seconds = in.required("seconds").as_double_in(limits::kMeasuredValue);
  if (const auto neighbours = in.optional("neighbours"))
    for (const YamlInput& value : neighbours->items())
      o.neighbours.push_back(value.as_double_in(limits::kMeasuredValue));
  return o;
}

ProfileProvenance read_provenance(const YamlInput& in) {
  in.expect_map({"date", "gpu", "gpus", "driver", "cuda", "cublas", "nccl", "database", "frameworks",
                 "tables", "topology", "outliers"});
  ProfileProvenance p;
  p.date = in.get_string("date", "");
  p.gpu = in.get_string("gpu", "");
  p.gpus = static_cast<int>(in.get_int_in("gpus", 0, 0, 1 << 20));
  p.driver = in.get_string("driver", "");
  p.cuda = in.get_string("cuda", "");
  p.cublas = in.get_string("cublas", "");
  p.nccl = in.get_string("nccl", "");
  p.database = in.get_string("database", "");
  p.frameworks = in.get_string("frameworks", "");
  if (const auto tables = in.optional("tables"))
    for (const YamlInput& item : tables->items()) p.tables.push_back(read_source_table(item));
  if (const auto topology = in.optional("topology")) p.topology = read_topology(*topology);
  if (const auto outliers = in.optional("outliers"))
    for (const YamlInput& item : outliers->items()) p.outliers.push_back(read_outlier(item));
  return p;
}

FamilyResiduals read_family_residuals(const YamlInput& in) {
  in.expect_map({"family", "within_shape", "across_shapes"});
  FamilyResiduals r;
  r.family = in.required("family").as_string();
  if (const auto within = in.optional("within_shape")) r.within_shape = read_residuals(*within);
  if (const auto across = in.optional("across_shapes")) r.across_shapes = read_residuals(*across);
  return r;
}

// The keys of a profile's `engine:` section and the fields they set.
constexpr std::pair<const char*, double EngineCosts::*> kEngineCostKeys[] = {
    {"step_seconds", &EngineCosts::step_seconds},
    {"request_step_seconds", &EngineCosts::request_step_seconds},
    {"eager_layer_seconds", &EngineCosts::eager_layer_seconds},
    {"graph_step_seconds", &EngineCosts::graph_step_seconds},
    {"request_seconds", &EngineCosts::request_seconds}};

// Each a duration from 0 to a second: a host cost beyond that is a unit mistake.
void read_engine_costs(const YamlInput& in, EngineCosts& costs) {
  std::vector<std::string> keys;
  for (const auto& [key, field] : kEngineCostKeys) keys.emplace_back(key);
  in.expect_map(keys);
  for (const auto& [key, field] : kEngineCostKeys)
    if (const auto v = in.optional(key)) costs.*field = v->as_double_in(0, 1.0);
}

// Reads `in` over `base` (the values a key left out keeps).
CalibrationProfile read_profile(const YamlInput& in, const Device& device, CalibrationProfile p) {
  in.expect_map({"kind", "version", "name", "source", "device", "provenance", "efficiency", "overhead",
                 "engine", "kernels", "collectives", "cross_shape_weight", "residuals", "notes"});
  if (in.required("kind").as_string() != "profile") in.required("kind").fail("expected 'profile'");
  if (const long long version = in.required("version").as_int(); version != 1 && version != kFormatVersion)
    in.required("version").fail(
        fmt::format("unsupported profile version (this semsim reads 1 and {})", kFormatVersion));
  p.name = in.get_string("name", in.file());
  p.source = in.required("source").as_choice({"datasheet", "measured"});
  p.device = in.required("device").as_string();
  if (p.device != device.name)
    in.required("device").fail("profile is for '" + p.device + "' but the cluster's device is '" +
                               device.name + "'");
  p.provenance.reset();
  if (const auto provenance = in.optional("provenance")) p.provenance = read_provenance(*provenance);
  if (const auto eff = in.optional("efficiency")) {
    eff->expect_map({"gemm", "attention", "memory", "scaleup", "scaleout"});
    auto read = [&](const char* key, double& field) {
      if (const auto v = eff->optional(key)) field = v->as_double_in(0.01, 1.0);
    };
    read("gemm", p.gemm_efficiency);
    read("attention", p.attention_efficiency);
    read("memory", p.memory_efficiency);
    read("scaleup", p.scaleup_efficiency);
    read("scaleout", p.scaleout_efficiency);
  }
  if (const auto overhead = in.optional("overhead")) {
    overhead->expect_map({"kernel", "collective"});
    if (const auto v = overhead->optional("kernel")) p.kernel_overhead = v->as_double_in(0, 1e-2);
    if (const auto v = overhead->optional("collective")) p.collective_overhead = v->as_double_in(0, 1e-2);
  }
  if (const auto engine = in.optional("engine")) read_engine_costs(*engine, p.engine);
  p.kernels.clear();
  if (const auto kernels = in.optional("kernels")) {
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (const YamlInput& item : kernels->items()) {
      KernelTable table = read_kernel_table(item);
      if (!seen.emplace(table.kernel, table.shape, table.dtype).second)
        item.fail(fmt::format("a second table for {} '{}' {}", table.kernel, table.shape, table.dtype));
      p.kernels.push_back(std::move(table));
    }
  }
  p.collectives.clear();
  if (const auto collectives = in.optional("collectives")) {
    for (const YamlInput& item : collectives->items()) {
      CollectiveFit fit = read_collective_fit(item);
      for (const CollectiveFit& other : p.collectives)
        if (other.collective == fit.collective && other.level == fit.level && other.ranks == fit.ranks)
          item.fail(
              fmt::format("a second fit for {} at {} on {} ranks", fit.collective, fit.level, fit.ranks));
      p.collectives.push_back(std::move(fit));
    }
  }
  p.cross_shape_weights.clear();
  if (const auto weights = in.optional("cross_shape_weight")) {
    weights->expect_map(kernel_names());
    for (const std::string& kernel : weights->keys())
      p.cross_shape_weights[kernel] = weights->required(kernel).as_double_in(0, 1);
  }
  p.residuals.clear();
  if (const auto residuals = in.optional("residuals"))
    for (const YamlInput& item : residuals->items()) p.residuals.push_back(read_family_residuals(item));
  // Block scalars (`notes: >` or `|`) end in a newline that is no part of the text.
  p.notes = in.get_string("notes", "");
  while (p.notes.ends_with('\n')) p.notes.pop_back();
  return p;
}

// Numbers in their shortest form that reads back to the same double.
std::string number(double value) {
  return fmt::format("{}", value);
}

void emit_numbers(YAML::Emitter& out, const std::vector<double>& values) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const double v : values) out << number(v);
  out << YAML::EndSeq;
}

// A grid or a row as the compact space-separated text read_numbers reads.
std::string numbers_text(const std::vector<std::optional<double>>& values) {
  std::string text;
  for (const std::optional<double>& v : values) {
    if (!text.empty()) text += ' ';
    text += v ? number(*v) : "~";
  }
  return text;
}

void emit_residuals(YAML::Emitter& out, const FitResiduals& r, const char* key = "residuals") {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "median" << YAML::Value << number(r.median);
  out << YAML::Key << "p95" << YAML::Value << number(r.p95);
  out << YAML::Key << "samples" << YAML::Value << r.samples;
  out << YAML::EndMap;
}

void emit_kernel_table(YAML::Emitter& out, const KernelTable& t) {
  out << YAML::BeginMap;
  out << YAML::Key << "kernel" << YAML::Value << t.kernel;
  out << YAML::Key << "shape" << YAML::Value << YAML::DoubleQuoted << t.shape;
  out << YAML::Key << "dtype" << YAML::Value << t.dtype;
  if (!t.implementation.empty()) out << YAML::Key << "implementation" << YAML::Value << t.implementation;
  out << YAML::Key << "axes" << YAML::Value << YAML::BeginSeq;
  for (const TableAxis& axis : t.axes)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << axis.name << YAML::Key
        << "values" << YAML::Value << YAML::DoubleQuoted
        << numbers_text(std::vector<std::optional<double>>(axis.values.begin(), axis.values.end()))
        << YAML::EndMap;
  out << YAML::EndSeq;
  if (t.tile != 1) out << YAML::Key << "tile" << YAML::Value << t.tile;
  const std::size_t columns = t.columns();
  auto row_text = [&](std::size_t first) {
    return numbers_text({t.seconds.begin() + static_cast<std::ptrdiff_t>(first),
                         t.seconds.begin() + static_cast<std::ptrdiff_t>(first + columns)});
  };
  out << YAML::Key << "seconds" << YAML::Value;
  // Literal blocks: yaml-cpp scans them several times faster than plain scalars.
  if (t.axes.size() == 1) {
    out << YAML::Literal << row_text(0);
  } else {
    std::string block;
    for (std::size_t row = 0; row < t.axes[0].values.size(); ++row) {
      if (row > 0) block += '\n';
      block += row_text(row * columns);
    }
    out << YAML::Literal << block;
  }
  emit_residuals(out, t.residuals);
  out << YAML::EndMap;
}

void emit_collective_fit(YAML::Emitter& out, const CollectiveFit& f) {
  out << YAML::BeginMap;
  out << YAML::Key << "collective" << YAML::Value << f.collective;
  out << YAML::Key << "level" << YAML::Value << f.level;
  out << YAML::Key << "ranks" << YAML::Value << f.ranks;
  out << YAML::Key << "alpha" << YAML::Value << number(f.alpha);
  out << YAML::Key << "bus_bandwidth" << YAML::Value << number(f.bus_bandwidth);
  out << YAML::Key << "efficiency" << YAML::Value << number(f.efficiency);
  if (!f.factor.empty()) {
    out << YAML::Key << "bandwidth_factor" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "bytes" << YAML::Value;
    emit_numbers(out, f.factor_bytes);
    out << YAML::Key << "factor" << YAML::Value;
    emit_numbers(out, f.factor);
    out << YAML::EndMap;
  }
  emit_residuals(out, f.residuals);
  out << YAML::EndMap;
}

void emit_provenance(YAML::Emitter& out, const ProfileProvenance& provenance) {
  out << YAML::BeginMap;
  const std::pair<const char*, const std::string*> fields[] = {
      {"date", &provenance.date}, {"gpu", &provenance.gpu},       {"driver", &provenance.driver},
      {"cuda", &provenance.cuda}, {"cublas", &provenance.cublas}, {"nccl", &provenance.nccl}};
  for (const auto& [key, value] : fields)
    out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << *value;
  out << YAML::Key << "gpus" << YAML::Value << provenance.gpus;
  if (!provenance.database.empty())
    out << YAML::Key << "database" << YAML::Value << YAML::DoubleQuoted << provenance.database;
  if (!provenance.frameworks.empty())
    out << YAML::Key << "frameworks" << YAML::Value << YAML::DoubleQuoted << provenance.frameworks;
  if (!provenance.tables.empty()) {
    out << YAML::Key << "tables" << YAML::Value << YAML::BeginSeq;
    for (const SourceTable& t : provenance.tables) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value << t.file << YAML::Key
          << "rows" << YAML::Value << t.rows << YAML::Key << "used" << YAML::Value << t.used;
      if (t.repeats > 0) out << YAML::Key << "repeats" << YAML::Value << t.repeats;
      if (!t.skipped.empty()) {
        out << YAML::Key << "skipped" << YAML::Value << YAML::BeginMap;
        for (const auto& [reason, rows] : t.skipped) out << YAML::Key << reason << YAML::Value << rows;
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (const auto& t = provenance.topology) {
    out << YAML::Key << "topology" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "nodes"
        << YAML::Value << t->nodes << YAML::Key << "gpus_per_node" << YAML::Value << t->gpus_per_node
        << YAML::Key << "nics_per_node" << YAML::Value << t->nics_per_node << YAML::Key << "hosts"
        << YAML::Value << YAML::BeginSeq;
    for (const std::string& host : t->hosts) out << YAML::DoubleQuoted << host;
    out << YAML::EndSeq << YAML::EndMap;
  }
  if (!provenance.outliers.empty()) {
    out << YAML::Key << "outliers" << YAML::Value << YAML::BeginSeq;
    for (const OutlierRow& o : provenance.outliers) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "kernel" << YAML::Value << o.kernel << YAML::Key
          << "shape" << YAML::Value << YAML::DoubleQuoted << o.shape << YAML::Key << "dtype" << YAML::Value
          << o.dtype << YAML::Key << "at" << YAML::Value;
      emit_numbers(out, o.at);
      out << YAML::Key << "seconds" << YAML::Value << o.seconds << YAML::Key << "neighbours" << YAML::Value;
      emit_numbers(out, o.neighbours);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

}  // namespace

CalibrationProfile CalibrationProfile::from_yaml(const YamlInput& in, const Device& device,
                                                 CalibrationProfile defaults) {
  return read_profile(in, device, std::move(defaults));
}

const KernelTable* CalibrationProfile::find_kernel(const std::string& kernel, const std::string& shape,
                                                   const std::string& dtype) const {
  for (const KernelTable& table : kernels)
    if (table.kernel == kernel && table.shape == shape && table.dtype == dtype) return &table;
  return nullptr;
}

std::string CalibrationProfile::describe_source() const {
  if (source != "datasheet") return fmt::format("{} ({})", name, source);
  return fmt::format(
      "{} (datasheet only: no kernel of {} was measured; every time is a roofline over its datasheet "
      "figures)",
      name, device);
}

std::string CalibrationProfile::to_yaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << "profile";
  out << YAML::Key << "version" << YAML::Value << kFormatVersion;
  out << YAML::Key << "name" << YAML::Value << name;
  out << YAML::Key << "source" << YAML::Value << source;
  out << YAML::Key << "device" << YAML::Value << device;
  if (provenance) {
    out << YAML::Key << "provenance" << YAML::Value;
    emit_provenance(out, *provenance);
  }
  out << YAML::Key << "efficiency" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gemm" << YAML::Value << number(gemm_efficiency);
  out << YAML::Key << "attention" << YAML::Value << number(attention_efficiency);
  out << YAML::Key << "memory" << YAML::Value << number(memory_efficiency);
  out << YAML::Key << "scaleup" << YAML::Value << number(scaleup_efficiency);
  out << YAML::Key << "scaleout" << YAML::Value << number(scaleout_efficiency);
  out << YAML::EndMap;
  out << YAML::Key << "overhead" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kernel" << YAML::Value << number(kernel_overhead);
  out << YAML::Key << "collective" << YAML::Value << number(collective_overhead);
  out << YAML::EndMap;
  out << YAML::Key << "engine" << YAML::Value << YAML::BeginMap;
  for (const auto& [key, field] : kEngineCostKeys)
    out << YAML::Key << key << YAML::Value << number(engine.*field);
  out << YAML::EndMap;
  if (!kernels.empty()) {
    out << YAML::Key << "kernels" << YAML::Value << YAML::BeginSeq;
    for (const KernelTable& table : kernels) emit_kernel_table(out, table);
    out << YAML::EndSeq;
  }
  if (!collectives.empty()) {
    out << YAML::Key << "collectives" << YAML::Value << YAML::BeginSeq;
    for (const CollectiveFit& fit : collectives) emit_collective_fit(out, fit);
    out << YAML::EndSeq;
  }
  if (!cross_shape_weights.empty()) {
    out << YAML::Key << "cross_shape_weight" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [kernel, weight] : cross_shape_weights)
      out << YAML::Key << kernel << YAML::Value << number(weight);
    out << YAML::EndMap;
  }
  if (!residuals.empty()) {
    out << YAML::Key << "residuals" << YAML::Value << YAML::BeginSeq;
    for (const FamilyResiduals& r : residuals) {
      out << YAML::BeginMap << YAML::Key << "family" << YAML::Value << r.family;
      emit_residuals(out, r.within_shape, "within_shape");
      emit_residuals(out, r.across_shapes, "across_shapes");
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!notes.empty()) out << YAML::Key << "notes" << YAML::Value << YAML::Literal << notes;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace semsim
