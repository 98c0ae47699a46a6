// Sweep files: expansion (cartesian, zipped, series), stable point ids, and input errors.
#include "sim/runs/sweep_file.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/cli/cli_runner.hpp"

namespace semsim {
namespace {

using cli_test::TempDir;

// Writes `text` to DIR/name and returns the path.
std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& sweep_path) {
  try {
    load_sweep(sweep_path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<std::vector<std::string>> labels_of(const Sweep& sweep) {
  std::vector<std::vector<std::string>> labels;
  for (const auto& p : sweep.points) labels.push_back(p.labels);
  return labels;
}

TEST(sweepFile, AxesFormACartesianProductLastAxisFastest) {
  TempDir dir;
  const Sweep sweep = load_sweep(write(dir, "s.yaml", R"(sweep: 1
base: default
axes:
  - workload.arrival.rate: [5, 10]
  - workload.seed: [1, 2, 3]
)"));
  EXPECT_EQ(sweep.columns, (std::vector<std::string>{"workload.arrival.rate", "workload.seed"}));
  EXPECT_EQ(labels_of(sweep),
            (std::vector<std::vector<std::string>>{
                {"5", "1"}, {"5", "2"}, {"5", "3"}, {"10", "1"}, {"10", "2"}, {"10", "3"}}));
  std::set<std::string> ids;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    const SweepPoint& p = sweep.points[i];
    EXPECT_EQ(p.index, i);
    ASSERT_TRUE(p.scenario.has_value()) << p.error;
    ids.insert(p.id);
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(sweep.points[4].scenario->workload.seed, 2u);
  EXPECT_DOUBLE_EQ(sweep.points[4].scenario->workload.arrival.rate, 10.0);
}

TEST(sweepFile, KeysInOneAxisItemStepTogether) {
  TempDir dir;
  const Sweep sweep = load_sweep(write(dir, "s.yaml", R"(sweep: 1
base: default
axes:
  - {workload.input_len.value: [256, 1024], workload.output_len.value: [512, 128]}
  - workload.seed: [1, 2]
)"));
  EXPECT_EQ(sweep.columns, (std::vector<std::string>{"workload.input_len.value", "workload.output_len.value",
                                                     "workload.seed"}));
  EXPECT_EQ(labels_of(sweep),
            (std::vector<std::vector<std::string>>{
                {"256", "512", "1"}, {"256", "512", "2"}, {"1024", "128", "1"}, {"1024", "128", "2"}}));
  EXPECT_EQ(sweep.points[2].scenario->workload.input_len.upper_bound(), 1024);
  EXPECT_EQ(sweep.points[2].scenario->workload.output_len.upper_bound(), 128);
}

TEST(sweepFile, SeriesBundleSeveralKeysAndComeOutermost) {
  TempDir dir;
  const Sweep sweep = load_sweep(write(dir, "s.yaml", R"(sweep: 1
base: default
set: {workload.requests: 50}
series:
  rr-dedup: {policies.request_scheduling: round_robin, policies.dispatch: dedup}
  sq-per-expert: {policies.request_scheduling: shortest_queue, policies.dispatch: per_expert}
axes:
  - workload.arrival.rate: [5, 10]
)"));
  EXPECT_EQ(sweep.columns, (std::vector<std::string>{"series", "workload.arrival.rate"}));
  EXPECT_EQ(labels_of(sweep),
            (std::vector<std::vector<std::string>>{
                {"rr-dedup", "5"}, {"rr-dedup", "10"}, {"sq-per-expert", "5"}, {"sq-per-expert", "10"}}));
  for (const SweepPoint& p : sweep.points) {
    ASSERT_TRUE(p.scenario.has_value()) << p.error;
    EXPECT_EQ(p.scenario->workload.requests, 50);
  }
  EXPECT_EQ(sweep.points[0].scenario->request_scheduling.name, "round_robin");
  EXPECT_EQ(sweep.points[0].scenario->dispatch_name, "dedup");
  EXPECT_EQ(sweep.points[3].scenario->request_scheduling.name, "shortest_queue");
  EXPECT_EQ(sweep.points[3].scenario->dispatch_name, "per_expert");
}

TEST(sweepFile, NoAxesIsOnePoint) {
  TempDir dir;
  const Sweep sweep = load_sweep(write(dir, "s.yaml", "sweep: 1\nbase: default\n"));
  ASSERT_EQ(sweep.points.size(), 1u);
  EXPECT_TRUE(sweep.columns.empty());
  EXPECT_TRUE(sweep.points[0].scenario.has_value());
}

TEST(sweepFile, PointIdIgnoresKeyOrderAndNumberSpelling) {
  const YAML::Node a = YAML::Load("schema: 1\nworkload: {requests: 20, seed: 1}\nmodel: m\n");
  const YAML::Node b = YAML::Load("model: m\nworkload:\n  seed: 1.0\n  requests: 2e1\nschema: 1\n");
  const YAML::Node c = YAML::Load("schema: 1\nworkload: {requests: 21, seed: 1}\nmodel: m\n");
  EXPECT_EQ(point_id(a), point_id(b));
  EXPECT_NE(point_id(a), point_id(c));
  EXPECT_EQ(point_id(a).size(), 16u);
  EXPECT_EQ(point_id(a).find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(sweepFile, PointIdIsTheSameWhereverAValueWasSet) {
  // The same resolved scenario from a base with the keys in another order and the value set by the
  // sweep rather than written in the base: one id.
  TempDir dir;
  write(dir, "base-a.yaml", default_scenario_text());
  std::string reordered = default_scenario_text();
  const auto at = reordered.find("workload:");
  reordered = reordered.substr(at) + "\n" + reordered.substr(0, at);
  write(dir, "base-b.yaml", reordered);
  const Sweep a =
      load_sweep(write(dir, "a.yaml", "sweep: 1\nbase: base-a.yaml\naxes:\n  - workload.seed: [1, 2]\n"));
  const Sweep b = load_sweep(write(dir, "b.yaml", "sweep: 1\nbase: base-b.yaml\nset: {workload.seed: 2}\n"));
  ASSERT_EQ(a.points.size(), 2u);
  ASSERT_EQ(b.points.size(), 1u);
  EXPECT_EQ(a.points[1].id, b.points[0].id);
  EXPECT_NE(a.points[0].id, b.points[0].id);
}

TEST(sweepFile, AnInvalidCombinationIsAFailedPointNotAnError) {
  // Mixtral has 8 experts: EP 16 is valid for DeepSeek-V2-Lite (64) and EP 8 for Mixtral, but not
  // EP 16 for Mixtral.
  TempDir dir;
  const Sweep sweep = load_sweep(write(dir, "s.yaml", R"(sweep: 1
base: default
set: {cluster: h200-2x8}
axes:
  - model: [deepseek-v2-lite, mixtral-8x7b]
  - parallelism.ep: [8, 16]
)"));
  ASSERT_EQ(sweep.points.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(sweep.points[i].scenario.has_value()) << sweep.points[i].error;
  EXPECT_FALSE(sweep.points[3].scenario.has_value());
  EXPECT_NE(sweep.points[3].error.find("does not divide the 8 routed experts"), std::string::npos)
      << sweep.points[3].error;
}

struct BadSweep {
  std::string name;
  std::string text;
  std::vector<std::string> expected;  // substrings of the one error message
};

void PrintTo(const BadSweep& bad, std::ostream* out) {
  *out << bad.name;
}

class sweepFileErrors : public testing::TestWithParam<BadSweep> {};

TEST_P(sweepFileErrors, NameFileLineColumnAndKeyPath) {
  TempDir dir;
  const std::string path = write(dir, "bad.yaml", GetParam().text);
  const std::string message = error_of(path);
  for (const std::string& part : GetParam().expected)
    EXPECT_NE(message.find(part), std::string::npos) << "expected '" << part << "' in: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    sweepFile, sweepFileErrors,
    testing::Values(
        BadSweep{"UnknownKeyPath",
                 "sweep: 1\nbase: default\naxes:\n  - workload.arival.rate: [5, 10]\n",
                 {"workload.arival: unknown key 'arival' (did you mean 'arrival'?)", "bad.yaml:4:28"}},
        BadSweep{"BadValue",
                 "sweep: 1\nbase: default\naxes:\n  - workload.arrival.rate: [5, -1]\n",
                 {"workload.arrival.rate: must be in [0.001, 1e+09], got -1", "bad.yaml:4:32"}},
        BadSweep{
            "BadSeriesValue",
            "sweep: 1\nbase: default\nseries:\n  a: {policies.dispatch: per-expert}\n",
            {"policies.dispatch: unknown value 'per-expert' (did you mean 'per_expert'?)", "bad.yaml:4:26"}},
        BadSweep{"ZipLengthsDiffer",
                 "sweep: 1\nbase: default\naxes:\n  - {workload.seed: [1, 2], workload.requests: [5]}\n",
                 {"bad.yaml:4:48", "axes[0].workload.requests", "same length"}},
        BadSweep{"EmptyAxis",
                 "sweep: 1\nbase: default\naxes:\n  - workload.seed: []\n",
                 {"bad.yaml:4:20", "axes[0].workload.seed", "at least one value"}},
        BadSweep{"AxisNotAList",
                 "sweep: 1\nbase: default\naxes:\n  - workload.seed: 3\n",
                 {"bad.yaml:4:20", "axes[0].workload.seed: expected a list"}},
        BadSweep{"UnknownSweepKey",
                 "sweep: 1\nbase: default\naxis: []\n",
                 {"bad.yaml:3:1", "unknown key 'axis' (did you mean 'axes'?)"}},
        BadSweep{"KeyGivenTwice",
                 "sweep: 1\nbase: default\nset: {workload.seed: 3}\naxes:\n  - workload.seed: [1, 2]\n",
                 {"bad.yaml:1:1", "'workload.seed' is given in set and again in axes[0]"}},
        BadSweep{"DuplicatePoints",
                 "sweep: 1\nbase: default\naxes:\n  - workload.arrival.rate: [5, 5.0]\n",
                 {"bad.yaml:1:1", "points 1 (5) and 2 (5.0) resolve to the same scenario"}},
        BadSweep{"MissingBase",
                 "sweep: 1\nbase: nowhere.yaml\n",
                 {"bad.yaml:2:7: base:", "cannot open scenario file"}},
        BadSweep{
            "WrongVersion", "sweep: 2\nbase: default\n", {"bad.yaml:1:8: sweep: unsupported sweep version"}},
        BadSweep{"SyntaxError", "sweep: 1\nbase: [default\n", {"bad.yaml:3:1: YAML syntax error"}},
        // Hostile inputs: a key that is a list or map (was an internal yaml-cpp conversion error), an
        // alias bomb in `set` (was expanded without bound), a product of a million points (was 85 s
        // and 8 GB of validation before anything said it was too large).
        BadSweep{"SetKeyIsAList",
                 "sweep: 1\nbase: default\nset:\n  ? [a, b]\n  : 1\n",
                 {"bad.yaml:4:5: set: a key must be a name, not a list"}},
        BadSweep{"AxisKeyIsAMap",
                 "sweep: 1\nbase: default\naxes:\n  - {? {a: 1} : [1, 2]}\n",
                 {"bad.yaml:4:8: axes[0]: a key must be a name, not a map"}},
        BadSweep{"SeriesKeyIsAList",
                 "sweep: 1\nbase: default\nseries:\n  a: {? [b] : 1}\n",
                 {"bad.yaml:4:9: series.a: a key must be a name, not a list"}},
        BadSweep{
            "AliasBombInSet",
            "sweep: 1\nbase: default\nx: &x [a, a, a, a, a, a, a, a, a, a]\n"
            "y: &y [*x, *x, *x, *x, *x, *x, *x, *x, *x, *x]\nz: &z [*y, *y, *y, *y, *y, *y, *y, *y, *y, *y]\n"
            "w: &w [*z, *z, *z, *z, *z, *z, *z, *z, *z, *z]\nv: &v [*w, *w, *w, *w, *w, *w, *w, *w, *w, *w]\n"
            "u: &u [*v, *v, *v, *v, *v, *v, *v, *v, *v, *v]\n"
            "set: {name: [*u, *u, *u, *u, *u, *u, *u, *u, *u, *u]}\n",
            {"bad.yaml:", "more than 1000000 YAML nodes (counting each use of an alias)"}},
        BadSweep{"AMillionPoints",
                 [] {
                   std::string text = "sweep: 1\nbase: default\naxes:\n  - workload.seed: [";
                   for (int i = 0; i < 1000; ++i) text += (i ? ", " : "") + std::to_string(i);
                   text += "]\n  - workload.requests: [";
                   for (int i = 1; i <= 1000; ++i) text += (i > 1 ? ", " : "") + std::to_string(i);
                   return text + "]\n";
                 }(),
                 {"bad.yaml:1:1", "the sweep has 1000000 points, more than the 100000 one sweep may have"}}),
    [](const testing::TestParamInfo<BadSweep>& info) { return info.param.name; });

}  // namespace
}  // namespace semsim
