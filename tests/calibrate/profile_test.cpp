// Calibration profile format v2 (v1 files read unchanged): datasheet profiles for every device preset, exact
// round trip through YAML, and one clear located error for each kind of malformed profile.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "calibrate/format/profile_pack.hpp"
#include "models/presets.hpp"
#include "tests/calibrate/profile_lines.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

Device device_preset(const std::string& name) {
  return load_device(YamlInput(YAML::Node(name), std::make_shared<const std::string>("<test>"), "device"),
                     "");
}

using test::h200;

CalibrationProfile parse(const std::string& text) {
  return CalibrationProfile::from_yaml(YamlInput::parse(text, "test.yaml"), h200());
}

const std::string kHeader = "kind: profile\nversion: 1\nsource: measured\ndevice: h200-sxm\n";

TEST(Profile, EveryDevicePresetHasADatasheetProfile) {
  const auto devices = preset_names(PresetKind::kDevice);
  ASSERT_EQ(devices.size(), 10u);  // gb200, ascend-910c and h20 joined the seven
  for (const std::string& name : devices) {
    SCOPED_TRACE(name);
    const CalibrationProfile p = CalibrationProfile::datasheet(device_preset(name));
    EXPECT_EQ(p.name, name + "-datasheet");
    EXPECT_EQ(p.source, "datasheet");
    EXPECT_EQ(p.device, name);
    EXPECT_FALSE(p.notes.empty()) << "a datasheet profile documents its assumptions";
    EXPECT_TRUE(p.kernels.empty());
    EXPECT_DOUBLE_EQ(p.gemm_efficiency, 0.70);
    EXPECT_DOUBLE_EQ(p.attention_efficiency, 0.45);
    EXPECT_DOUBLE_EQ(p.memory_efficiency, 0.80);
    EXPECT_DOUBLE_EQ(p.scaleup_efficiency, 0.80);
    EXPECT_DOUBLE_EQ(p.scaleout_efficiency, 0.85);
    EXPECT_DOUBLE_EQ(p.kernel_overhead, 4e-6);
    EXPECT_DOUBLE_EQ(p.collective_overhead, 10e-6);
    EXPECT_EQ(p.engine, EngineCosts{}) << "the SGLang estimates, as engine_costs.hpp states them";
  }
}

// `check` and `coverage` print this: a device without measured tables (the H20) says so.
TEST(Profile, DatasheetProfilesSayNoKernelWasMeasured) {
  const CalibrationProfile h20 = CalibrationProfile::datasheet(device_preset("h20"));
  EXPECT_EQ(h20.describe_source(),
            "h20-datasheet (datasheet only: no kernel of h20 was measured; every time is a roofline over its "
            "datasheet figures)");
  // Measured on Hopper and on Blackwell (issue 40: B200 and GB200 from the same public tables).
  for (const std::string device : {"h100-sxm", "h200-sxm", "b200", "gb200"}) {
    SCOPED_TRACE(device);
    const auto measured = CalibrationProfile::measured(device_preset(device));
    ASSERT_NE(measured, nullptr);
    EXPECT_EQ(measured->name, device + "-measured");
    EXPECT_EQ(measured->describe_source(), measured->name + " (measured)");
    EXPECT_EQ(CalibrationProfile::standard(device_preset(device)), measured) << "the device's default";
  }
  EXPECT_EQ(CalibrationProfile::measured(device_preset("h20")), nullptr);
}

TEST(Profile, DeviceWithoutDatasheetFileGetsTheGenericAssumptions) {
  Device custom = h200();
  custom.name = "my-accelerator";
  const CalibrationProfile p = CalibrationProfile::datasheet(custom);
  EXPECT_EQ(p.name, "datasheet:my-accelerator");
  EXPECT_DOUBLE_EQ(p.gemm_efficiency, 0.70);
}

