// From measured tables to a measured profile: a fixture database of every table kind and an
// nccl-tests log, imported; what the profile holds and where it says it came from; repeated rows
// averaged; tables of another GPU refused; the profile's exact round trip through YAML.
#include "calibrate/import/database_import.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <tuple>

#include "../cli/cli_runner.hpp"
#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/interpolation.hpp"
#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/format/kernels.hpp"
#include "calibrate/import/measured_profile.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "models/presets.hpp"
#include "tests/calibrate/profile_lines.hpp"
#include "tests/calibrate/table_fixtures.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim {
namespace {

using cli_test::TempDir;

using test::h200;

std::vector<MeasuredTable> read_tables(const std::vector<std::string>& paths, bool allow_repeats = false) {
  std::vector<MeasuredTable> tables;
  for (const std::string& path : paths) tables.push_back(read_aiconfigurator_table(path, allow_repeats));
  return tables;
}

// The fixture database, every kind, imported for the H200.
CalibrationProfile imported_fixture(const TempDir& tmp, const std::string& suffix = ".csv") {
  const auto paths = test::write_fixture_tables(tmp.path().string(), aiconfigurator_table_kinds(), suffix);
  return import_measured_tables(read_tables(paths), h200(), {"", "fixture 1", "2026-01-02", 5});
}

TEST(DatabaseImport, EveryTableKindBecomesKernelTablesOrCollectiveFits) {
  const TempDir tmp;
  const CalibrationProfile p = imported_fixture(tmp);
  EXPECT_EQ(p.name, "h200-sxm-measured");
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.device, "h200-sxm");
  std::set<std::tuple<std::string, std::string, std::string>> tables;
  for (const KernelTable& t : p.kernels) {
    EXPECT_TRUE(tables.emplace(t.kernel, t.shape, t.dtype).second) << "twice: " << t.kernel << " " << t.shape;
    EXPECT_EQ(find_kernel_spec(t.kernel)->scope, KernelScope::kKernel) << t.kernel;
  }
  const std::string gqa = "heads=32 kv_heads=4 head_dim=128 window=0";
  const std::string low_latency = "hidden=7168 experts=256 top_k=8", normal = low_latency + " sms=24";
  const std::set<std::tuple<std::string, std::string, std::string>> expected{
      {"gemm", "n=102400 k=2048", "bf16"},
      {"gemm", "n=4096 k=4096", "bf16"},
      {"gemm", "n=8192 k=2048", "bf16"},
      {"gemm", "n=1024 k=8192", "bf16"},
      {"moe_experts", "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced", "bf16"},
      {"mla_prefill", "heads=16", "bf16"},
      {"mla_decode", "heads=16", "bf16"},
      {"gqa_prefill", gqa, "bf16"},
      {"gqa_decode", gqa, "bf16"},
      {"deepep_ll_dispatch", low_latency, "bf16"},
      {"deepep_ll_combine", low_latency, "bf16"},
      {"deepep_normal_dispatch", normal, "bf16"},
      {"deepep_normal_combine", normal, "bf16"}};
  EXPECT_EQ(tables, expected);
  // The experts' rows: 64, 32 and 8 local experts (EP 1, 2 and 8).
  const KernelTable* experts =
      p.find_kernel("moe_experts", "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced", "bf16");
  ASSERT_NE(experts, nullptr);
  EXPECT_EQ(experts->axes[0].values, (std::vector<double>{8, 32, 64}));
  // The all-reduce and the all-to-all over the table's 8 GPUs.
  ASSERT_EQ(p.collectives.size(), 2u);
  EXPECT_EQ(p.collectives[0].collective, "all_reduce");
  EXPECT_EQ(p.collectives[1].collective, "all_to_all");
  for (const CollectiveFit& fit : p.collectives) {
    EXPECT_EQ(fit.ranks, 8);
    EXPECT_EQ(fit.level, "scaleup");
    EXPECT_EQ(fit.factor_bytes.size(), 10u);
  }
  // Residuals per family, in the order of kernel_specs() (the fused MoE kernel also per backend and
  // dtype), then the collectives'.
  std::vector<std::string> families;
  for (const FamilyResiduals& r : p.residuals) families.push_back(r.family);
  EXPECT_EQ(families, (std::vector<std::string>{"gemm", "moe_experts", "moe_experts:sglang_fused_moe:bf16",
                                                "mla_prefill", "mla_decode", "gqa_prefill", "gqa_decode",
                                                "deepep_ll_dispatch", "deepep_ll_combine",
                                                "deepep_normal_dispatch", "deepep_normal_combine", "nccl"}));
  EXPECT_GT(p.residuals[0].within_shape.samples, 0);
  EXPECT_GT(p.residuals[0].across_shapes.samples, 0) << "four GEMM shapes predict each other";
}

