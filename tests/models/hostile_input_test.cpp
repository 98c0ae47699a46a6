// The shared readers every input goes through, against hostile and extreme inputs: gzip streams
// with bytes after them, endless lines and files, YAML that is valid syntax but not a valid input
// (keys that are lists, a second document, unclosed quotes, alias bombs and cycles, nesting without
// bound, bytes that are not UTF-8), and the memory check that refuses what cannot fit.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/memory_budget.hpp"
#include "models/yaml_input.hpp"
#include "tests/unit_test_helpers.hpp"

namespace semsim {
namespace {

using test::error_of;
using test::TempFolder;

namespace fs = std::filesystem;

std::string gzip(const std::string& text) {
  TempFolder dir;
  gzFile f = gzopen((dir / "x.gz").c_str(), "wb1");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(dir / "x.gz", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<std::string> lines_of(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  for (std::string_view line; reader.next(line);) lines.emplace_back(line);
  return lines;
}

TEST(CompressedFile, PlainGzipAndConcatenatedMembersReadTheSame) {
  TempFolder dir;
  write(dir / "plain.txt", "a\nb\r\nc");
  write(dir / "one.gz", gzip("a\nb\r\nc"));
  write(dir / "two.gz", gzip("a\nb") + gzip("\r\nc"));  // what `cat x.gz y.gz` makes: one stream
  for (const char* name : {"plain.txt", "one.gz", "two.gz"}) {
    EXPECT_EQ(read_text_file(dir / name), "a\nb\r\nc") << name;
    EXPECT_EQ(lines_of(dir / name), (std::vector<std::string>{"a", "b", "c"})) << name;
  }
}

TEST(CompressedFile, BytesAfterTheLastGzipMemberAreAnError) {
  TempFolder dir;
  write(dir / "garbage.gz", gzip("a\nb\n") + "trailing garbage");
  EXPECT_NE(
      error_of([&] { read_text_file(dir / "garbage.gz"); }).find("data after the end of the gzip stream"),
      std::string::npos);
  EXPECT_NE(error_of([&] { lines_of(dir / "garbage.gz"); }).find("data after the end of the gzip stream"),
            std::string::npos);
  const std::string whole = gzip("a\nb\n");
  write(dir / "cut.gz", whole.substr(0, whole.size() - 4));
  EXPECT_NE(error_of([&] { read_text_file(dir / "cut.gz"); }).find("corrupt or truncated"),
            std::string::npos);
}

TEST(CompressedFile, LinesLongerThanTheLimitAreAnErrorAndLongOnesReadWhole) {
  TempFolder dir;
  // A 3 MiB line spans several read chunks; one past the limit is refused (it was read in time
  // quadratic in its length, and without bound).
  const std::string long_line(3 << 20, 'x');
  write(dir / "long.txt.gz", gzip("first\n" + long_line + "\nlast\n"));
  EXPECT_EQ(lines_of(dir / "long.txt.gz"), (std::vector<std::string>{"first", long_line, "last"}));
  write(dir / "endless.txt.gz", gzip("first\n" + std::string(limits::kLineBytes + (1 << 20), 'x')));
  EXPECT_EQ(error_of([&] { lines_of(dir / "endless.txt.gz"); }),
            dir / "endless.txt.gz" + ":2: line longer than 256 MiB (the most semsim reads)");
}

TEST(CompressedFile, WholeFilesLargerThanTheirLimitAreAnError) {
  TempFolder dir;
  write(dir / "big.txt", std::string(3 << 20, 'x'));
  EXPECT_EQ(read_text_file(dir / "big.txt").size(), std::size_t{3} << 20);
  EXPECT_EQ(error_of([&] { read_text_file(dir / "big.txt", 2 << 20); }),
            dir / "big.txt" + ": larger than 2 MiB (the most semsim reads of such a file)");
  EXPECT_EQ(error_of([&] { read_text_file("/dev/zero", 1 << 20); }),
            "/dev/zero: is not a regular file (a FIFO, device or socket is not read)");
  // A FIFO without a writer is refused rather than waited on.
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_text_file(dir / "fifo"); }),
            dir / "fifo" + ": is not a regular file (a FIFO, device or socket is not read)");
  EXPECT_EQ(why_not_a_regular_file(dir / "fifo"),
            "is not a regular file (a FIFO, device or socket is not read)");
  EXPECT_EQ(why_not_a_regular_file(dir / "missing"), "does not exist");
  EXPECT_EQ(why_not_a_regular_file(dir / "big.txt"), std::nullopt);
  EXPECT_NE(error_of([&] { read_text_file(dir / ""); }).find("is a directory"), std::string::npos);
}

std::string yaml_error(const std::string& text) {
  return error_of([&] { YamlInput::parse(text, "in.yaml"); });
}

TEST(YamlInputChecks, KeysThatAreListsOrMapsAreAnErrorAtTheirPosition) {
  EXPECT_EQ(yaml_error("? [a, b]\n: 1\n"), "in.yaml:1:3: a key must be a name, not a list");
  EXPECT_EQ(yaml_error("top:\n  {x: 1}: 2\n"), "in.yaml:2:3: top: a key must be a name, not a map");
  EXPECT_EQ(yaml_error("top:\n  - {a: {? [1] : 2}}\n"),
            "in.yaml:2:12: top[0].a: a key must be a name, not a list");
}

TEST(YamlInputChecks, OneDocumentOfUtf8WithClosedQuotes) {
  EXPECT_EQ(yaml_error("a: 1\n---\nb: 2\n"),
            "in.yaml:3:1: a second YAML document ('---'): give one document only");
  EXPECT_EQ(yaml_error("a: 1\nname: \"open\nb: 2\n"),
            "in.yaml:2:7: name: unclosed quote: the value runs to the end of the file");
  EXPECT_EQ(yaml_error("a: 'it''s\n"),
            "in.yaml:1:4: a: unclosed quote: the value runs to the end of the file");
  EXPECT_EQ(yaml_error("a: 1\nb: \"caf\xc3\n"), "in.yaml:2:8: not UTF-8 text (YAML must be UTF-8)");
  EXPECT_EQ(yaml_error("a: \xc0\xaf\n"), "in.yaml:1:4: not UTF-8 text (YAML must be UTF-8)");  // overlong
  EXPECT_EQ(yaml_error("a: \xed\xa0\x80\n"),
            "in.yaml:1:4: not UTF-8 text (YAML must be UTF-8)");  // surrogate
  // What is fine stays fine: escaped and doubled quotes, multi-byte text, a comment after '---'.
  const YamlInput ok = YamlInput::parse(
      "a: \"x\\\"y\"\nb: 'it''s'\nc: \"caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x98\x80\"\n", "ok.yaml");
  EXPECT_EQ(ok.required("a").as_string(), "x\"y");
  EXPECT_EQ(ok.required("b").as_string(), "it's");
  EXPECT_EQ(YamlInput::parse("---\na: 1\n", "ok.yaml").required("a").as_int(), 1);
  EXPECT_TRUE(YamlInput::parse("", "empty.yaml").node().IsNull());
}

TEST(YamlInputChecks, AliasesExpandingPastTheNodeLimitAreRefused) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'g'; ++level) {
    bomb += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(level - 1);
    bomb += "]\n";
  }
  EXPECT_NE(yaml_error(bomb).find("more than 1000000 YAML nodes (counting each use of an alias): refused"),
            std::string::npos);
  // Aliases within the limit are read as usual.
  const YamlInput ok = YamlInput::parse("a: &a {x: 1}\nb: *a\n", "ok.yaml");
  EXPECT_EQ(ok.required("b").required("x").as_int(), 1);
}

