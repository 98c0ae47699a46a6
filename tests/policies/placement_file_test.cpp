#include "policies/placement_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "models/input_error.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("semsim-placement-file-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Two layers, four experts, two devices in one node; layer 1 replicates experts 0 and 1.
PlacementPlan sample_plan() {
  PlacementPlan plan;
  plan.policy = {"eplb", {{"redundant", 2}, {"groups", 0}}};
  Placement& p = plan.placement;
  p.moe_layers = 2;
  p.experts = 4;
  p.devices = 2;
  p.slots = {{{0, 1}, {2, 3}}, {{0, 1, 2}, {0, 1, 3}}};
  p.seal();
  plan.token_devices.device = {{1, -1, 0, 1, -1}, {0, 0, -1, 1, 1}};
  plan.token_devices.confidence = {{1.0f / 3, 0, 0.5f, 0.1f, 0}, {1, 0.25f, 0, 2.0f / 3, 1e-7f}};
  plan.token_devices.texts = {"the", "", "a b", "100%\n", "\xC4\xA0the"};  // escaped in the file
  plan.inter_layer.reset(2, 2, 2);
  const std::vector<int> from_0{0}, from_1{1};
  plan.inter_layer.next[1][plan.inter_layer.key_index(from_0)] = {1, 0.7f};
  plan.inter_layer.next[1][plan.inter_layer.key_index(from_1)] = {1, 1.0f / 7};
  plan.solver = {{"gap", 0.1}, {"objective", 1e-300}};
  plan.solver_seconds = 0.1 + 0.2;
  plan.profiled_on = ProfileSource{"traces/a b.semtrace", "0123456789abcdef", 0.8, 7, 1000, 200};
  return plan;
}

TEST(PlacementFile, RoundTripsExactlyPlainAndGzip) {
  TempDir tmp;
  const PlacementPlan plan = sample_plan();
  for (const char* name : {"plan.txt", "plan.txt.gz"}) {
    const std::string path = (tmp.path / name).string();
    write_placement_file(plan, path);
    const PlacementPlan read = read_placement_file(path);
    EXPECT_EQ(read, plan) << name;
    EXPECT_EQ(read.placement.replica_count(1, 0), 2);
    EXPECT_EQ(read.inter_layer.predict(1, std::vector<int>{1}).confidence, 1.0f / 7);
  }
  // Nothing but the file itself is left behind (the temporary was renamed into place).
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator()), 2);
}

TEST(PlacementFile, PlanWithoutTablesRoundTrips) {
  TempDir tmp;
  PlacementPlan plan = sample_plan();
  plan.token_devices = {};
  plan.inter_layer = {};
  plan.solver.clear();
  const std::string path = (tmp.path / "bare.txt").string();
  write_placement_file(plan, path);
  EXPECT_EQ(read_placement_file(path), plan);
}

// A plan made from a profile without token identities: a token table of no tokens (what the
// policies size from such a profile) is no table, and the inter-layer table alone is written.
TEST(PlacementFile, PlanFromAnIdlessProfileRoundTripsWithItsInterLayerTableAlone) {
  TempDir tmp;
  PlacementPlan plan = sample_plan();
  plan.token_devices.device.assign(2, {});
  plan.token_devices.confidence.assign(2, {});
  ASSERT_TRUE(plan.token_devices.empty());
  ASSERT_TRUE(plan.profiled());
  const std::string path = (tmp.path / "idless.txt").string();
  write_placement_file(plan, path);
  const PlacementPlan read = read_placement_file(path);
  EXPECT_TRUE(read.token_devices.empty());
  EXPECT_EQ(read.inter_layer, plan.inter_layer);
  EXPECT_TRUE(read.profiled());
}