CalibrationProfile full_profile() {
  CalibrationProfile p = CalibrationProfile::datasheet(h200());
  p.name = "round-trip";
  p.source = "measured";
  p.provenance =
      ProfileProvenance{"2025-01-02T03:04:05Z",
                        "NVIDIA H200",
                        8,
                        "580.1",
                        "13.0",
                        "13.1.0",
                        "2.28.9",
                        "",
                        "",
                        {},
                        ProfileTopology{2, 8, 8, {"gpu-a", "gpu-b"}},
                        {OutlierRow{"gemm", "n=3072 k=7168", "fp8", {769}, 1.459e-4, {5.37e-5, 6.66e-5}}}};
  p.gemm_efficiency = 0.6123456789012345;
  p.kernel_overhead = 3.3e-6;
  KernelTable experts;
  experts.kernel = "routed_experts";
  experts.shape = "hidden=2048 ffn=1408";
  experts.implementation = "cublasGemmGroupedBatchedEx";
  experts.axes = {{"active_experts", {1, 2, 4}}, {"tokens", {1, 2, 4, 8}}};
  experts.seconds = {1e-5,   1.1e-5, 1.3e-5,       1.7e-5,       std::nullopt, 2e-5,
                     2.1e-5, 2.5e-5, std::nullopt, std::nullopt, 3e-5,         1.0 / 3.0};
  experts.residuals = {0.012, 0.05, 6};
  KernelTable head;
  head.kernel = "lm_head";
  head.shape = "hidden=2048 vocabulary=102400";
  head.dtype = "fp8";
  head.axes = {{"tokens", {1, 16, 256}}};
  head.tile = 16;
  head.seconds = {std::nullopt, 2e-4, 9e-4};
  p.kernels = {experts, head};
  CollectiveFit a2a;
  a2a.collective = "all_to_all";
  a2a.level = "scaleup";
  a2a.ranks = 8;
  a2a.alpha = 1.7e-5;
  a2a.bus_bandwidth = 3.6e11;
  a2a.efficiency = 0.8;
  a2a.factor_bytes = {128, 1024, 1 << 20};
  a2a.factor = {0.1, 0.45, 1.0};
  a2a.residuals = {0.02, 0.08, 19};
  p.collectives = {a2a};
  p.engine = {1.25e-4, 7e-6, 4.5e-5, 6.1e-5, 1.0 / 300};
  p.notes = "line one\nline two";
  return p;
}

TEST(Profile, RoundTripsThroughYamlExactly) {
  const CalibrationProfile original = full_profile();
  const std::string text = original.to_yaml();
  const CalibrationProfile back = parse(text);
  EXPECT_EQ(back.to_yaml(), text);
  // Each table read from text knows the line it starts on (errors cite it); one made in memory has none.
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  ASSERT_EQ(back.kernels.size(), 2u);
  for (const KernelTable& table : back.kernels) {
    ASSERT_GT(table.line, 0);
    ASSERT_LE(table.line, static_cast<int>(lines.size()));
    EXPECT_EQ(lines[table.line - 1], "  - kernel: " + table.kernel);
  }
  EXPECT_EQ(test::without_table_lines(back), original) << text;
}

TEST(Profile, PacksAndUnpacksExactly) {
  CalibrationProfile original = full_profile();
  original.provenance->database = "a database";
  original.provenance->tables = {{"h200-sxm/gemm_perf.csv.gz", 10, 7, 1, {{"dtype not modelled", 2}}}};
  original.residuals = {{"routed_experts", {0.01, 0.04, 12}, {0.05, 0.2, 3}}};
  original.cross_shape_weights = {{"routed_experts", 0.25}};
  original.kernels.front().seconds.front() = std::nextafter(1e-5, 1.0);  // the last bit survives
  EXPECT_EQ(unpack_profile(pack_profile(original)), original);
  const std::string packed = pack_profile(original);
  EXPECT_THROW(unpack_profile("{\"name\": 1}"), std::logic_error);
  EXPECT_THROW(unpack_profile(packed.substr(0, packed.size() - 1)), std::logic_error);  // cut short
  EXPECT_THROW(unpack_profile(packed + "x"), std::logic_error);                         // bytes left
}

