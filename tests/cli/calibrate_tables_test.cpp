// `semsim calibrate import | predict | coverage` end to end on fixture tables the tests write: the
// profile the CLI writes is the importer's, nothing is written on a bad table, predict prints every
// row with the engine's own times, and coverage says what each operator is priced from.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/import/aiconfigurator_tables.hpp"
#include "calibrate/import/database_import.hpp"
#include "cli_runner.hpp"
#include "models/csv.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "tests/calibrate/profile_lines.hpp"
#include "tests/calibrate/table_fixtures.hpp"
#include "tests/preset_fixtures.hpp"

namespace semsim::cli_test {
namespace {

using test::h200;

CalibrationProfile read_profile(const std::string& path) {
  return CalibrationProfile::from_yaml(YamlInput::load_file(path), h200());
}

// `semsim calibrate import --from aiconfigurator DIR --device h200-sxm --out OUT [extra...]`.
CliResult import_folder(const std::string& dir, const std::string& out,
                        const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"calibrate", "import", "--from", "aiconfigurator", dir, "--device",
                                "h200-sxm",  "--out",  out};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_semsim(args);
}

// The fixture tables of `kinds` in TMP/db, imported by the CLI into TMP/profile.yaml (its path).
std::string imported_profile(const TempDir& tmp, const std::vector<std::string>& kinds) {
  fs::create_directory(tmp / "db");
  test::write_fixture_tables(tmp / "db", kinds);
  const std::string out = tmp / "profile.yaml";
  const CliResult r = import_folder(tmp / "db", out);
  EXPECT_EQ(r.exit_code, 0) << describe({"calibrate", "import"}, r);
  return out;
}

// Exit code 2 and one "error: " line on stderr that starts with `message`.
void expect_error(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto lines = split_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_TRUE(lines[0].starts_with("error: " + message)) << lines[0] << "\nexpected: " << message;
}

TEST(cliCalibrateTables, ImportWritesTheImportersProfile) {
  TempDir tmp;
  fs::create_directory(tmp / "db");
  // gzip and plain tables side by side.
  std::vector<std::string> paths;
  for (const std::string& kind : aiconfigurator_table_kinds())
    paths.push_back(test::write_table(tmp / "db", kind, test::fixture_rows(kind),
                                      kind.find("mla") != std::string::npos ? ".csv" : ".csv.gz"));
  const std::string out = tmp / "profile.yaml";
  const CliResult r = import_folder(tmp / "db", out);
  ASSERT_EQ(r.exit_code, 0) << describe({"calibrate", "import"}, r);
  EXPECT_NE(
      r.out.find("profile h200-sxm-measured for h200-sxm: 13 kernel tables, 2 collective fits from 9 tables"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Wrote " + out), std::string::npos) << r.out;
  std::vector<MeasuredTable> tables;
  for (const std::string& path : paths) tables.push_back(read_aiconfigurator_table(path));
  EXPECT_EQ(test::without_table_lines(read_profile(out)),
            import_measured_tables(tables, h200(), {"", "aiconfigurator", "", 5}));
}

TEST(cliCalibrateTables, ImportRefusesABadTableAndWritesNothing) {
  TempDir tmp;
  fs::create_directory(tmp / "db");
  fs::create_directory(tmp / "profiles");
  test::write_fixture_tables(tmp / "db", {"moe_perf", "nccl_perf"});
  std::vector<test::TableRow> rows = test::fixture_rows("gemm_perf");
  rows[3]["latency"] = "-1";
  const std::string bad = test::write_table(tmp / "db", "gemm_perf", rows);
  const std::string line = test::table_line("gemm_perf", rows[3]);
  const CliResult r = import_folder(tmp / "db", tmp / "profiles/profile.yaml");
  expect_error(
      r, fmt::format("{}:5:{}: column 'latency': expected a positive number in [1e-09, 1e+21] (ms), got -1",
                     bad, line.rfind(',') + 2));
  EXPECT_EQ(entries_under(tmp / "profiles"), std::vector<std::string>{}) << "no profile, no partial file";
}

TEST(cliCalibrateTables, RepeatedRowsNeedTheFlagAndAreCounted) {
  TempDir tmp;
  fs::create_directory(tmp / "db");
  std::vector<test::TableRow> rows = test::fixture_rows("gemm_perf");
  rows.push_back(rows[2]);
  test::write_table(tmp / "db", "gemm_perf", rows);
  const std::string out = tmp / "profile.yaml";
  const CliResult refused = import_folder(tmp / "db", out);
  expect_error(refused, tmp / "db/gemm_perf.csv:23:");
  EXPECT_NE(refused.err.find("import with --repeats to average them"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(out));

  const CliResult accepted = import_folder(tmp / "db", out, {"--repeats"});
  ASSERT_EQ(accepted.exit_code, 0) << describe({"calibrate", "import", "--repeats"}, accepted);
  const CalibrationProfile profile = read_profile(out);
  ASSERT_TRUE(profile.provenance);
  ASSERT_EQ(profile.provenance->tables.size(), 1u);
  EXPECT_EQ(profile.provenance->tables[0].rows, 22);
  EXPECT_EQ(profile.provenance->tables[0].repeats, 1);
}

TEST(cliCalibrateTables, ImportReadsNcclTestsLogs) {
  TempDir tmp;
  test::write_text(tmp / "alltoall_perf.log", test::nccl_tests_log("alltoall_perf", 8));
  test::write_text(tmp / "all_reduce.log.gz", test::nccl_tests_log("all_reduce_perf", 8));
  const std::string out = tmp / "profile.yaml";
  const std::vector<std::string> args{
      "calibrate", "import",   "--from", "nccl-tests", tmp / "alltoall_perf.log", tmp / "all_reduce.log.gz",
      "--device",  "h200-sxm", "--out",  out};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const CalibrationProfile profile = read_profile(out);
  ASSERT_EQ(profile.collectives.size(), 2u);
  EXPECT_EQ(profile.collectives[0].collective, "all_reduce");
  EXPECT_EQ(profile.collectives[1].collective, "all_to_all");
  EXPECT_EQ(profile.provenance->nccl, "2.28.7");
  EXPECT_EQ(profile.provenance->database, "nccl-tests");
}

// `semsim calibrate predict PROFILE TABLE`, its CSV as rows of fields, header first.
std::vector<std::vector<std::string>> predict(const std::string& profile, const std::string& table) {
  const std::vector<std::string> args{"calibrate", "predict", profile, table};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : split_lines(r.out)) rows.push_back(split_csv_line(line));
  return rows;
}

TEST(cliCalibrateTables, PredictPrintsEveryRowWithTheExtraColumns) {
  TempDir tmp;
  const std::string profile = imported_profile(tmp, aiconfigurator_table_kinds());
  for (const std::string& kind : aiconfigurator_table_kinds()) {
    SCOPED_TRACE(kind);
    const auto rows = predict(profile, tmp / ("db/" + kind + ".csv"));
    const bool deepep = kind.starts_with("wideep_");
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(csv_line(rows[0]), test::table_header(kind) + (deepep ? ",phase" : "") +
                                     ",measured_us,predicted_us,relative_error,in_profile,no_prediction");
    // One line per row, DeepEP's two per row (dispatch, combine) where it models the row.
    std::vector<std::string> expected_lines;
    for (const test::TableRow& row : test::fixture_rows(kind)) {
      const bool modelled =
          !(row.contains("gemm_dtype") || row.contains("beam_width") || row.contains("node_num"));
      for (int phase = 0; phase < (deepep && modelled ? 2 : 1); ++phase)
        expected_lines.push_back(test::table_line(kind, row));
    }
    ASSERT_EQ(rows.size(), expected_lines.size() + 1);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const std::vector<std::string>& fields = rows[i];
      const std::size_t columns = test::table_columns(kind).size();
      ASSERT_EQ(fields.size(), columns + (deepep ? 6 : 5));
      EXPECT_EQ(csv_line({fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(columns)}),
                expected_lines[i - 1]);
      const bool modelled = !fields[columns + (deepep ? 1 : 0)].empty();
      if (deepep && modelled) {
        EXPECT_EQ(fields[columns], i % 2 == 1 ? "dispatch" : "combine");
      }
      const std::string& predicted = fields[fields.size() - 4];
      EXPECT_EQ(fields[fields.size() - 3].empty(), predicted.empty()) << "error where predicted";
      EXPECT_EQ(fields[fields.size() - 2].empty(), predicted.empty()) << "in_profile where predicted";
      EXPECT_EQ(fields.back().empty(), !predicted.empty()) << "a reason where not predicted";
      EXPECT_EQ(predicted.empty(), !modelled) << csv_line(fields);
    }
  }
}

TEST(cliCalibrateTables, PredictGivesTheEnginesOwnGemmTimes) {
  TempDir tmp;
  const std::string profile_path = imported_profile(tmp, {"gemm_perf"});
  const CalibrationProfile profile = read_profile(profile_path);
  const KernelLibrary library(profile, h200(), /*allow_extrapolation=*/true);
  const MoeModel v2 = model_preset("deepseek-v2-lite");
  const CalibratedCostModel engine(v2, h200(), profile, Precision{}, /*allow_extrapolation=*/true);
  const std::string head = fmt::format("n={} k={}", lm_head_gemm(v2).n, lm_head_gemm(v2).k);
  const auto rows = predict(profile_path, tmp / "db/gemm_perf.csv");
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
  };
  int head_rows = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string>& row = rows[i];
    if (row[column("gemm_dtype")] != "bfloat16") continue;
    const double m = std::stod(row[column("m")]);
    const std::string shape = fmt::format("n={} k={}", row[column("n")], row[column("k")]);
    const double predicted = std::stod(row[column("predicted_us")]) * 1e-6;
    // Printed to 6 significant digits: within half a unit of the 6th.
    const double curve = library.curve("gemm", shape, "bf16")->seconds(m);
    EXPECT_NEAR(predicted, curve, 5e-6 * curve) << shape << " m=" << m;
    if (shape != head) continue;
    ++head_rows;
    EXPECT_NEAR(predicted, engine.lm_head(static_cast<long long>(m)), 5e-6 * curve) << "m=" << m;
  }
  EXPECT_EQ(head_rows, 5);
}