TEST(DatabaseImport, TheKernelTablesFollowTheMeasuredRows) {
  const TempDir tmp;
  const CalibrationProfile p = imported_fixture(tmp);
  // A smooth law measured at every other octave or so: the smoothed table passes within 2% of it.
  for (const auto& [n, k] : test::fixture_gemm_shapes()) {
    const KernelTable* table = p.find_kernel("gemm", fmt::format("n={} k={}", n, k), "bf16");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->implementation, "deep_gemm");
    const KernelTableLookup lookup(*table, "t", false);
    for (const double m : {1.0, 8.0, 64.0, 512.0, 4096.0}) {
      const double truth = test::fixture_gemm_ms(m, n, k) * 1e-3;
      EXPECT_NEAR(lookup.seconds(m), truth, 0.02 * truth) << n << " " << k << " " << m;
    }
  }
}

TEST(DatabaseImport, TheRooflineFiguresComeFromTheSameRows) {
  const TempDir tmp;
  const CalibrationProfile p = imported_fixture(tmp);
  // The fastest kernel measured: the one-token GEMM of the smallest shape.
  EXPECT_DOUBLE_EQ(p.kernel_overhead, test::fixture_gemm_ms(1, 1024, 8192) * 1e-3);
  // The fixture's GEMMs run at 600 TFLOP/s, beyond the H200's dense BF16 peak: capped at 1.
  EXPECT_EQ(p.gemm_efficiency, 1.0);
  EXPECT_EQ(p.collective_overhead, p.collectives[1].alpha) << "the all-to-all's";
  EXPECT_EQ(p.scaleup_efficiency, std::clamp(p.collectives[1].efficiency, 0.01, 1.0));
  const CalibrationProfile datasheet = CalibrationProfile::datasheet(h200());
  EXPECT_EQ(p.attention_efficiency, datasheet.attention_efficiency) << "no row measures it alone";
  EXPECT_EQ(p.memory_efficiency, datasheet.memory_efficiency);
}

TEST(DatabaseImport, ProvenanceSaysWhereEachRowWent) {
  const TempDir tmp;
  const CalibrationProfile p = imported_fixture(tmp, ".csv.gz");
  ASSERT_TRUE(p.provenance);
  const ProfileProvenance& from = *p.provenance;
  EXPECT_EQ(from.gpu, "NVIDIA H200");
  EXPECT_EQ(from.gpus, 8);
  EXPECT_EQ(from.nccl, "2.28.7");
  EXPECT_EQ(from.frameworks, "SGLang 0.5.0");
  EXPECT_EQ(from.database, "fixture 1");
  EXPECT_EQ(from.date, "2026-01-02");
  // Named by folder and file: the profile does not record where the folder was.
  const auto in_folder = [folder = std::filesystem::path(tmp / "x").parent_path().filename()](
                             const char* name) { return (folder / name).string(); };
  const std::string across_nodes = "DeepEP across nodes not imported (one node's tables only)";
  const std::vector<SourceTable> expected{
      {in_folder("gemm_perf.csv.gz"), 21, 20, 0, {{"dtype not modelled", 1}}},
      {in_folder("moe_perf.csv.gz"), 12, 12, 0, {}},
      {in_folder("context_mla_perf.csv.gz"), 6, 6, 0, {}},
      {in_folder("generation_mla_perf.csv.gz"), 6, 6, 0, {}},
      {in_folder("context_attention_perf.csv.gz"), 7, 6, 0, {{"beam search not modelled", 1}}},
      {in_folder("generation_attention_perf.csv.gz"), 6, 6, 0, {}},
      {in_folder("nccl_perf.csv.gz"), 20, 20, 0, {}},
      {in_folder("wideep_deepep_ll_perf.csv.gz"), 5, 4, 0, {{across_nodes, 1}}},
      {in_folder("wideep_deepep_normal_perf.csv.gz"), 5, 4, 0, {{across_nodes, 1}}}};
  EXPECT_EQ(from.tables, expected);
}

