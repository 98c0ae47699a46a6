// From raw microbenchmark results to a measured profile: synthetic CSVs in the benchmark's format
// (with failed, skipped and unchecked rows mixed in), the fitted tables, fits and efficiencies, the
// device matched from the GPU's name, malformed files, and `semsim calibrate` end to end.
#include "calibrate/import/measured_profile.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "../cli/cli_runner.hpp"
#include "calibrate/fit/interpolation.hpp"
#include "calibrate/format/kernels.hpp"
#include "models/presets.hpp"
#include "tests/calibrate/profile_lines.hpp"
#include "tests/calibrate/raw_fixture.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

using cli_test::TempDir;

using test::h200;

using test::copy_seconds;
using test::experts_seconds;
using test::write;
using test::write_raw;

TEST(MeasuredProfile, FitsTablesFitsAndEfficienciesFromRawResults) {
  TempDir raw;
  write_raw(raw.path().string());
  const CalibrationProfile p = fit_measured_profile(raw.path().string(), h200());
  EXPECT_EQ(p.name, "h200-sxm-measured");
  EXPECT_EQ(p.source, "measured");
  ASSERT_TRUE(p.provenance);
  EXPECT_EQ(*p.provenance, (ProfileProvenance{"2025-01-02T03:04:05Z",
                                              "NVIDIA H200",
                                              8,
                                              "580.82.07",
                                              "13.0.0",
                                              "13.1.0",
                                              "2.28.9",
                                              "",
                                              "",
                                              {},
                                              ProfileTopology{1, 8, 0, {}},
                                              {}}));
  // Tables: routed experts, LM head and copy; the gate failed its check, FP8 was unsupported.
  ASSERT_EQ(p.kernels.size(), 3u);
  const MoeModel model = model_preset("deepseek-v2-lite");
  const KernelTable* experts = p.find_kernel("routed_experts", kernel_shape("routed_experts", model), "bf16");
  ASSERT_TRUE(experts);
  EXPECT_EQ(experts->implementation, "impl, with a comma");
  EXPECT_EQ(experts->axes[0].values.size(), 7u);
  EXPECT_EQ(experts->axes[1].values.size(), 17u);
  const KernelTableLookup lookup(*experts, "t", false);
  EXPECT_NEAR(lookup.seconds(4, 512), experts_seconds(4, 512), 1e-15);
  // The skewed samples are 5% slower than the balanced table says: they show in the residuals.
  EXPECT_NEAR(experts->residuals.p95, 0.05 / 1.05, 0.01);
  const KernelTable* head = p.find_kernel("lm_head", kernel_shape("lm_head", model), "bf16");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->axes[0].values.back(), 8192) << "the skipped point is not in the table";
  EXPECT_FALSE(p.find_kernel("gate", kernel_shape("gate", model), "bf16"));
  // One all-to-all fit (one-rank rows move nothing over a link).
  ASSERT_EQ(p.collectives.size(), 1u);
  const CollectiveFit& fit = p.collectives[0];
  EXPECT_EQ(fit.ranks, 8);
  EXPECT_NEAR(fit.alpha, 20e-6, 0.005 * 20e-6);
  EXPECT_NEAR(fit.efficiency, 0.8, 0.01);
  // Efficiencies and overheads derived from the same samples; the rest stay the datasheet's.
  EXPECT_NEAR(p.gemm_efficiency, 0.6, 0.01);
  EXPECT_NEAR(p.memory_efficiency, 0.85, 0.01);  // less 3 us of launch on the largest copy
  EXPECT_NEAR(p.scaleup_efficiency, fit.efficiency, 1e-12);
  EXPECT_DOUBLE_EQ(p.collective_overhead, fit.alpha);
  EXPECT_DOUBLE_EQ(p.kernel_overhead, copy_seconds(4096));
  EXPECT_DOUBLE_EQ(p.attention_efficiency, CalibrationProfile::datasheet(h200()).attention_efficiency);
  EXPECT_DOUBLE_EQ(p.scaleout_efficiency, CalibrationProfile::datasheet(h200()).scaleout_efficiency);
  EXPECT_NE(p.notes.find("Correctness checks failed: top_k."), std::string::npos) << p.notes;
  // And it is a valid profile.
  const CalibrationProfile back =
      CalibrationProfile::from_yaml(YamlInput::parse(p.to_yaml(), "p.yaml"), h200());
  EXPECT_EQ(back.to_yaml(), p.to_yaml());
  EXPECT_EQ(test::without_table_lines(back), p);
}