TEST(PlacementFile, TokenTextsAreWrittenEscapedAndAVersionOneFileReadsWithout) {
  TempDir tmp;
  const std::string path = (tmp.path / "texts.txt").string();
  write_placement_file(sample_plan(), path);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("format semsim-placement 2\n"), std::string::npos);
  EXPECT_NE(text.find("\nprofiled_on 0123456789abcdef 0.8 7 1000 200 traces/a%20b.semtrace\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("token_devices 5\ntext 0 the\ntext 2 a%20b\ntext 3 100%25%0A\ntext 4 \xC4\xA0the\n0 0 1 "),
      std::string::npos);

  std::string version1 = text.substr(0, text.find("text 0"));
  version1.replace(version1.find("semsim-placement 2"), 18, "semsim-placement 1");
  version1 += text.substr(text.find("\n0 0 1 ") + 1);
  std::ofstream((tmp.path / "v1.txt").string()) << version1;
  PlacementPlan expected = sample_plan();
  expected.token_devices.texts.clear();  // a version-1 table is keyed by its trace's ids alone
  EXPECT_EQ(read_placement_file((tmp.path / "v1.txt").string()), expected);
}

// A valid file; each bad case below edits it and names the message and the line it must report.
const std::vector<std::string> kValidLines = {
    "# comment",                  // 1
    "format semsim-placement 1",  // 2
    "policy eplb",                // 3
    "param redundant 2",          // 4
    "moe_layers 2",               // 5
    "experts 4",                  // 6
    "devices 2",                  // 7
    "devices_per_node 2",         // 8
    "solver gap 0",               // 9
    "solver_seconds 0.5",         // 10
    "slots",                      // 11
    "0 0 0 1 2",                  // 12
    "0 1 3 0",                    // 13
    "1 0 0 1",                    // 14
    "1 1 2 3",                    // 15
    "token_devices 10",           // 16
    "0 3 1 0.75",                 // 17
    "inter_layer 2",              // 18
    "1 0 -> 1 0.5",               // 19
    "end",                        // 20
};

struct BadFile {
  std::string name;
  std::vector<std::string> lines;
  int line;
  std::string message;
};

std::vector<std::string> with(std::size_t line, const std::string& text) {
  auto lines = kValidLines;
  lines[line - 1] = text;
  return lines;
}
std::vector<std::string> without(std::size_t first, std::size_t last) {
  auto lines = kValidLines;
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(first - 1),
              lines.begin() + static_cast<std::ptrdiff_t>(last));
  return lines;
}
std::vector<std::string> operator+(std::vector<std::string> lines, const std::vector<std::string>& more) {
  lines.insert(lines.end(), more.begin(), more.end());
  return lines;
}
// The valid file in version 2, with `texts` after its token_devices line (line 16).
std::vector<std::string> version2_with(const std::vector<std::string>& texts) {
  auto lines = with(2, "format semsim-placement 2");
  lines.insert(lines.begin() + 16, texts.begin(), texts.end());
  return lines;
}
std::vector<std::string> plus(const std::string& text) {
  auto lines = kValidLines;
  lines.push_back(text);
  return lines;
}