// Predict flags the rows the profile was fitted on (in_profile 1) and scores the others in its
// summary per family; a row it cannot predict says why (the dtype it does not model); a table
// measured on another device is refused unless --any-device.
TEST(cliCalibrateTables, PredictFlagsFittedRowsSummarisesAndRefusesAnotherDevice) {
  TempDir tmp;
  const std::string profile = imported_profile(tmp, {"gemm_perf"});
  fs::create_directory(tmp / "held");
  const auto [n, k] = test::fixture_gemm_shapes()[1];
  std::vector<test::TableRow> rows;
  for (const long long m : {8, 24, 96})  // 8 is on the profile's grid; 24 and 96 are not
    rows.push_back({{"m", test::number(m)},
                    {"n", test::number(n)},
                    {"k", test::number(k)},
                    {"latency", test::number(test::fixture_gemm_ms(m, n, k) * 1.1)}});
  rows.push_back({{"gemm_dtype", "int4_wo"}, {"m", "8"}});
  const std::string table = test::write_table(tmp / "held", "gemm_perf", rows);
  const std::vector<std::string> args{"calibrate", "predict", profile, table};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  auto tail = [](const std::string& line, int fields) {
    const std::vector<std::string> all = split_csv_line(line);
    return std::vector<std::string>(all.end() - fields, all.end());
  };
  EXPECT_EQ(tail(lines[1], 2), (std::vector<std::string>{"1", ""})) << lines[1];
  EXPECT_EQ(tail(lines[2], 2), (std::vector<std::string>{"0", ""})) << lines[2];
  EXPECT_EQ(tail(lines[3], 2), (std::vector<std::string>{"0", ""})) << lines[3];
  EXPECT_EQ(tail(lines[4], 5),
            (std::vector<std::string>{"", "", "", "", "dtype not modelled (gemm_dtype int4_wo)"}))
      << lines[4];
  // The summary: the family's rows, and the median and p90 |error| of the two it never saw.
  auto error_of = [](const std::string& line) {
    const std::vector<std::string> fields = split_csv_line(line);
    return std::abs(std::stod(fields.at(fields.size() - 3)));
  };
  const double low = std::min(error_of(lines[2]), error_of(lines[3]));
  const double high = std::max(error_of(lines[2]), error_of(lines[3]));
  EXPECT_NE(r.err.find(fmt::format("  {:<24} {:>8} {:>10} {:>11} {:>8} {:>8}\n", "gemm", 3, 3, 1,
                                   fmt::format("{:.1f}%", 50 * (low + high)),
                                   fmt::format("{:.1f}%", 100 * (low + 0.9 * (high - low))))),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: 1 rows are in the profile's own tables (in_profile 1)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no prediction for 1 rows: dtype not modelled (gemm_dtype int4_wo)"),
            std::string::npos)
      << r.err;

  for (test::TableRow& row : rows) row["device"] = "NVIDIA H100 80GB HBM3";
  test::write_table(tmp / "held", "gemm_perf", rows);
  expect_error(run_semsim(args), table +
                                     ": measured on 'NVIDIA H100 80GB HBM3', but profile 'h200-sxm-measured' "
                                     "is for h200-sxm (measured on 'NVIDIA H200')");
  std::vector<std::string> anyway = args;
  anyway.push_back("--any-device");
  EXPECT_EQ(run_semsim(anyway).exit_code, 0);
}