// The packed profiles in the binary are the files under calibrate/profiles/, field by field.
TEST(Profile, EmbeddedMeasuredProfilesAreTheirFiles) {
  int compared = 0;
  for (const std::string& name : preset_names(PresetKind::kDevice)) {
    const std::filesystem::path file =
        std::filesystem::path(SEMSIM_SOURCE_DIR) / "calibrate/profiles" / (name + "-measured.yaml");
    const auto embedded = CalibrationProfile::measured(device_preset(name));
    if (name == "h800-sxm") continue;  // derived from the H100's (below)
    ASSERT_EQ(std::filesystem::exists(file), embedded != nullptr) << name;
    if (!embedded) continue;
    SCOPED_TRACE(name);
    const CalibrationProfile read =
        CalibrationProfile::from_yaml(YamlInput::load_file(file), device_preset(name));
    EXPECT_GT(read.kernels.size(), 1000u);
    EXPECT_TRUE(read == *embedded);  // no print: megabytes
    ++compared;
  }
  EXPECT_EQ(compared, 4);  // H100, H200, B200, GB200
}

// The H800 is an H100 SXM with NVLink at 200 GB/s per direction instead of 450: its measured profile
// is the H100's, every value traced to it — kernel tables equal, NCCL's bus bandwidths scaled by the
// links, DeepEP's tables left out (NVLink-bound kernels, priced by the link model instead).
TEST(Profile, H800MeasuredIsTheH100sWithItsNvlinkRescaled) {
  const Device h100 = device_preset("h100-sxm"), h800 = device_preset("h800-sxm");
  const auto source = CalibrationProfile::measured(h100);
  const auto derived = CalibrationProfile::measured(h800);
  ASSERT_TRUE(source && derived);
  EXPECT_EQ(derived->device, "h800-sxm");
  EXPECT_EQ(derived->source, "measured");
  EXPECT_EQ(CalibrationProfile::standard(h800), derived);
  std::size_t deepep = 0;
  for (const KernelTable& table : source->kernels) {
    if (table.kernel.starts_with("deepep_")) {
      ++deepep;
      EXPECT_EQ(derived->find_kernel(table.kernel, table.shape, table.dtype), nullptr);
      continue;
    }
    const KernelTable* same = derived->find_kernel(table.kernel, table.shape, table.dtype);
    ASSERT_NE(same, nullptr) << table.kernel << " " << table.shape;
    EXPECT_TRUE(*same == table) << table.kernel << " " << table.shape;
  }
  EXPECT_GT(deepep, 0u);
  EXPECT_EQ(derived->kernels.size() + deepep, source->kernels.size());
  ASSERT_EQ(derived->collectives.size(), source->collectives.size());
  for (std::size_t i = 0; i < source->collectives.size(); ++i) {
    const CollectiveFit &from = source->collectives[i], &to = derived->collectives[i];
    ASSERT_EQ(from.level, "scaleup");
    EXPECT_DOUBLE_EQ(to.bus_bandwidth, from.bus_bandwidth * 200e9 / 450e9) << from.collective << from.ranks;
    EXPECT_EQ(to.alpha, from.alpha);
    EXPECT_EQ(to.factor, from.factor);
    EXPECT_EQ(to.efficiency, from.efficiency);
  }
  EXPECT_EQ(derived->scaleup_efficiency, source->scaleup_efficiency);
  EXPECT_EQ(derived->gemm_efficiency, source->gemm_efficiency);
  EXPECT_NE(derived->notes.find("Derived from h100-sxm-measured"), std::string::npos) << derived->notes;
}