TEST(MeasuredProfile, MalformedRawFilesNameTheLine) {
  TempDir raw;
  write_raw(raw.path().string());
  write(raw / "kernels.csv",
        "kernel,shape,dtype,implementation,variant,x,y,seconds,p10,p90,trials,launches,status\n"
        "copy,,bf16,x,grid,4096,0,3e-6,,,5,1,ok\ncopy,,bf16,x,grid,8192,0,fast,,,5,1,ok\n");
  try {
    fit_measured_profile(raw.path().string(), h200());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), raw / "kernels.csv" + ":3: seconds: expected a number, got 'fast'");
  }
  write(raw / "kernels.csv", "kernel,shape\ncopy\n");
  EXPECT_THROW(fit_measured_profile(raw.path().string(), h200()), InputError);
  std::filesystem::remove(raw / "environment.csv");
  EXPECT_THROW(fit_measured_profile(raw.path().string(), h200()), InputError);
}

TEST(MeasuredProfile, MatchesTheDevicePresetByTheGpuName) {
  EXPECT_EQ(device_preset_for_gpu("NVIDIA H200"), "h200-sxm");
  EXPECT_EQ(device_preset_for_gpu("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(device_preset_for_gpu("NVIDIA A100-SXM4-80GB"), "a100-sxm-80gb");
  try {
    device_preset_for_gpu("NVIDIA H100 80GB HBM3");
    FAIL() << "an SXM or a PCIe H100?";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "cannot tell which device preset the GPU 'NVIDIA H100 80GB HBM3' is (h100-pcie, h100-sxm); name it "
        "with --device");
  }
  EXPECT_THROW(device_preset_for_gpu("Tesla T4"), InputError);
}

TEST(CalibrateCommand, FitsRawResultsAndTheEngineRunsOnTheProfile) {
  TempDir raw, out;
  write_raw(raw.path().string());
  const std::vector<std::string> fit{"calibrate", "--from-raw", raw.path().string(), "--out",
                                     out / "h200.yaml"};
  const auto r = cli_test::run_semsim(fit);
  ASSERT_EQ(r.exit_code, 0) << cli_test::describe(fit, r);
  EXPECT_NE(r.out.find("profile h200-sxm-measured for h200-sxm (NVIDIA H200, 2025-01-02T03:04:05Z): 3 kernel "
                       "tables, 1 collective fits"),
            std::string::npos)
      << r.out;
  const std::vector<std::string> run{
      "run",   "default",  "--set", "calibration=" + out / "h200.yaml", "--set", "workload.requests=5",
      "--out", out / "run"};
  const auto simulated = cli_test::run_semsim(run);
  EXPECT_EQ(simulated.exit_code, 0) << cli_test::describe(run, simulated);
  EXPECT_NE(simulated.out.find("h200-sxm-measured"), std::string::npos) << simulated.out;
}

TEST(CalibrateCommand, WithoutAGpuExitsTwoSayingSo) {
  if (std::filesystem::exists("/proc/driver/nvidia/gpus") &&
      !std::filesystem::is_empty("/proc/driver/nvidia/gpus"))
    GTEST_SKIP() << "this machine has a GPU: calibrating it is the device script's job";
  TempDir out;
  const std::vector<std::string> args{"calibrate", "--out", out / "p.yaml"};
  const auto r = cli_test::run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << cli_test::describe(args, r);
  EXPECT_NE(r.err.find("error: calibrate: no CUDA GPU on this machine"), std::string::npos) << r.err;
  EXPECT_EQ(cli_test::entries_under(out.path()), std::vector<std::string>{}) << "nothing written";
}

}  // namespace
}  // namespace semsim