// `measured` (and `datasheet --device`) name the embedded profiles as a scenario's calibration
// does; residuals print n/a where a family has no error of a kind, never a 0 that reads as a fit.
TEST(cliCalibrateTables, EmbeddedProfilesByNameAndResidualsWithoutAnErrorAreNa) {
  const CliResult coverage = run_semsim({"calibrate", "coverage", "measured"});
  ASSERT_EQ(coverage.exit_code, 0) << coverage.err;
  // Every device with a measured profile, in the presets' order.
  EXPECT_TRUE(coverage.out.starts_with("profile b200-measured (measured) on b200\n")) << coverage.out;
  for (const std::string device : {"gb200", "h100-sxm", "h200-sxm"})
    EXPECT_NE(coverage.out.find(fmt::format("\nprofile {0}-measured (measured) on {0}\n", device)),
              std::string::npos)
        << device;
  const CliResult datasheet = run_semsim({"calibrate", "coverage", "datasheet", "--device", "h800-sxm"});
  ASSERT_EQ(datasheet.exit_code, 0) << datasheet.err;
  EXPECT_TRUE(datasheet.out.starts_with(
      "profile h800-sxm-datasheet (datasheet only: no kernel of h800-sxm was measured; every time "
      "is a roofline over its datasheet figures) on h800-sxm\n"))
      << datasheet.out;
  expect_error(run_semsim({"calibrate", "coverage", "datasheet"}), "datasheet: give --device PRESET");

  const CliResult residuals = run_semsim({"calibrate", "residuals", "measured", "--device", "h200-sxm"});
  ASSERT_EQ(residuals.exit_code, 0) << residuals.err;
  const auto lines = split_lines(residuals.out);
  const auto nccl = std::find_if(lines.begin(), lines.end(),
                                 [](const std::string& line) { return line.starts_with("h200-sxm,nccl,"); });
  ASSERT_NE(nccl, lines.end()) << residuals.out;
  EXPECT_TRUE(nccl->ends_with(",n/a,n/a,0,n/a")) << *nccl;
  for (const std::string& line : lines) EXPECT_EQ(line.find(",0,0,0"), std::string::npos) << line;
  // The fused MoE kernel's per-backend families, each at the family's pooling weight.
  auto weight_of = [&](const std::string& family) {
    const auto line = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.starts_with("h200-sxm," + family + ",");
    });
    return line == lines.end() ? std::string("missing") : line->substr(line->rfind(',') + 1);
  };
  EXPECT_EQ(weight_of("moe_experts:sglang_fused_moe_triton:bf16"), weight_of("moe_experts")) << residuals.out;
  EXPECT_EQ(weight_of("moe_experts:sglang_flashinfer_cutlass_moe:bf16"), weight_of("moe_experts"));
  EXPECT_NE(weight_of("moe_experts"), "0");
}