TEST(YamlInputChecks, AnAliasInsideItsOwnAnchorIsRefusedAtItsPosition) {
  const std::string cycle = "an alias refers to a node that contains it (a cycle of anchors): refused";
  EXPECT_EQ(yaml_error("x: &a [*a]\n"), "in.yaml:1:4: x[0]: " + cycle);
  EXPECT_EQ(yaml_error("top:\n  x: &a {y: [1, *a]}\n"), "in.yaml:2:6: top.x.y[1]: " + cycle);
  EXPECT_EQ(yaml_error("x: &a [&b [*a]]\n"), "in.yaml:1:4: x[0][0]: " + cycle);
  // An alias of an enclosing node's sibling is no cycle.
  const YamlInput ok = YamlInput::parse("a: &a [1]\nb: [*a, [*a]]\n", "ok.yaml");
  EXPECT_EQ(ok.required("b").items()[1].items()[0].items()[0].as_int(), 1);
}

TEST(YamlInputChecks, NestingPastTheDepthLimitIsRefused) {
  const auto nested = [](std::size_t depth) {
    return "x: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
  };
  EXPECT_NO_THROW(YamlInput::parse(nested(limits::kYamlDepth - 1), "ok.yaml"));
  EXPECT_NE(yaml_error(nested(limits::kYamlDepth)).find("nested more than 256 levels deep"),
            std::string::npos);
  // Aliases count at each use: a0 nests 100 deep, each a<n> holds a<n-1> two levels further down.
  std::string chain = "a0: &a0 " + std::string(100, '[') + std::string(100, ']') + "\n";
  for (int level = 1; level <= 77; ++level)
    chain += fmt::format("a{}: &a{} [[*a{}]]\n", level, level, level - 1);
  EXPECT_NO_THROW(YamlInput::parse(chain, "ok.yaml"));
  chain += "a78: &a78 [[*a77]]\n";
  EXPECT_NE(yaml_error(chain).find(": a78[0][0][0]"), std::string::npos) << yaml_error(chain);
}

TEST(MemoryBudget, NeedsBeyondTheMachineAreRefusedNamingWhat) {
  EXPECT_GT(memory_budget_bytes(), 1e6);
  EXPECT_NO_THROW(check_memory_need(1e6, "a small table"));
  const std::string message = error_of([] { check_memory_need(1e30, "a huge table"); });
  EXPECT_TRUE(message.starts_with("a huge table needs at least 1e+21 GB of memory, more than the "))
      << message;
}

}  // namespace
}  // namespace semsim
