// The malformed-scenario corpus (tests/data/bad-scenarios/*.yaml): every file has exactly one defect and
// a header that says what semsim must report:
//   # expect: <substring of the error message>          (one or more)
//   # expect-location: FILE:LINE:COL  (or FILE:LINE for a plain data file)
// Both `semsim check` and `semsim run` must exit with 2, print exactly one "error: LOCATION: ..." line on
// stderr, nothing on stdout, and leave no output files behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rejected_input.hpp"

namespace semsim::cli_test {
namespace {

const fs::path kBadScenariosDir = fs::path(SEMSIM_SOURCE_DIR) / "tests" / "data" / "bad-scenarios";

struct BadScenario {
  std::string file;  // relative to kBadScenariosDir, which is the working folder of the runs
  std::vector<std::string> expects;
  std::string location;
};

// Test logs name the corpus file instead of dumping the struct's bytes.
void PrintTo(const BadScenario& b, std::ostream* os) {
  *os << b.file;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  const auto first = s.find_first_not_of(' ');
  return first == std::string::npos ? "" : s.substr(first);
}

BadScenario read_header(const fs::path& path) {
  BadScenario b;
  b.file = path.filename().string();
  for (const auto& line : split_lines(read_file(path))) {
    if (!line.starts_with("#")) break;
    if (line.starts_with("# expect: ")) b.expects.push_back(trim(line.substr(10)));
    if (line.starts_with("# expect-location: ")) b.location = trim(line.substr(19));
  }
  return b;
}

std::vector<BadScenario> bad_scenarios() {
  std::vector<BadScenario> out;
  if (!fs::is_directory(kBadScenariosDir)) return out;
  for (const auto& entry : fs::directory_iterator(kBadScenariosDir))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml")
      out.push_back(read_header(entry.path()));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

std::string bad_scenario_name(const testing::TestParamInfo<BadScenario>& info) {
  std::string name = fs::path(info.param.file).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class BadScenarioTest : public testing::TestWithParam<BadScenario> {};

TEST_P(BadScenarioTest, CheckRejectsWithOneLocatedError) {
  const BadScenario& b = GetParam();
  const std::vector<std::string> args{"check", b.file};
  expect_one_located_error(args, run_semsim(args, kBadScenariosDir.string()), b.location, b.expects);
}

TEST_P(BadScenarioTest, RunRejectsAndLeavesNoOutputs) {
  const BadScenario& b = GetParam();
  TempDir tmp;
  const std::string out_dir = tmp / "out";
  const std::vector<std::string> args{"run", b.file, "--out", out_dir};
  expect_one_located_error(args, run_semsim(args, kBadScenariosDir.string()), b.location, b.expects);
  // A leftover empty output folder is tolerated; any file or staging folder inside it is not.
  EXPECT_EQ(entries_under(out_dir), std::vector<std::string>{}) << "partial outputs left in " << out_dir;
}

INSTANTIATE_TEST_SUITE_P(cli, BadScenarioTest, testing::ValuesIn(bad_scenarios()), bad_scenario_name);

TEST(cliCorpus, HasAtLeast24AnnotatedFiles) {
  const auto files = bad_scenarios();
  EXPECT_GE(files.size(), 24u);
  for (const auto& b : files) {
    EXPECT_FALSE(b.expects.empty()) << b.file << " has no '# expect:' line";
    EXPECT_FALSE(b.location.empty()) << b.file << " has no '# expect-location:' line";
    for (const auto& e : b.expects) EXPECT_FALSE(e.empty()) << b.file << " has an empty '# expect:' line";
  }
}

// Each corpus file is a copy of a valid scenario with one defect: the data files it refers to exist
// (except the one that is meant to be missing), so the corpus tests what it claims to.
TEST(cliCorpus, DataFilesReferencedByTheCorpusExist) {
  for (const char* name :
       {"bad-lengths.txt", "zero-lengths.txt", "decreasing-trace.csv", "bad-model.yaml", "profile-a100.yaml",
        "placement-1-layer.txt", "bad-placement.txt", "tiny-flops-cluster.yaml", "tiny-flops-device.yaml",
        "tiny-scaleup-cluster.yaml", "tiny-scaleup-device.yaml", "overflowing-request.semtrace.txt",
        "huge-layers.semtrace.txt", "many-tokens.semtrace.txt"})
    EXPECT_TRUE(fs::is_regular_file(kBadScenariosDir / "data" / name)) << name;
  for (const char* name : {"no-such-trace.csv", "no-such-placement.txt", "no-such-profile"})
    EXPECT_FALSE(fs::exists(kBadScenariosDir / "data" / name)) << name;
  EXPECT_FALSE(fs::exists(kBadScenariosDir / "profiles" / "missing-profile.yaml"));
}

// The template the corpus was made from is itself valid, so each corpus file fails for its own defect.
TEST(cliCorpus, TemplateWithoutDefectPassesCheck) {
  const std::vector<std::string> args{"check", "data/valid-base.yaml"};
  const CliResult r = run_semsim(args, kBadScenariosDir.string());
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.out.starts_with("data/valid-base.yaml: ok\n")) << r.out;
}

}  // namespace
}  // namespace semsim::cli_test