TEST(Profile, KeysLeftOutKeepTheDatasheetValues) {
  const CalibrationProfile p = parse(kHeader + "efficiency: {gemm: 0.5}\nengine: {step_seconds: 2e-4}\n");
  const CalibrationProfile datasheet = CalibrationProfile::datasheet(h200());
  EXPECT_DOUBLE_EQ(p.engine.step_seconds, 2e-4);
  EXPECT_EQ(p.engine.request_seconds, datasheet.engine.request_seconds);
  EXPECT_DOUBLE_EQ(p.gemm_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(p.memory_efficiency, datasheet.memory_efficiency);
  EXPECT_DOUBLE_EQ(p.collective_overhead, datasheet.collective_overhead);
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.notes, "");
}

TEST(Profile, FindsTablesByKernelShapeAndDtype) {
  const CalibrationProfile p = full_profile();
  EXPECT_EQ(p.find_kernel("routed_experts", "hidden=2048 ffn=1408", "bf16"), &p.kernels[0]);
  EXPECT_EQ(p.find_kernel("routed_experts", "hidden=2048 ffn=1408", "fp8"), nullptr);
  EXPECT_EQ(p.find_kernel("routed_experts", "hidden=4096 ffn=1408", "bf16"), nullptr);
  EXPECT_EQ(p.find_kernel("lm_head", "hidden=2048 vocabulary=102400", "fp8"), &p.kernels[1]);
}

struct BadProfileText {
  std::string name;
  std::string body;      // after kHeader (lines 1-4)
  std::string location;  // test.yaml:LINE:COLUMN
  std::string message;
};

void PrintTo(const BadProfileText& m, std::ostream* os) {
  *os << m.name;
}

class MalformedProfile : public testing::TestWithParam<BadProfileText> {};

TEST_P(MalformedProfile, IsRejectedWithOneLocatedMessage) {
  const BadProfileText& m = GetParam();
  try {
    parse(kHeader + m.body);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(m.location + ":")) << message;
    EXPECT_NE(message.find(m.message), std::string::npos) << message;
  }
}

const std::string kTable1d =
    "kernels:\n  - kernel: gate\n    dtype: bf16\n    axes: [{name: tokens, values: [1, 2, 4]}]\n";

