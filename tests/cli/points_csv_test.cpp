// points.csv: quoting, atomic appends, repair of a torn last row, header checks, reordering.
#include "sim/outputs/points_csv.hpp"

#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "tests/cli/cli_runner.hpp"

namespace semsim {
namespace {

using cli_test::read_file;
using cli_test::TempDir;

TEST(pointsCsv, FieldsWithCommasQuotesOrLineBreaksAreQuotedAndSplitBack) {
  const std::vector<std::string> fields{"plain", "a,b", "say \"hi\"", "", "{name: x, p: 1}"};
  const std::string line = csv_line(fields);
  EXPECT_EQ(line, "plain,\"a,b\",\"say \"\"hi\"\"\",,\"{name: x, p: 1}\"");
  EXPECT_EQ(split_csv_line(line), fields);
}

TEST(pointsCsv, CreatesTheFileWithItsHeaderAndAppendsWholeLines) {
  TempDir dir;
  const std::string path = dir / "points.csv";
  PointsCsv table(path, "point_id,status,x");
  EXPECT_EQ(read_file(path), "point_id,status,x\n");
  table.append({"aaaa", "ok", "1,5"});
  table.append({"bbbb", "failed", ""});
  EXPECT_EQ(read_file(path), "point_id,status,x\naaaa,ok,\"1,5\"\nbbbb,failed,\n");
  EXPECT_EQ(table.existing().by_id.at("bbbb"), 1u);
}

TEST(pointsCsv, DropsATornLastRowAndKeepsTheWholeOnes) {
  TempDir dir;
  const std::string path = dir / "points.csv";
  std::ofstream(path) << "point_id,status,x\naaaa,ok,1\nbbbb,ok,2\ncccc,o";
  const PointsRows before = read_points_csv(path);
  EXPECT_EQ(before.rows.size(), 2u);
  EXPECT_EQ(before.torn, 1u);
  EXPECT_EQ(read_file(path), "point_id,status,x\naaaa,ok,1\nbbbb,ok,2\ncccc,o")
      << "reading must not change it";

  const PointsCsv table(path, "point_id,status,x");
  EXPECT_EQ(table.torn_rows_dropped(), 1u);
  EXPECT_EQ(read_file(path), "point_id,status,x\naaaa,ok,1\nbbbb,ok,2\n");
  EXPECT_FALSE(table.existing().by_id.contains("cccc"));
}

TEST(pointsCsv, DropsALineOfTheWrongWidth) {
  // What a machine crash can leave: a line whose end is lost, followed by whole ones.
  TempDir dir;
  const std::string path = dir / "points.csv";
  std::ofstream(path) << "point_id,status,x\naaaa,ok\nbbbb,ok,2\n";
  const PointsCsv table(path, "point_id,status,x");
  EXPECT_EQ(table.torn_rows_dropped(), 1u);
  EXPECT_EQ(read_file(path), "point_id,status,x\nbbbb,ok,2\n");
}

TEST(pointsCsv, AnotherHeaderIsAnInputError) {
  TempDir dir;
  const std::string path = dir / "points.csv";
  std::ofstream(path) << "point_id,status,y\n";
  EXPECT_THROW(PointsCsv(path, "point_id,status,x"), InputError);
}

TEST(pointsCsv, DropFailedAndReorder) {
  TempDir dir;
  const std::string path = dir / "points.csv";
  PointsCsv table(path, "point_id,status,x");
  table.append({"cccc", "ok", "3"});
  table.append({"aaaa", "failed", ""});
  table.append({"bbbb", "ok", "2"});
  EXPECT_EQ(table.drop_failed(), 1u);
  EXPECT_EQ(read_file(path), "point_id,status,x\ncccc,ok,3\nbbbb,ok,2\n");
  table.append({"aaaa", "ok", "1"});
  table.reorder({"aaaa", "bbbb"});  // ids not listed keep their order after the listed ones
  EXPECT_EQ(read_file(path), "point_id,status,x\naaaa,ok,1\nbbbb,ok,2\ncccc,ok,3\n");
}

}  // namespace
}  // namespace semsim