TEST(DatabaseImport, RepeatedRowsAreCountedAndAveraged) {
  const TempDir tmp;
  const std::string dir = tmp.path().string();
  // One shape, measured twice at 512 tokens: once 1.5x and once 1/1.5 of the law above the launch
  // floor (a share of the least time, at 1 token). The fit is least squares in log(time - floor), so
  // the two weigh as two rows at the law itself.
  auto rows = [](double above, double below) {
    std::vector<test::TableRow> rows;
    for (const double m : {1.0, 8.0, 64.0, 512.0, 4096.0})
      rows.push_back(
          {{"m", test::number(m)}, {"latency", test::number(test::fixture_gemm_ms(m, 4096, 4096))}});
    rows.push_back(rows[3]);
    const double floor = kLaunchFloorShare * test::fixture_gemm_ms(1, 4096, 4096);
    const double work = test::fixture_gemm_ms(512, 4096, 4096) - floor;
    rows[3]["latency"] = test::number(floor + work * above);
    rows[5]["latency"] = test::number(floor + work * below);
    return rows;
  };
  auto import = [&](const std::vector<test::TableRow>& table_rows) {
    return import_measured_tables(read_tables({test::write_table(dir, "gemm_perf", table_rows)}, true),
                                  h200(), {});
  };
  const CalibrationProfile repeated = import(rows(1.5, 1 / 1.5)), at_the_law = import(rows(1, 1));
  ASSERT_TRUE(repeated.provenance);
  EXPECT_EQ(repeated.provenance->tables[0].rows, 6);
  EXPECT_EQ(repeated.provenance->tables[0].used, 6);
  EXPECT_EQ(repeated.provenance->tables[0].repeats, 1);
  ASSERT_EQ(repeated.kernels.size(), 1u);
  ASSERT_EQ(at_the_law.kernels.size(), 1u);
  const KernelTable &a = repeated.kernels[0], &b = at_the_law.kernels[0];
  ASSERT_EQ(a.axes, b.axes);
  for (std::size_t i = 0; i < a.seconds.size(); ++i)
    EXPECT_NEAR(*a.seconds[i], *b.seconds[i], 1e-3 * *b.seconds[i]) << "tables keep 4 significant digits";
}

TEST(DatabaseImport, OfTritonsTwoWaysOverAnFp8CacheTheDequantisingOneIsKept) {
  const TempDir tmp;
  std::vector<test::TableRow> rows;
  for (const std::string compute : {"bfloat16", "fp8"})
    for (const std::string batch : {"1", "2"})  // a table of two axes has two rows at least
      for (const double isl : {128.0, 512.0, 2048.0})
        rows.push_back({{"kernel_source", "triton"},
                        {"attn_dtype", compute},
                        {"kv_cache_dtype", "fp8"},
                        {"batch_size", batch},
                        {"isl", test::number(isl)},
                        {"latency", test::number(isl * (compute == "fp8" ? 1e-4 : 2e-4))}});
  const CalibrationProfile p = import_measured_tables(
      read_tables({test::write_table(tmp.path().string(), "context_attention_perf", rows)}), h200(), {});
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].implementation, "triton");
  EXPECT_NEAR(*p.kernels[0].seconds.back(), 2048 * 2e-7, 1e-2 * 2048 * 2e-7) << "the BF16-compute rows";
  EXPECT_EQ(p.provenance->tables[0].skipped,
            (std::map<std::string, int>{{"another implementation of the shape kept", 6}}));
}