// The lines of `semsim calibrate coverage` under "MODEL (WEIGHTS weights)": operator -> coverage.
std::map<std::string, std::string> coverage_of(const std::string& out, const std::string& block) {
  std::map<std::string, std::string> operators;
  const auto lines = split_lines(out);
  auto at = std::find(lines.begin(), lines.end(), block);
  EXPECT_NE(at, lines.end()) << block << " missing from:\n" << out;
  for (++at; at < lines.end() && !at->empty(); ++at) {
    auto trimmed = [](std::string text) { return text.substr(0, text.find_last_not_of(' ') + 1); };
    operators[trimmed(at->substr(2, 22))] = trimmed(at->substr(25, 12));
  }
  return operators;
}

TEST(cliCalibrateTables, CoverageSaysWhatEachOperatorIsPricedFrom) {
  TempDir tmp;
  // GEMMs of DeepSeek-V2-Lite's LM head and of three other shapes, its fused experts, and MLA
  // prefill at its 16 heads; no decode table.
  const std::string profile = imported_profile(tmp, {"gemm_perf", "moe_perf", "context_mla_perf"});
  const std::vector<std::string> args{"calibrate", "coverage", profile};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_TRUE(r.out.starts_with("profile h200-sxm-measured (measured) on h200-sxm\n")) << r.out;
  EXPECT_EQ(coverage_of(r.out, "deepseek-v2-lite (BF16 weights)"),
            (std::map<std::string, std::string>{{"attention projections", "interpolated"},
                                                {"attention decode", "roofline"},
                                                {"attention prefill", "measured"},
                                                {"router", "interpolated"},
                                                {"routed experts", "measured"},
                                                {"shared experts", "interpolated"},
                                                {"dense FFN", "interpolated"},
                                                {"LM head", "measured"},
                                                {"elementwise kernels", "roofline"}}));
  // FP8 weights: no FP8 GEMM or expert table, so their operators fall back to the roofline; the
  // router and the LM head stay in BF16.
  EXPECT_EQ(coverage_of(r.out, "deepseek-v2-lite (FP8 weights)"),
            (std::map<std::string, std::string>{{"attention projections", "roofline"},
                                                {"attention decode", "roofline"},
                                                {"attention prefill", "measured"},
                                                {"router", "interpolated"},
                                                {"routed experts", "roofline"},
                                                {"shared experts", "roofline"},
                                                {"dense FFN", "roofline"},
                                                {"LM head", "measured"},
                                                {"elementwise kernels", "roofline"}}));
}

