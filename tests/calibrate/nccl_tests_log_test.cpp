// nccl-tests logs as measured tables: the collective from the log or the file name, the ranks and
// GPU from "Using devices", NCCL's version, one point per message size, and located errors.
#include "calibrate/import/nccl_tests_log.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../cli/cli_runner.hpp"
#include "models/input_error.hpp"
#include "tests/calibrate/table_fixtures.hpp"

namespace semsim {
namespace {

using cli_test::TempDir;

// The message of the InputError reading `path` throws ("" when it reads).
std::string log_read_error(const std::string& path) {
  try {
    read_nccl_tests_log(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclTestsLog, ReadsARealisticLog) {
  const TempDir tmp;
  // The file's name says nothing: the collective comes from the log.
  const std::string path = tmp / "run-3.log";
  test::write_text(path, test::nccl_tests_log("alltoall_perf", 8));
  const MeasuredTable table = read_nccl_tests_log(path);
  EXPECT_EQ(table.kind, "nccl_tests");
  ASSERT_EQ(table.rows.size(), 10u);  // 0 bytes, then 1 KiB to 64 MiB in steps of 4
  EXPECT_TRUE(table.rows[0].points.empty());
  EXPECT_EQ(table.rows[0].skipped, "empty message");
  double bytes = 1024;
  for (std::size_t r = 1; r < table.rows.size(); ++r, bytes *= 4) {
    SCOPED_TRACE(bytes);
    const MeasuredRow& row = table.rows[r];
    EXPECT_EQ(row.fields.size(), table.columns.size());
    EXPECT_EQ(row.fields[0], fmt::format("{}", bytes));
    ASSERT_EQ(row.points.size(), 1u);
    const MeasuredPoint& p = row.points[0];
    EXPECT_EQ(p.kernel, "nccl_all_to_all");
    EXPECT_EQ(p.shape, "ranks=8");
    EXPECT_EQ(p.ranks, 8);
    EXPECT_EQ(p.dtype, "float");
    EXPECT_EQ(p.x, bytes);
    EXPECT_DOUBLE_EQ(p.seconds, test::nccl_tests_us(bytes) * 1e-6);  // the out-of-place time
  }
  EXPECT_EQ(table.provenance.at("device"), std::vector<std::string>{"NVIDIA H200"});
  EXPECT_EQ(table.provenance.at("version"), std::vector<std::string>{"2.28.7"});
  EXPECT_EQ(table.provenance.at("op_name"), std::vector<std::string>{"all_to_all"});
  EXPECT_EQ(table.provenance.at("framework"), std::vector<std::string>{"nccl-tests"});
}

TEST(NcclTestsLog, TheCollectiveComesFromTheFileNameWhenTheLogDoesNotSay) {
  const TempDir tmp;
  const std::string path = tmp / "all_gather_perf.log";
  test::write_text(path, test::nccl_tests_log("", 4));
  const MeasuredTable table = read_nccl_tests_log(path);
  ASSERT_EQ(table.rows[1].points.size(), 1u);
  EXPECT_EQ(table.rows[1].points[0].kernel, "nccl_all_gather");
  EXPECT_EQ(table.rows[1].points[0].shape, "ranks=4");
  // The log's own line wins over the file's name.
  test::write_text(path, test::nccl_tests_log("reduce_scatter_perf", 4));
  EXPECT_EQ(read_nccl_tests_log(path).rows[1].points[0].kernel, "nccl_reduce_scatter");
}

TEST(NcclTestsLog, ReadsGzipLogs) {
  const TempDir tmp;
  const std::string plain = tmp / "all_reduce_perf.log", gzip = tmp / "all_reduce_perf.log.gz";
  test::write_text(plain, test::nccl_tests_log("all_reduce_perf", 8));
  test::write_text(gzip, test::nccl_tests_log("all_reduce_perf", 8));
  const MeasuredTable a = read_nccl_tests_log(plain), b = read_nccl_tests_log(gzip);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t r = 0; r < a.rows.size(); ++r) {
    EXPECT_EQ(a.rows[r].fields, b.rows[r].fields);
    ASSERT_EQ(a.rows[r].points.size(), b.rows[r].points.size());
    for (std::size_t i = 0; i < a.rows[r].points.size(); ++i)
      EXPECT_EQ(a.rows[r].points[i].seconds, b.rows[r].points[i].seconds);
  }
}

TEST(NcclTestsLog, AMalformedRowIsLocatedAtItsField) {
  const TempDir tmp;
  const std::string path = tmp / "alltoall_perf.log";
  const std::string bad_time = "        2048           512     float    none      -1     abc";
  const std::string row = bad_time + "    0.01    0.01      0    20.50    0.01    0.01      0";
  const std::string log = test::nccl_tests_log("alltoall_perf", 8, {row});
  test::write_text(path, log);
  const int line = static_cast<int>(std::count(
                       log.begin(), log.begin() + static_cast<std::ptrdiff_t>(log.find(row)), '\n')) +
                   1;
  EXPECT_EQ(log_read_error(path),
            fmt::format("{}:{}:{}: column 'time': expected a positive number, got 'abc'", path, line,
                        bad_time.find("abc") + 1));

  const std::string short_row = "        2048           512     float    none      -1    20.5";
  test::write_text(path, test::nccl_tests_log("alltoall_perf", 8, {short_row}));
  EXPECT_TRUE(log_read_error(path).starts_with(fmt::format("{}:{}:1: expected 13 fields", path, line)))
      << log_read_error(path);
}

TEST(NcclTestsLog, RefusesLogsThatDoNotSayEnough) {
  const TempDir tmp;
  const std::string unnamed = tmp / "results.log";
  test::write_text(unnamed, test::nccl_tests_log("", 8));
  EXPECT_TRUE(log_read_error(unnamed).starts_with(unnamed + ": which collective is this?"))
      << log_read_error(unnamed);

  const std::string one_rank = tmp / "all_reduce_perf.log";
  test::write_text(one_rank, test::nccl_tests_log("all_reduce_perf", 1));
  EXPECT_EQ(log_read_error(one_rank),
            one_rank + ": 1 ranks in 'Using devices' (a collective needs 2 or more)");

  const std::string header_only = tmp / "all_gather_perf.log";
  std::string log = test::nccl_tests_log("all_gather_perf", 2);
  log.resize(log.find("#       size"));
  test::write_text(header_only, log);
  EXPECT_EQ(log_read_error(header_only), header_only + ": no result lines");
}

}  // namespace
}  // namespace semsim