// Blackwell's FP4 rows, written here as a B200's tables: NVFP4 GEMMs, NVFP4 MoE and the two MXFP4
// MoE kernels become tables of their own dtype (the MXFP8-activation MXFP4 kernel kept), priced
// beside BF16's by the same library.
TEST(DatabaseImport, Fp4RowsBecomeTablesOfTheirDtype) {
  const TempDir tmp;
  const std::string dir = tmp.path().string();
  const Device& b200 = test::b200();
  std::vector<test::TableRow> gemm, moe;
  for (const std::string dtype : {"bfloat16", "nvfp4"})
    for (const double m : {1.0, 8.0, 64.0, 512.0, 4096.0})
      gemm.push_back(
          {{"device", "NVIDIA B200"},
           {"kernel_source", dtype == "nvfp4" ? "sglang_flashinfer_cutedsl_nvfp4" : "sglang_torch_linear"},
           {"gemm_dtype", dtype},
           {"m", test::number(m)},
           {"latency", test::number(test::fixture_gemm_ms(m, 4096, 4096) / (dtype == "nvfp4" ? 3 : 1))}});
  // (dtype, kernel, time scale): the MXFP4 shape timed by two kernels, BF16 activations the slower.
  const std::vector<std::tuple<std::string, std::string, double>> kernels{
      {"nvfp4", "sglang_flashinfer_trtllm_moe", 1.0},
      {"w4a8_mxfp4_mxfp8", "sglang_flashinfer_trtllm_moe", 1.2},
      {"w4a16_mxfp4", "sglang_flashinfer_trtllm_moe", 2.0}};
  for (const auto& [dtype, kernel, scale] : kernels)
    for (const int ep : {1, 8})  // two rows of local experts: 64 and 8
      for (const int tokens : {1, 16, 128, 1024})
        moe.push_back({{"device", "NVIDIA B200"},
                       {"kernel_source", kernel},
                       {"moe_dtype", dtype},
                       {"moe_ep_size", test::number(ep)},
                       {"num_tokens", test::number(tokens)},
                       {"latency", test::number(scale * (8 + 32.0 / ep + tokens * 6.0 / ep * 0.02) * 1e-3)}});
  // A shape measured at one EP size only: one row of local experts is no table (an axis has two values).
  for (const int tokens : {1, 16, 128, 1024})
    moe.push_back({{"device", "NVIDIA B200"},
                   {"moe_dtype", "nvfp4"},
                   {"hidden_size", "4096"},
                   {"num_tokens", test::number(tokens)},
                   {"latency", test::number((8 + tokens * 0.1) * 1e-3)}});
  const CalibrationProfile p = import_measured_tables(
      read_tables({test::write_table(dir, "gemm_perf", gemm), test::write_table(dir, "moe_perf", moe)}), b200,
      {});
  const std::string experts = "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced";
  ASSERT_NE(p.find_kernel("gemm", "n=4096 k=4096", "nvfp4"), nullptr);
  ASSERT_NE(p.find_kernel("moe_experts", experts, "nvfp4"), nullptr);
  const KernelTable* mxfp4 = p.find_kernel("moe_experts", experts, "mxfp4");
  ASSERT_NE(mxfp4, nullptr);
  EXPECT_EQ(mxfp4->implementation, "sglang_flashinfer_trtllm_moe") << "MXFP8 activations kept";
  EXPECT_EQ(p.provenance->tables[1].skipped,
            (std::map<std::string, int>{{"another implementation of the shape kept", 8},
                                        {"too few points for a curve", 4}}));
  const KernelLibrary library(p, b200, false);
  EXPECT_EQ(library.dtypes("gemm"), (std::vector<std::string>{"bf16", "nvfp4"}));
  EXPECT_EQ(library.dtypes("moe_experts"), (std::vector<std::string>{"mxfp4", "nvfp4"}));
  const double bf16 = library.curve("gemm", "n=4096 k=4096", "bf16")->seconds(512);
  EXPECT_NEAR(library.curve("gemm", "n=4096 k=4096", "nvfp4")->seconds(512), bf16 / 3, 0.05 * bf16 / 3);
}

TEST(DatabaseImport, TablesOfAnotherGpuAreRefused) {
  const TempDir tmp;
  std::vector<test::TableRow> rows = test::fixture_rows("gemm_perf");
  for (test::TableRow& row : rows) row["device"] = "NVIDIA A100-SXM4-80GB";
  const std::string path = test::write_table(tmp.path().string(), "gemm_perf", rows);
  try {
    import_measured_tables(read_tables({path}), h200(), {});
    FAIL() << "imported A100 tables as the H200's";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find(path + ": measured on 'NVIDIA A100-SXM4-80GB' (a100-sxm-80gb), not on"),
        std::string::npos)
        << e.what();
  }
}

TEST(DatabaseImport, AnNcclTestsLogBecomesACollectiveFit) {
  const TempDir tmp;
  const std::string path = tmp / "alltoall.log";
  test::write_text(path, test::nccl_tests_log("alltoall_perf", 8));
  const CalibrationProfile p =
      import_measured_tables({read_nccl_tests_log(path)}, h200(), {"", "nccl-tests", "", 5});
  EXPECT_TRUE(p.kernels.empty());
  ASSERT_EQ(p.collectives.size(), 1u);
  EXPECT_EQ(p.collectives[0].collective, "all_to_all");
  EXPECT_EQ(p.collectives[0].ranks, 8);
  EXPECT_EQ(p.collective_overhead, p.collectives[0].alpha);
  EXPECT_EQ(p.kernel_overhead, CalibrationProfile::datasheet(h200()).kernel_overhead) << "no kernel measured";
  ASSERT_TRUE(p.provenance);
  EXPECT_EQ(p.provenance->nccl, "2.28.7");
  EXPECT_EQ(p.provenance->gpu, "NVIDIA H200");
  const std::string named = std::filesystem::path(path).parent_path().filename() / "alltoall.log";
  EXPECT_EQ(p.provenance->tables, (std::vector<SourceTable>{{named, 10, 9, 0, {{"empty message", 1}}}}));
  ASSERT_EQ(p.residuals.size(), 1u);
  EXPECT_EQ(p.residuals[0].family, "nccl");
  EXPECT_EQ(p.residuals[0].within_shape.samples, 7) << "every size but the ends";
}