// A dense model on the embedded H100 and H200 measurements: at every TP size its shard's GEMMs and
// GQA attention come from the measured tables (some shapes interpolated across the measured ones),
// none from the roofline (but the elementwise kernels, in no table); it has no router and no experts to
// price.
TEST(cliCalibrateTables, ADenseModelsShardsArePricedFromTheMeasuredTables) {
  for (const char* profile : {"h100-sxm-measured.yaml", "h200-sxm-measured.yaml"}) {
    const std::vector<std::string> args{"calibrate", "coverage",
                                        std::string(SEMSIM_SOURCE_DIR) + "/calibrate/profiles/" + profile};
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    for (const char* tp : {"", " TP2", " TP4", " TP8"}) {
      const auto operators = coverage_of(r.out, std::string("qwen3-32b") + tp + " (BF16 weights)");
      EXPECT_EQ(operators.size(), 6u) << profile << tp;  // and the elementwise kernels: no table has them
      EXPECT_EQ(operators.at("elementwise kernels"), "roofline");
      for (const char* op :
           {"attention projections", "attention decode", "attention prefill", "dense FFN", "LM head"}) {
        ASSERT_TRUE(operators.contains(op)) << profile << tp << " " << op;
        EXPECT_NE(operators.at(op), "roofline") << profile << tp << " " << op;
      }
    }
  }
}

}  // namespace
}  // namespace semsim::cli_test
