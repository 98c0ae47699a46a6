// Bad input given on the command line rather than in a scenario file: --set overrides, --seed, --out,
// unknown subcommands. Each must be rejected with exit code 2 and one "error: " line on stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <regex>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

const std::string kDefaultFile =
    (fs::path(SEMSIM_SOURCE_DIR) / "sim" / "scenarios" / "default.yaml").string();

struct BadCommandLine {
  std::string name;
  std::vector<std::string> args;  // "{OUT}" is replaced by a fresh output folder
  std::vector<std::string> expects;
};

void PrintTo(const BadCommandLine& c, std::ostream* os) {
  *os << "semsim check/run";
  for (const auto& arg : c.args) *os << " " << arg;
}

// A value that came from --set has no line in the scenario file: the message must say it came from
// --set and must not cite a (made-up) line:column of the file.
const std::regex kFileLineColumn(R"(^error: [^ ]+:[0-9]+:[0-9]+:)");

void expect_one_error(const std::vector<std::string>& args, const CliResult& r,
                      const std::vector<std::string>& expects) {
  SCOPED_TRACE(describe(args, r));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const auto lines = split_lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr must be exactly one line";
  EXPECT_TRUE(lines[0].starts_with("error: ")) << lines[0];
  for (const auto& expect : expects)
    EXPECT_NE(lines[0].find(expect), std::string::npos) << "missing '" << expect << "' in: " << lines[0];
}

class SetOverrideTest : public testing::TestWithParam<BadCommandLine> {};

TEST_P(SetOverrideTest, CheckAndRunRejectTheOverride) {
  const BadCommandLine& c = GetParam();
  for (const std::string command : {"check", "run"}) {
    TempDir tmp;
    std::vector<std::string> args{command};
    for (const auto& arg : c.args) args.push_back(arg);
    if (command == "run") {
      args.push_back("--out");
      args.push_back(tmp / "out");
    }
    const CliResult r = run_semsim(args);
    expect_one_error(args, r, c.expects);
    EXPECT_FALSE(std::regex_search(r.err, kFileLineColumn))
        << "a --set value has no line:column in the scenario file, but the message cites one: " << r.err;
    EXPECT_EQ(entries_under(tmp / "out"), std::vector<std::string>{}) << "partial outputs after a failed run";
  }
}

INSTANTIATE_TEST_SUITE_P(
    cli, SetOverrideTest,
    testing::Values(
        BadCommandLine{"StringForInteger",
                       {"default", "--set", "workload.requests=abc"},
                       {"workload.requests: expected an integer, got 'abc'", "--set workload.requests=abc"}},
        BadCommandLine{"ZeroRequests",
                       {"default", "--set", "workload.requests=0"},
                       {"workload.requests: must be in [1,", "--set workload.requests=0"}},
        BadCommandLine{"NegativeRateInAFile",
                       {kDefaultFile, "--set", "workload.arrival.rate=-2"},
                       {kDefaultFile, "workload.arrival.rate: must be in [0.001, 1e+09], got -2",
                        "--set workload.arrival.rate=-2"}},
        BadCommandLine{
            "ModelTypo",
            {"default", "--set", "model=qwen3-30b-a3"},
            {"model: unknown preset 'qwen3-30b-a3' (did you mean 'qwen3-30b-a3b'?)", "--set model="}},
        BadCommandLine{
            "EpNotDividingExperts",
            {"default", "--set", "parallelism.ep=3"},
            {"parallelism.ep: EP size 3 does not divide the 64 routed experts", "--set parallelism.ep=3"}},
        BadCommandLine{"PolicyTypo",
                       {"default", "--set", "policies.dispatch=per-expert"},
                       {"policies.dispatch: unknown value 'per-expert' (did you mean 'per_expert'?)",
                        "--set policies.dispatch=per-expert"}},
        BadCommandLine{
            "UnknownKeyCreatedBySet",
            {"default", "--set", "workload.arival.rate=5"},
            {"workload.arival: unknown key 'arival' (did you mean 'arrival'?)", "--set workload.arival"}},
        BadCommandLine{
            "NotAnAssignment", {"default", "--set", "workload.requests"}, {"expected key.path=value"}},
        BadCommandLine{"EmptyKey", {"default", "--set", "workload..requests=3"}, {"empty key in path"}},
        BadCommandLine{
            "ThroughAScalar", {"default", "--set", "workload.requests.x=1"}, {"'requests' is not a map"}},
        BadCommandLine{"InvalidYamlValue",
                       {"default", "--set", "workload.arrival={process: poisson"},
                       {"value is not valid YAML"}},
        // Hostile values: a misspelt top-level map created by --set (was reported as the file's own
        // unknown key), a second document (was silently dropped), a key that is a list (was an
        // internal error), an alias bomb (was expanded without bound).
        BadCommandLine{"UnknownTopLevelKeyCreatedBySet",
                       {"default", "--set", "foo.bar=3"},
                       {"foo: unknown key 'foo'", "(value set by --set foo.bar=3)"}},
        BadCommandLine{"SecondDocument",
                       {"default", "--set", "name=a\n---\nb"},
                       {"value is not valid YAML", "a second YAML document ('---')"}},
        BadCommandLine{"KeyIsAList",
                       {"default", "--set", "workload.arrival={[a, b]: 1}"},
                       {"value is not valid YAML", "a key must be a name, not a list"}},
        BadCommandLine{
            "AliasBomb",
            {"default", "--set",
             "name=[&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], "
             "&c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], "
             "&e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e], "
             "&g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]]"},
            {"value is not valid YAML", "more than 1000000 YAML nodes"}},
        BadCommandLine{
            "NotUtf8", {"default", "--set", "name=bad\xff"}, {"value is not valid YAML", "not UTF-8 text"}}),
    [](const testing::TestParamInfo<BadCommandLine>& info) { return info.param.name; });