const std::vector<BadFile> kBadFiles = {
    {"unknown format", with(2, "format other 1"), 2, "not a placement file"},
    {"unknown version", with(2, "format semsim-placement 3"), 2, "unsupported placement format version 3"},
    {"token texts out of order", version2_with({"text 3 a", "text 2 b"}), 18, "token 2 out of range [4, 9]"},
    {"token text given twice", version2_with({"text 3 a", "text 3 b"}), 18, "token 3 out of range [4, 9]"},
    {"token text bad escape", version2_with({"text 3 a%2"}), 17, "token 3: bad %-escape in its text"},
    {"token text with no text", version2_with({"text 3"}), 17, "expected 3 fields (text token text)"},
    {"token texts in a version-1 file", with(17, "text 3 a"), 17, "expected 'end', found 'text'"},
    {"wrong expert count", with(6, "experts 3"), 13, "expert 3 out of range [0, 2]"},
    {"no experts", with(6, "experts 0"), 6, "experts 0 out of range"},
    {"duplicate slot", with(12, "0 0 0 1 1"), 12, "expert 1 listed twice on device 0 of layer 0"},
    {"missing layer", without(14, 15), 14, "missing the slots of layer 1 device 0"},
    {"missing device", without(13, 13), 13, "missing the slots of layer 0 device 1"},
    {"slots listed twice", with(13, "0 0 3"), 13, "the slots of layer 0 device 0 are listed twice"},
    {"expert hosted nowhere", with(13, "0 1 0"), 13, "expert 3 of layer 0 is hosted on no device"},
    {"device out of range", with(13, "0 2 3"), 13, "device 2 out of range [0, 1]"},
    {"layer out of range", with(14, "2 0 0 1"), 14, "layer 2 out of range [0, 1]"},
    {"uneven nodes", with(8, "devices_per_node 3"), 8, "devices_per_node 3 out of range [1, 2]"},
    {"header out of order", with(5, "experts 4"), 5, "expected 'moe_layers', found 'experts'"},
    {"token out of range", with(17, "0 10 1 0.75"), 17, "token 10 out of range [0, 9]"},
    {"token device out of range", with(17, "0 3 2 0.75"), 17, "device 2 out of range [0, 1]"},
    {"confidence above one", with(17, "0 3 1 1.5"), 17, "confidence 1.5 outside [0, 1]"},
    {"token listed twice", with(18, "0 3 0 0.5"), 18, "token 3 of layer 0 listed twice"},
    {"not a number", with(17, "0 3 1 high"), 17, "confidence 'high' is not a number"},
    {"previous device out of range", with(19, "1 5 -> 1 0.5"), 19, "previous device 5 out of range [0, 1]"},
    {"history longer than the layer", with(19, "1 0 1 -> 1 0.5"), 19, "1 to 1 previous devices"},
    {"inter-layer at layer 0", with(19, "0 1 -> 1 0.5"), 19, "layer 0 out of range [1, 1]"},
    {"truncated", without(18, 20), 17, "the file ends early (truncated?)"},
    {"truncated in the slots", without(15, 20), 14,
     "the file ends early (truncated?): expected the slots of layer 1 device 1"},
    {"trailing garbage", plus("0 0 1"), 21, "unexpected content after 'end'"},
    {"sections out of order",
     without(16, 20) +
         std::vector<std::string>{"inter_layer 2", "1 0 -> 1 0.5", "token_devices 10", "0 3 1 0.75", "end"},
     18, "expected 'end', found 'token_devices'"},
    {"unknown section", with(16, "tokens 10"), 16, "expected 'end', found 'tokens'"},
};

class BadPlacementFile : public testing::TestWithParam<BadFile> {};

TEST_P(BadPlacementFile, IsRejectedWithFileLineAndMessage) {
  const BadFile& bad = GetParam();
  TempDir tmp;
  const std::string path = (tmp.path / "bad.txt").string();
  {
    std::ofstream out(path);
    for (const auto& line : bad.lines) out << line << "\n";
  }
  try {
    read_placement_file(path);
    FAIL() << bad.name << ": accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(path + ":" + std::to_string(bad.line) + ": "))
        << bad.name << ": " << message;
    EXPECT_NE(message.find(bad.message), std::string::npos) << bad.name << ": " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadPlacementFile, testing::ValuesIn(kBadFiles),
                         [](const testing::TestParamInfo<BadFile>& info) {
                           std::string name = info.param.name;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(PlacementFile, TheValidBaseOfTheCorpusReads) {
  TempDir tmp;
  const std::string path = (tmp.path / "good.txt").string();
  {
    std::ofstream out(path);
    for (const auto& line : kValidLines) out << line << "\n";
  }
  const PlacementPlan plan = read_placement_file(path);
  EXPECT_EQ(plan.policy.params.at("redundant"), 2);
  EXPECT_EQ(plan.token_devices.device[0][3], 1);
  EXPECT_EQ(plan.inter_layer.predict(1, std::vector<int>{0}).device, 1);
}

}  // namespace
}  // namespace semsim