INSTANTIATE_TEST_SUITE_P(
    Profile, MalformedProfile,
    testing::Values(
        BadProfileText{"UnknownTopKey", "efficiencies: {}\n", "test.yaml:5:1",
                       "unknown key 'efficiencies' (did you mean 'efficiency'?)"},
        BadProfileText{
            "UnknownKernel",
            "kernels:\n  - kernel: routed_expert\n    dtype: bf16\n    axes: []\n    seconds: []\n",
            "test.yaml:6:13",
            "kernels[0].kernel: unknown value 'routed_expert' (did you mean 'routed_experts'?)"},
        BadProfileText{
            "WrongAxisCount",
            "kernels:\n  - kernel: routed_experts\n    dtype: bf16\n    axes: [{name: tokens, values: "
            "[1, 2]}]\n"
            "    seconds: [1, 2]\n",
            "test.yaml:8:11", "routed_experts has 2 axes, got 1"},
        BadProfileText{
            "WrongAxisName",
            "kernels:\n  - kernel: gate\n    dtype: bf16\n    axes: [{name: batch, values: [1, 2]}]\n  "
            "  seconds: [1, 2]\n",
            "test.yaml:8:19", "axis 1 of gate is 'tokens'"},
        BadProfileText{
            "GridNotIncreasing",
            "kernels:\n  - kernel: gate\n    dtype: bf16\n    axes: [{name: tokens, values: [1, 4, "
            "4]}]\n    seconds: [1, 2, 3]\n",
            "test.yaml:8:35", "kernels[0].axes[0].values: values must increase strictly, got 4 after 4"},
        BadProfileText{"GridNotIncreasingAsText",
                       "kernels:\n  - kernel: gate\n    dtype: bf16\n    axes: [{name: tokens, values: \"1 4 "
                       "2\"}]\n    seconds: \"1 2 3\"\n",
                       "test.yaml:8:35",
                       "kernels[0].axes[0].values: values must increase strictly, got 2 after 4"},
        BadProfileText{"TileOfNoRows", kTable1d + "    tile: 0\n    seconds: [1e-5, 2e-5, 3e-5]\n",
                       "test.yaml:9:11", "kernels[0].tile"},
        BadProfileText{"RowTooShort", kTable1d + "    seconds: [1e-5, 2e-5]\n", "test.yaml:9:14",
                       "expected 3 values (one per grid point of the last axis), got 2"},
        BadProfileText{"HoleInsideARow", kTable1d + "    seconds: [1e-5, ~, 2e-5]\n", "test.yaml:9:14",
                       "needs at least two measured values, contiguous"},
        BadProfileText{"NegativeSeconds", kTable1d + "    seconds: [1e-5, -2e-5, 3e-5]\n", "test.yaml:9:21",
                       "kernels[0].seconds[1]: must be in [1e-12, 1e+18], got -2e-05"},
        BadProfileText{
            "DuplicateTable",
            kTable1d + "    seconds: [1, 2, 3]\n" + kTable1d.substr(9) + "    seconds: [1, 2, 3]\n",
            "test.yaml:10:5", "a second table for gate '' bf16"},
        BadProfileText{
            "MissingRows",
            "kernels:\n  - kernel: attention_decode\n    dtype: bf16\n    axes: [{name: batch, values: "
            "[1, 2]}, "
            "{name: context, values: [64, 128]}]\n    seconds: [[1, 2]]\n",
            "test.yaml:9:14", "expected 2 rows (one per batch value), got 1"},
        BadProfileText{"UnknownLevel",
                       "collectives:\n  - {collective: all_to_all, level: nvlink, ranks: 8, alpha: 1e-5, "
                       "bus_bandwidth: 3e11, "
                       "efficiency: 0.8}\n",
                       "test.yaml:6:37", "collectives[0].level: unknown value 'nvlink'"},
        BadProfileText{"FactorLengthMismatch",
                       "collectives:\n  - {collective: all_reduce, level: scaleup, ranks: 8, alpha: 1e-5, "
                       "bus_bandwidth: 3e11, "
                       "efficiency: 0.8, bandwidth_factor: {bytes: [1, 2, 4], factor: [0.5, 1]}}\n",
                       "test.yaml:6:152", "expected 3 factors (one per size in bytes), got 2"},
        BadProfileText{"OneRankFit",
                       "collectives:\n  - {collective: all_reduce, level: scaleup, ranks: 1, alpha: 1e-5, "
                       "bus_bandwidth: 3e11, "
                       "efficiency: 0.8}\n",
                       "test.yaml:6:53", "ranks: must be in [2, 1048576], got 1"},
        BadProfileText{"UnknownEngineKey", "engine: {step_second: 1e-4}\n", "test.yaml:5:10",
                       "engine.step_second: unknown key 'step_second' (did you mean 'step_seconds'?)"},
        BadProfileText{"NegativeEngineCost", "engine:\n  request_seconds: -1e-3\n", "test.yaml:6:20",
                       "engine.request_seconds: must be in [0, 1], got -0.001"},
        BadProfileText{"EngineCostInMilliseconds", "engine:\n  eager_layer_seconds: 60\n", "test.yaml:6:24",
                       "engine.eager_layer_seconds: must be in [0, 1], got 60"}),
    [](const testing::TestParamInfo<BadProfileText>& info) { return info.param.name; });

TEST(Profile, FutureVersionIsRejected) {
  try {
    CalibrationProfile::from_yaml(YamlInput::parse("kind: profile\nversion: 3\n", "test.yaml"), h200());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "test.yaml:2:10: version: unsupported profile version (this semsim reads 1 and 2)");
  }
}

TEST(Profile, WrongDeviceIsRejected) {
  try {
    CalibrationProfile::from_yaml(YamlInput::parse(kHeader, "test.yaml"), device_preset("a100-sxm-80gb"));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "test.yaml:4:9: device: profile is for 'h200-sxm' but the cluster's device is 'a100-sxm-80gb'");
  }
}

}  // namespace
}  // namespace semsim