TEST(DatabaseImport, AnImportedProfileRoundTripsThroughYamlExactly) {
  const TempDir tmp;
  std::vector<std::string> paths =
      test::write_fixture_tables(tmp.path().string(), aiconfigurator_table_kinds());
  // A repeated row, so that the provenance has repeats to write.
  test::write_table(tmp.path().string(), "gemm_perf", [] {
    auto rows = test::fixture_rows("gemm_perf");
    rows.push_back(rows[0]);
    return rows;
  }());
  const std::string log = tmp / "all_gather_perf.log";
  test::write_text(log, test::nccl_tests_log("", 4));
  std::vector<MeasuredTable> tables = read_tables(paths, true);
  tables.push_back(read_nccl_tests_log(log));
  const CalibrationProfile imported =
      import_measured_tables(tables, h200(), {"round-trip", "fixture", "", 5});
  ASSERT_TRUE(imported.provenance);
  EXPECT_EQ(imported.provenance->tables[0].repeats, 1);
  const std::string text = imported.to_yaml();
  const CalibrationProfile back =
      CalibrationProfile::from_yaml(YamlInput::parse(text, "round-trip.yaml"), h200());
  EXPECT_EQ(test::without_table_lines(back), imported) << text;
  EXPECT_EQ(back.to_yaml(), text);
}

// The project's own microbenchmarks and a database measure the same GEMMs: written as the suite's
// raw results (semsim calibrate --from-raw) and as a database table (semsim calibrate import), they
// make the same kernel tables, and the engine prices the operators made of them the same.
TEST(DatabaseImport, ASuitesRawResultsAndADatabaseTableDriveTheEngineTheSame) {
  TempDir database, raw;
  test::write_table(database.path().string(), "gemm_perf", test::fixture_rows("gemm_perf"));
  const CalibrationProfile imported =
      import_measured_tables(read_tables({database.path().string() + "/gemm_perf.csv"}), h200(), {});

  test::write_text(raw.path().string() + "/environment.csv", "key,value\ngpu,NVIDIA H200\ngpus,8\n");
  std::string kernels =
      "kernel,shape,dtype,implementation,variant,x,y,seconds,p10,p90,trials,launches,status\n";
  for (const test::TableRow& row : test::fixture_rows("gemm_perf")) {
    if (row.contains("gemm_dtype") && row.at("gemm_dtype") != "bfloat16") continue;
    const double seconds = std::stod(row.at("latency")) * 1e-3;
    kernels += fmt::format("gemm,n={} k={},bf16,cublas,grid,{},0,{},{},{},5,1,ok\n", row.at("n"), row.at("k"),
                           row.at("m"), test::number(seconds), test::number(seconds), test::number(seconds));
  }
  test::write_text(raw.path().string() + "/kernels.csv", kernels);
  const CalibrationProfile suite = fit_measured_profile(raw.path().string(), h200());

  std::size_t compared = 0;
  for (const KernelTable& table : imported.kernels) {
    if (table.kernel != "gemm" || table.dtype != "bf16") continue;
    const KernelTable* same = suite.find_kernel("gemm", table.shape, "bf16");
    ASSERT_NE(same, nullptr) << table.shape;
    EXPECT_EQ(same->axes, table.axes) << table.shape;
    EXPECT_EQ(same->seconds, table.seconds) << table.shape;
    ++compared;
  }
  EXPECT_EQ(compared, test::fixture_gemm_shapes().size());
  // What the engine asks for DeepSeek-V2-Lite's LM head (calibrated_cost_model.cpp composes it of
  // this GEMM), and for a shape between the measured ones.
  const KernelLibrary from_database(imported, h200(), false), from_suite(suite, h200(), false);
  for (const std::string shape : {"n=102400 k=2048", "n=6144 k=3072"}) {
    const auto a = from_database.curve("gemm", shape, "bf16"), b = from_suite.curve("gemm", shape, "bf16");
    ASSERT_TRUE(a && b) << shape;
    for (const double tokens : {1.0, 7.0, 64.0, 1000.0, 4096.0})
      EXPECT_EQ(a->seconds(tokens), b->seconds(tokens));
  }
}

}  // namespace
}  // namespace semsim