TEST(cliCommandLine, UnknownSubcommandExits2) {
  const std::vector<std::string> args{"simulate", "default"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_NE(r.err, "") << describe(args, r);
  EXPECT_EQ(r.out, "");
}

TEST(cliCommandLine, NoSubcommandExits2) {
  const CliResult r = run_semsim({});
  EXPECT_EQ(r.exit_code, 2) << describe({}, r);
  EXPECT_NE(r.err, "");
}

TEST(cliCommandLine, UnknownListKindExits2) {
  const CliResult r = run_semsim({"list", "gpus"});
  EXPECT_EQ(r.exit_code, 2) << describe({"list", "gpus"}, r);
}

TEST(cliCommandLine, MissingScenarioFileExits2) {
  const std::vector<std::string> args{"check", "no-such-scenario.yaml"};
  const CliResult r = run_semsim(args);
  expect_one_error(args, r, {"no-such-scenario.yaml", "cannot open"});
}

TEST(cliCommandLine, NegativeSeedExits2AndWritesNothing) {
  TempDir tmp;
  const std::vector<std::string> args{"run", "default", "--seed", "-1", "--out", tmp / "out"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(cliCommandLine, UnknownProgressModeExits2AndWritesNothing) {
  TempDir tmp;
  const std::vector<std::string> args{"run", "default", "--progress", "sometimes", "--out", tmp / "out"};
  expect_one_error(args, run_semsim(args), {"--progress: sometimes not in {auto,always,never}"});
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// An --out path that cannot be a folder (an existing regular file) is bad input, not an internal error.
TEST(cliCommandLine, OutPathThatIsAFileIsBadInput) {
  TempDir tmp;
  const std::string file = tmp / "a-file";
  { std::ofstream(file) << "x"; }
  const std::vector<std::string> args{"run", "default", "--set", "workload.requests=5", "--out", file};
  const CliResult r = run_semsim(args);
  expect_one_error(args, r, {file});
  EXPECT_EQ(read_file(file), "x");
}

// NaN compares false with both ends of a range: it must still be refused, not printed as "split nan".
TEST(cliCommandLine, NanSplitAndBalanceAreRefused) {
  TempDir tmp;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"profile", "no-such.semtrace", "--split", "nan", "--out", tmp / "p"},
        std::vector<std::string>{"trace", "fit", "no-such.semtrace", "--split", "nan", "--out", tmp / "f"},
        std::vector<std::string>{"place", "--policy", "semmoe", "--profile", tmp / "p", "--ep", "8",
                                 "--balance", "nan", "--out", tmp / "plan.semplace"},
        std::vector<std::string>{"place", "eval", "plan.semplace", "--trace", "t.semtrace", "--split", "0.5",
                                 "--balance", "nan"}}) {
    const CliResult r = run_semsim(args);
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("'nan' is not a finite number"), std::string::npos);
    EXPECT_EQ(entries_under(tmp.path()), std::vector<std::string>{});
  }
}

// A missing folder for --timeline is found before the simulation runs, not after it (the run's
// outputs are then not written either).
TEST(cliCommandLine, TimelineInAMissingFolderIsRefusedBeforeSimulating) {
  TempDir tmp;
  const std::vector<std::string> args{"run",   "default",   "--set",      "workload.requests=5",
                                      "--out", tmp / "out", "--timeline", tmp / "no-such-folder/t.json"};
  const CliResult r = run_semsim(args);
  expect_one_error(args, r, {"--timeline '" + tmp / "no-such-folder/t.json" + "': no folder"});
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// An endless device or a FIFO as the scenario (or any input): refused as what it is instead of read
// until memory runs out or blocked on forever waiting for a writer.
TEST(cliCommandLine, ScenarioThatIsNoRegularFileIsRefused) {
  TempDir tmp;
  ASSERT_EQ(::mkfifo((tmp / "fifo.yaml").c_str(), 0600), 0);
  for (const std::string& scenario : {std::string("/dev/zero"), tmp / "fifo.yaml"})
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"check", scenario},
          std::vector<std::string>{"run", scenario, "--out", tmp / "out"}}) {
      expect_one_error(args, run_semsim(args, "", 60),
                       {scenario + ": is not a regular file (a FIFO, device or socket is not read)"});
      EXPECT_FALSE(fs::exists(tmp / "out"));
    }
  // Named inside a scenario, it is refused at its key.
  const std::vector<std::string> args{"check", "default", "--set",
                                      "workload.arrival={process: trace, file: " + tmp / "fifo.yaml" + "}"};
  expect_one_error(args, run_semsim(args, "", 60),
                   {"workload.arrival.file: file '" + tmp / "fifo.yaml" + "' is not a regular file"});
}

}  // namespace
}  // namespace semsim::cli_test
