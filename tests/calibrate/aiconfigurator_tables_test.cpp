// aiconfigurator's per-kernel tables, plain and gzip: what each kind's row measures on the
// simulator's axes, the rows it does not model, and one located error for each malformed table.
#include "calibrate/import/aiconfigurator_tables.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../cli/cli_runner.hpp"
#include "calibrate/import/database_import.hpp"
#include "models/input_error.hpp"
#include "tests/calibrate/table_fixtures.hpp"

namespace semsim {
namespace {

using cli_test::TempDir;
using test::TableRow;

// The message of the InputError reading `path` throws ("" when it reads).
std::string read_error(const std::string& path, bool allow_repeats = false) {
  try {
    read_aiconfigurator_table(path, allow_repeats);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The 1-based character at which field `column` of table `kind` starts in `line`.
std::size_t character_of(const std::string& kind, const std::string& line, const std::string& column) {
  const auto& columns = test::table_columns(kind);
  std::size_t at = 0;
  for (std::size_t i = 0; columns[i].first != column; ++i) at = line.find(',', at) + 1;
  return at + 1;
}

struct ExpectedPoint {
  std::string kernel, shape, dtype;
  double x = 0, y = 0, seconds = 0;
  std::string phase = "";
  int ranks = 0;
};

struct KindCase {
  std::string name;
  std::string kind;
  TableRow row;
  std::vector<ExpectedPoint> points;
};

void PrintTo(const KindCase& c, std::ostream* os) {
  *os << c.name;
}

class TableKind : public testing::TestWithParam<KindCase> {};

TEST_P(TableKind, ARowBecomesThePointsItMeasuresPlainOrGzip) {
  const KindCase& c = GetParam();
  for (const std::string suffix : {".csv", ".csv.gz"}) {
    SCOPED_TRACE(suffix);
    const TempDir tmp;
    const MeasuredTable table =
        read_aiconfigurator_table(test::write_table(tmp.path().string(), c.kind, {c.row}, suffix));
    EXPECT_EQ(table.kind, c.kind);
    ASSERT_EQ(table.rows.size(), 1u);
    const MeasuredRow& row = table.rows[0];
    EXPECT_EQ(row.line, 2);
    EXPECT_EQ(row.skipped, "");
    EXPECT_EQ(fmt::format("{}", fmt::join(row.fields, ",")), test::table_line(c.kind, c.row));
    ASSERT_EQ(row.points.size(), c.points.size());
    for (std::size_t i = 0; i < c.points.size(); ++i) {
      const MeasuredPoint& p = row.points[i];
      const ExpectedPoint& e = c.points[i];
      EXPECT_EQ(p.kernel, e.kernel);
      EXPECT_EQ(p.shape, e.shape);
      EXPECT_EQ(p.dtype, e.dtype);
      EXPECT_EQ(p.phase, e.phase);
      EXPECT_EQ(p.x, e.x);
      EXPECT_EQ(p.y, e.y);
      EXPECT_EQ(p.ranks, e.ranks);
      EXPECT_DOUBLE_EQ(p.seconds, e.seconds);
      EXPECT_EQ(p.implementation, test::table_columns(c.kind)[4].second);
    }
    EXPECT_EQ(table.provenance.at("framework"), std::vector<std::string>{"SGLang"});
    EXPECT_EQ(table.provenance.at("device"), std::vector<std::string>{"NVIDIA H200"});
  }
}

const std::string kGqaShape = "heads=32 kv_heads=4 head_dim=128 window=";

INSTANTIATE_TEST_SUITE_P(
    AiconfiguratorTables, TableKind,
    testing::Values(
        KindCase{"Gemm",
                 "gemm_perf",
                 {{"m", "16"}, {"n", "4096"}, {"k", "7168"}, {"latency", "0.05"}},
                 {{"gemm", "n=4096 k=7168", "bf16", 16, 0, 5e-5}}},
        KindCase{"GemmBlockFp8",
                 "gemm_perf",
                 {{"gemm_dtype", "fp8_block"}, {"m", "2"}, {"latency", "0.02"}},
                 {{"gemm", "n=4096 k=4096", "fp8_block", 2, 0, 2e-5}}},
        // One rank of EP 1 computes every token's top-6 slots over all 64 experts.
        KindCase{"MoeBalanced",
                 "moe_perf",
                 {{"num_tokens", "64"}, {"latency", "0.2"}},
                 {{"moe_experts", "hidden=2048 ffn=1408 experts=64 top_k=6 distribution=balanced", "bf16", 64,
                   64 * 6, 2e-4}}},
        // Power-law routing: the group's mean, 64 x 6 / 8 slots over 64 / 8 experts of 1408 / 2 each.
        KindCase{"MoePowerLawOverEpAndTp",
                 "moe_perf",
                 {{"num_tokens", "64"},
                  {"moe_ep_size", "8"},
                  {"moe_tp_size", "2"},
                  {"distribution", "power_law_1.2"},
                  {"latency", "0.1"}},
                 {{"moe_experts", "hidden=2048 ffn=704 experts=64 top_k=6 distribution=power_law_1.2", "bf16",
                   8, 48, 1e-4}}},
        // Balanced top-1 of 2 tokens over 4 experts on 4 ranks: token 0 goes to expert 0 (rank 0's),
        // token 1 to expert 2: one slot reaches rank 0.
        KindCase{"MoeBalancedCountsTheSlotsReachingRankZero",
                 "moe_perf",
                 {{"num_tokens", "2"},
                  {"topk", "1"},
                  {"num_experts", "4"},
                  {"moe_ep_size", "4"},
                  {"latency", "0.01"}},
                 {{"moe_experts", "hidden=2048 ffn=1408 experts=4 top_k=1 distribution=balanced", "bf16", 1,
                   1, 1e-5}}},
        KindCase{"ContextMla",
                 "context_mla_perf",
                 {{"batch_size", "4"}, {"isl", "1024"}, {"kv_cache_dtype", "fp8"}, {"latency", "0.3"}},
                 {{"mla_prefill", "heads=16", "fp8", 4, 1024, 3e-4}}},
        // Decode step 3 after a 1024-token prompt attends 1027 tokens.
        KindCase{"GenerationMla",
                 "generation_mla_perf",
                 {{"batch_size", "8"}, {"isl", "1024"}, {"step", "3"}, {"latency", "0.04"}},
                 {{"mla_decode", "heads=16", "bf16", 8, 1027, 4e-5}}},
        KindCase{"ContextAttentionWithAWindow",
                 "context_attention_perf",
                 {{"batch_size", "2"}, {"isl", "512"}, {"window_size", "128"}, {"latency", "0.06"}},
                 {{"gqa_prefill", kGqaShape + "128", "bf16", 2, 512, 6e-5}}},
        KindCase{"GenerationAttentionFp8",
                 "generation_attention_perf",
                 {{"batch_size", "8"},
                  {"isl", "1000"},
                  {"step", "24"},
                  {"attn_dtype", "fp8"},
                  {"kv_cache_dtype", "fp8"},
                  {"latency", "0.03"}},
                 {{"gqa_decode", kGqaShape + "0", "fp8", 8, 1024, 3e-5}}},
        // 1024 bf16 elements: 2048 bytes.
        KindCase{"NcclAllToAll",
                 "nccl_perf",
                 {{"op_name", "alltoall"},
                  {"nccl_dtype", "bfloat16"},
                  {"num_gpus", "4"},
                  {"message_size", "1024"},
                  {"latency", "0.02"}},
                 {{"nccl_all_to_all", "ranks=4", "bfloat16", 2048, 0, 2e-5, "", 4}}},
        KindCase{
            "DeepEpLowLatency",
            "wideep_deepep_ll_perf",
            {},
            {{"deepep_ll_dispatch", "hidden=7168 experts=256 top_k=8", "bf16", 128, 0, 1e-4, "dispatch"},
             {"deepep_ll_combine", "hidden=7168 experts=256 top_k=8", "bf16", 128, 0, 1.5e-4, "combine"}}},
        KindCase{"DeepEpNormal",
                 "wideep_deepep_normal_perf",
                 {{"combine_sms", "32"}},
                 {{"deepep_normal_dispatch", "hidden=7168 experts=256 top_k=8 sms=24", "bf16", 128, 0, 3e-4,
                   "dispatch"},
                  {"deepep_normal_combine", "hidden=7168 experts=256 top_k=8 sms=32", "bf16", 128, 0, 4e-4,
                   "combine"}}}),
    [](const testing::TestParamInfo<KindCase>& info) { return info.param.name; });

TEST(AiconfiguratorTables, RowsTheSimulatorDoesNotModelAreKeptWithTheReason) {
  const TempDir tmp;
  const std::string dir = tmp.path().string();
  auto skipped = [&](const std::string& kind, const TableRow& row) {
    const MeasuredTable table = read_aiconfigurator_table(test::write_table(dir, kind, {row}));
    EXPECT_TRUE(table.rows.at(0).points.empty());
    return table.rows.at(0).skipped;
  };
  EXPECT_EQ(skipped("gemm_perf", {{"gemm_dtype", "int4_wo"}}), "dtype not modelled");
  EXPECT_EQ(skipped("moe_perf", {{"moe_dtype", "w4afp8"}}), "dtype not modelled");
  EXPECT_EQ(skipped("generation_attention_perf", {{"beam_width", "4"}}), "beam search not modelled");
  EXPECT_EQ(skipped("context_attention_perf", {{"attn_dtype", "fp8"}}),
            "FP8 attention over a BF16 cache not modelled");
  EXPECT_EQ(skipped("wideep_deepep_ll_perf", {{"node_num", "2"}}),
            "DeepEP across nodes not imported (one node's tables only)");
}

// Blackwell's FP4 rows (issue 40): NVFP4 GEMMs and MoE keep their name; both MXFP4 MoE kernels are
// MXFP4 weights, the BF16-activation one another implementation of the shape.
TEST(AiconfiguratorTables, Fp4RowsArePointsOfTheirOwnDtype) {
  const TempDir tmp;
  const std::string dir = tmp.path().string();
  auto point_of = [&](const std::string& kind, const TableRow& row) {
    const MeasuredTable table = read_aiconfigurator_table(test::write_table(dir, kind, {row}));
    EXPECT_EQ(table.rows.at(0).skipped, "");
    return table.rows.at(0).points.at(0);
  };
  const MeasuredPoint gemm =
      point_of("gemm_perf", {{"kernel_source", "sglang_flashinfer_cutedsl_nvfp4"}, {"gemm_dtype", "nvfp4"}});
  EXPECT_EQ(gemm.dtype, "nvfp4");
  EXPECT_EQ(gemm.implementation, "sglang_flashinfer_cutedsl_nvfp4");
  EXPECT_EQ(point_of("moe_perf", {{"moe_dtype", "nvfp4"}}).dtype, "nvfp4");
  const MeasuredPoint w4a8 = point_of(
      "moe_perf", {{"kernel_source", "sglang_flashinfer_trtllm_moe"}, {"moe_dtype", "w4a8_mxfp4_mxfp8"}});
  const MeasuredPoint w4a16 =
      point_of("moe_perf", {{"kernel_source", "sglang_flashinfer_trtllm_moe"}, {"moe_dtype", "w4a16_mxfp4"}});
  EXPECT_EQ(w4a8.dtype, "mxfp4");
  EXPECT_EQ(w4a16.dtype, "mxfp4");
  EXPECT_EQ(w4a8.implementation, "sglang_flashinfer_trtllm_moe");
  EXPECT_EQ(w4a16.implementation, "sglang_flashinfer_trtllm_moe w4a16");
  EXPECT_EQ(w4a8.shape, w4a16.shape);
  EXPECT_TRUE(preferred_implementation(w4a8.implementation, w4a16.implementation));
  EXPECT_TRUE(preferred_implementation("sglang_mxfp4_flashinfer_trtllm_moe", w4a16.implementation));
}

struct Malformed {
  std::string name;
  std::string kind;
  TableRow row;
  std::string column;   // where the error points
  std::string message;  // after "file:line:character: column 'COLUMN': "
};

void PrintTo(const Malformed& m, std::ostream* os) {
  *os << m.name;
}

class MalformedRow : public testing::TestWithParam<Malformed> {};

TEST_P(MalformedRow, IsRejectedAtItsFileLineAndCharacter) {
  const Malformed& m = GetParam();
  for (const std::string suffix : {".csv", ".csv.gz"}) {
    const TempDir tmp;
    // A good row first: the error is on line 3.
    const std::string path = test::write_table(tmp.path().string(), m.kind, {{}, m.row}, suffix);
    const std::string line = test::table_line(m.kind, m.row);
    EXPECT_EQ(read_error(path), fmt::format("{}:3:{}: column '{}': {}", path,
                                            character_of(m.kind, line, m.column), m.column, m.message));
  }
}

INSTANTIATE_TEST_SUITE_P(
    AiconfiguratorTables, MalformedRow,
    testing::Values(
        Malformed{"NonNumeric", "gemm_perf", {{"m", "abc"}}, "m", "expected a number, got 'abc'"},
        Malformed{"ZeroLatency",
                  "gemm_perf",
                  {{"latency", "0"}},
                  "latency",
                  "expected a positive number in [1e-09, 1e+21] (ms), got 0"},
        Malformed{"NegativeLatency",
                  "nccl_perf",
                  {{"latency", "-0.5"}},
                  "latency",
                  "expected a positive number in [1e-09, 1e+21] (ms), got -0.5"},
        // What `run` reads back of a profile: an import never writes what run refuses.
        Malformed{"LatencyBeyondWhatAProfileHolds",
                  "gemm_perf",
                  {{"latency", "1e300"}},
                  "latency",
                  "expected a positive number in [1e-09, 1e+21] (ms), got 1e300"},
        Malformed{"NonPositiveDeepEpTime",
                  "wideep_deepep_ll_perf",
                  {{"combine_avg_t_us", "0"}},
                  "combine_avg_t_us",
                  "expected a positive number in [1e-06, 1e+24] (us), got 0"},
        Malformed{"FractionalCount",
                  "context_mla_perf",
                  {{"batch_size", "1.5"}},
                  "batch_size",
                  "expected a whole number of at least 1, got '1.5'"},
        Malformed{"UnknownDtype",
                  "gemm_perf",
                  {{"gemm_dtype", "bf17"}},
                  "gemm_dtype",
                  "unknown value 'bf17' (expected one of: bfloat16, float16, fp8, fp8_block, w4a16_mxfp4, "
                  "w4a8_mxfp4_mxfp8, int4_wo, int8_wo, nvfp4, w4afp8, int8)"},
        Malformed{"UnknownNcclDtype",
                  "nccl_perf",
                  {{"nccl_dtype", "double"}},
                  "nccl_dtype",
                  "unknown value 'double' (expected one of: half, bfloat16, float, int8, fp8)"},
        Malformed{"ExpertsDoNotSplitOverTheRanks",
                  "moe_perf",
                  {{"moe_ep_size", "3"}},
                  "moe_ep_size",
                  "64 experts do not split over 3 ranks"},
        Malformed{"KvHeadsDoNotGroup",
                  "context_attention_perf",
                  {{"num_key_value_heads", "5"}},
                  "num_key_value_heads",
                  "32 query heads do not group over 5 KV heads"}),
    [](const testing::TestParamInfo<Malformed>& info) { return info.param.name; });

TEST(AiconfiguratorTables, AMissingColumnIsNamed) {
  const TempDir tmp;
  const std::string path = tmp / "gemm_perf.csv";
  std::string header = test::table_header("gemm_perf");
  header.resize(header.rfind(",latency"));
  test::write_text(path, header + "\n");
  EXPECT_EQ(
      read_error(path),
      path +
          ":1: missing column 'latency' (a gemm_perf table has: kernel_source, gemm_dtype, m, n, k, latency, "
          "framework, version, device, op_name)");
}

TEST(AiconfiguratorTables, ARowOfTheWrongLengthIsLocated) {
  const TempDir tmp;
  const std::string path = tmp / "gemm_perf.csv.gz";
  const std::string line = test::table_line("gemm_perf", {});
  test::write_text(
      path, test::table_header("gemm_perf") + "\n" + line + "\n" + line.substr(0, line.rfind(',')) + "\n");
  EXPECT_EQ(read_error(path), path + ":3:1: expected 10 fields, got 9");
}

TEST(AiconfiguratorTables, UnknownTablesAndEmptyFilesAreRefused) {
  const TempDir tmp;
  const std::string unknown = tmp / "gemm_perf_v2.csv";
  test::write_text(unknown, test::table_header("gemm_perf") + "\n");
  EXPECT_TRUE(read_error(unknown).starts_with(unknown + ": not a table this importer knows ('gemm_perf_v2'"))
      << read_error(unknown);
  const std::string empty = tmp / "moe_perf.csv";
  test::write_text(empty, "");
  EXPECT_EQ(read_error(empty), empty + ":1: empty table (expected a header line)");
}

TEST(AiconfiguratorTables, TheSameMeasurementTwiceIsRefusedUnlessRepeatsAreAllowed) {
  const TempDir tmp;
  const TableRow row{{"m", "8"}, {"latency", "0.01"}};
  const std::string path = test::write_table(tmp.path().string(), "gemm_perf", {row, {{"m", "16"}}, row});
  const std::string line = test::table_line("gemm_perf", row);
  EXPECT_EQ(read_error(path),
            fmt::format(
                "{}:4:{}: column 'k': the same measurement as line 2 (kernel_source, gemm_dtype, m, n, k = "
                "deep_gemm, bfloat16, 8, 4096, 4096); if the table holds repeated measurements, import with "
                "--repeats to average them",
                path, character_of("gemm_perf", line, "k")));
  const MeasuredTable table = read_aiconfigurator_table(path, /*allow_repeats=*/true);
  EXPECT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.repeats, 1);
}

}  // namespace
}  // namespace semsim
