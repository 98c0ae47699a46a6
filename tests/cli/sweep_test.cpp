// `semsim sweep`: one row per point, per-point outputs, determinism whatever -j, resume after a
// kill (no lost, duplicated or torn rows), failing points, shards and merge, bad sweep files.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "sim/outputs/points_csv.hpp"

namespace semsim::cli_test {
namespace {

// 2 series x 2 rates of a short default scenario. The sweeps here price with the datasheet profile:
// what they test does not depend on the calibration, and reading the measured one costs each point
// 0.7 s.
constexpr const char* kSmallSweep = R"(sweep: 1
base: default
set: {workload.requests: 30, calibration: datasheet}
series:
  rr: {policies.request_scheduling: round_robin}
  sq: {policies.request_scheduling: shortest_queue}
axes:
  - workload.arrival.rate: [10, 40]
)";

std::string write_sweep(const TempDir& dir, const std::string& text, const std::string& name = "sweep.yaml") {
  const std::string path = dir / name;
  std::ofstream(path) << text;
  return path;
}

CliResult sweep(const std::vector<std::string>& args, int timeout_s = 120 * kSlowdown) {
  std::vector<std::string> full{"sweep"};
  full.insert(full.end(), args.begin(), args.end());
  return run_semsim(full, "", timeout_s);
}

// A points.csv header's columns by key: `at` is the header's size for a key it lacks.
struct PointsHeader {
  explicit PointsHeader(const std::string& line) : keys(split_csv_line(line)) {}
  std::size_t at(const std::string& key) const {
    return static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
  }
  std::size_t size() const { return keys.size(); }
  std::vector<std::string> keys;
};

// Sweeps `file` into tmp/out, which must give two points: points.csv's header (empty on failure).
PointsHeader two_point_sweep(const TempDir& tmp, const std::string& file) {
  const CliResult r = sweep({file, "--out", tmp / "out"});
  EXPECT_EQ(r.exit_code, 0) << describe({file}, r);
  const auto lines = split_lines(read_file(fs::path(tmp / "out") / "points.csv"));
  EXPECT_EQ(lines.size(), 3u);
  PointsHeader header(lines.empty() ? "" : lines[0]);
  if (r.exit_code != 0 || lines.size() != 3) header.keys.clear();
  return header;
}

std::vector<std::string> column(const std::string& points_csv, std::size_t index) {
  std::vector<std::string> values;
  const auto lines = split_lines(read_file(points_csv));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = split_csv_line(lines[i]);
    values.push_back(index < fields.size() ? fields[index] : "");
  }
  return values;
}

TEST(cliSweep, OneRowPerPointInExpansionOrderAndTheSameBytesWhateverJobs) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, kSmallSweep);
  const CliResult one = sweep({file, "-j", "1", "--out", tmp / "j1"});
  ASSERT_EQ(one.exit_code, 0) << describe({file}, one);
  const CliResult two = sweep({file, "-j", "3", "--out", tmp / "j3"});
  ASSERT_EQ(two.exit_code, 0) << describe({file}, two);
  EXPECT_NE(one.out.find("4 points: 0 done before, 4 ran, 0 failed"), std::string::npos) << one.out;
  EXPECT_NE(one.err.find("sweep: 4/4 done, 0 failed"), std::string::npos) << one.err;

  const std::string csv = read_file(fs::path(tmp / "j1") / "points.csv");
  EXPECT_EQ(csv, read_file(fs::path(tmp / "j3") / "points.csv"));
  const auto lines = split_lines(csv);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_TRUE(lines[0].starts_with("point_id,status,series,workload.arrival.rate,scenario,")) << lines[0];
  EXPECT_TRUE(lines[0].ends_with(",error")) << lines[0];
  EXPECT_EQ(lines[0].find("wall_seconds"), std::string::npos);
  EXPECT_EQ(column(tmp / "j1/points.csv", 1), (std::vector<std::string>{"ok", "ok", "ok", "ok"}));
  EXPECT_EQ(column(tmp / "j1/points.csv", 2), (std::vector<std::string>{"rr", "rr", "sq", "sq"}));
  EXPECT_EQ(column(tmp / "j1/points.csv", 3), (std::vector<std::string>{"10", "40", "10", "40"}));
  EXPECT_EQ(column(tmp / "j1/points.csv", 11),  // after placement and placement_file
            (std::vector<std::string>{"round_robin", "round_robin", "shortest_queue", "shortest_queue"}));

  // Each point's outputs in points/ID/, and its summary agrees with its row.
  for (const std::string& id : column(tmp / "j1/points.csv", 0)) {
    const fs::path dir = fs::path(tmp / "j1") / "points" / id;
    std::vector<std::string> entries = entries_under(dir);
    std::sort(entries.begin(), entries.end());
    EXPECT_EQ(entries, (std::vector<std::string>{"requests.csv", "scenario.resolved.yaml", "steps.csv",
                                                 "summary.json"}))
        << id;
    const auto summary = nlohmann::json::parse(read_file(dir / "summary.json"));
    EXPECT_EQ(summary["requests_completed"], 30);
  }

  // Running again skips every point and leaves the file as it was.
  const CliResult again = sweep({file, "-j", "2", "--out", tmp / "j1"});
  EXPECT_EQ(again.exit_code, 0) << describe({file}, again);
  EXPECT_NE(again.out.find("4 points: 4 done before, 0 ran, 0 failed"), std::string::npos) << again.out;
  EXPECT_EQ(read_file(fs::path(tmp / "j1") / "points.csv"), csv);
}

// summary.json's values by dotted key path (as points.csv names its columns), strings unquoted,
// null empty.
std::map<std::string, std::string> flat_summary(const nlohmann::json& j, const std::string& prefix = "") {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      out.merge(flat_summary(value, path));
    else
      out[path] = value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
  }
  return out;
}

// Series whose summaries differ in shape (a placement file or not, Attention-DP or TP) still fill
// the same columns: every row agrees with its own summary.json column by column.
TEST(cliSweep, RowsOfDifferentlyShapedSummariesShareOneColumnLayout) {
  TempDir tmp;
  const std::vector<std::vector<std::string>> setup{
      {"trace", "synth", "default", "--requests", "40", "--out", tmp / "t.semtrace"},
      {"profile", tmp / "t.semtrace", "--out", tmp / "profile"},
      {"place", "--policy", "round_robin", "--profile", tmp / "profile", "--ep", "8", "--out",
       tmp / "rr.semplace"}};
  for (const auto& args : setup) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  }
  // On the embedded default scenario, a relative path resolves against the sweep file's folder.
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 12, calibration: datasheet}
series:
  inline-dp: {policies.placement: contiguous, parallelism.attention: dp}
  file-dp: {policies.placement: {file: rr.semplace}, parallelism.attention: dp}
  file-tp: {policies.placement: {file: rr.semplace}, parallelism.attention: tp}
)");
  const CliResult r = sweep({file, "--out", tmp / "out"});
  ASSERT_EQ(r.exit_code, 0) << describe({file}, r);
  const auto lines = split_lines(read_file(fs::path(tmp / "out") / "points.csv"));
  ASSERT_EQ(lines.size(), 4u);
  const std::vector<std::string> header = split_csv_line(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> row = split_csv_line(lines[i]);
    ASSERT_EQ(row.size(), header.size());
    ASSERT_EQ(row[1], "ok") << lines[i];
    const auto summary = flat_summary(
        nlohmann::json::parse(read_file(fs::path(tmp / "out") / "points" / row[0] / "summary.json")));
    for (const auto& [key, value] : summary) {
      const auto at = std::find(header.begin(), header.end(), key);
      if (key == "wall_seconds") continue;
      ASSERT_NE(at, header.end()) << key;
      EXPECT_EQ(row[static_cast<std::size_t>(at - header.begin())], value) << row[2] << " " << key;
    }
  }
  EXPECT_EQ(column(tmp / "out/points.csv", 2), (std::vector<std::string>{"inline-dp", "file-dp", "file-tp"}));
  // The placement file as the sweep wrote it, so that rows do not depend on where the sweep ran.
  const auto placement_file = std::find(header.begin(), header.end(), "placement_file") - header.begin();
  EXPECT_EQ(column(tmp / "out/points.csv", static_cast<std::size_t>(placement_file)),
            (std::vector<std::string>{"", "rr.semplace", "rr.semplace"}));
}

// Lengths of other distributions than the blank summary's fixed ones have their own keys (a
// lognormal's median and sigma): each gets a column, beside the keys of its distribution.
TEST(cliSweep, LengthDistributionsNameTheirParametersInColumns) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 12, calibration: datasheet}
series:
  fixed: {workload.output_len: {dist: fixed, value: 8}}
  lognormal: {workload.output_len: {dist: lognormal, median: 8, sigma: 0.5, min: 2, max: 32}}
)");
  const PointsHeader header = two_point_sweep(tmp, file);
  ASSERT_FALSE(header.keys.empty());
  ASSERT_LT(header.at("workload.output_len.median"), header.size());
  EXPECT_EQ(header.at("workload.output_len.median"), header.at("workload.output_len.dist") + 1);
  EXPECT_EQ(column(tmp / "out/points.csv", header.at("workload.output_len.median")),
            (std::vector<std::string>{"", "8.0"}));
  EXPECT_EQ(column(tmp / "out/points.csv", header.at("workload.output_len.value")),
            (std::vector<std::string>{"8", ""}));
}

// Speculative decoding adds its own keys: columns filled for its points, empty for the plain one.
TEST(cliSweep, SpeculativeDecodingHasItsColumns) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 12, calibration: datasheet, serving.max_running_requests: 64}
series:
  plain: {}
  mtp: {serving.speculative: {method: mtp, tokens: 2, acceptance: {dist: fixed, rate: 1}}}
)");
  const PointsHeader header = two_point_sweep(tmp, file);
  ASSERT_FALSE(header.keys.empty());
  ASSERT_LT(header.at("speculative.position_acceptance"), header.size());
  EXPECT_EQ(column(tmp / "out/points.csv", header.at("speculative.tokens")),
            (std::vector<std::string>{"", "2"}));
  EXPECT_EQ(column(tmp / "out/points.csv", header.at("speculative.position_acceptance")),
            (std::vector<std::string>{"", "[1.0,1.0]"}));
}

// The prefix cache adds its keys; a sweep over the share of requests with a shared prefix fills them.
TEST(cliSweep, PrefixCachingHasItsColumnsAndItsShareSweeps) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 24, calibration: datasheet, serving.prefix_cache: true,
      workload.prefix: {groups: 1, length: 256, share: 0}}
axes:
  - workload.prefix.share: [0, 1]
)");
  const PointsHeader header = two_point_sweep(tmp, file);
  ASSERT_FALSE(header.keys.empty());
  ASSERT_LT(header.at("prefix_cache.hit_rate"), header.size());
  const std::vector<std::string> cached =
      column(tmp / "out/points.csv", header.at("prefix_cache.cached_tokens"));
  ASSERT_EQ(cached.size(), 2u);
  EXPECT_EQ(cached[0], "0");
  EXPECT_GT(std::stoll(cached[1]), 0);
}

TEST(cliSweep, AFailingPointIsRecordedWithItsErrorAndTheOthersRun) {
  // Mixtral's 8 experts cannot be split over EP 16; every other combination is valid.
  TempDir tmp;
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {cluster: h200-2x8, workload.requests: 4, calibration: datasheet}
axes:
  - model: [deepseek-v2-lite, mixtral-8x7b]
  - parallelism.ep: [8, 16]
)");
  const CliResult r = sweep({file, "-j", "2", "--out", tmp / "out"});
  ASSERT_EQ(r.exit_code, 0) << describe({file}, r);
  EXPECT_NE(r.out.find("4 points: 0 done before, 4 ran, 1 failed"), std::string::npos) << r.out;
  const std::string csv = tmp / "out/points.csv";
  EXPECT_EQ(column(csv, 1), (std::vector<std::string>{"ok", "ok", "ok", "failed"}));
  const std::string last = split_lines(read_file(csv)).back();
  EXPECT_NE(last.find("EP size 16 does not divide the 8 routed experts"), std::string::npos) << last;
  EXPECT_FALSE(fs::exists(fs::path(tmp / "out/points") / column(csv, 0)[3]));

  const CliResult retry = sweep({file, "--retry-failed", "--out", tmp / "out"});
  EXPECT_EQ(retry.exit_code, 0) << describe({file}, retry);
  EXPECT_NE(retry.out.find("4 points: 3 done before, 1 ran, 1 failed"), std::string::npos) << retry.out;
  EXPECT_EQ(column(csv, 1).size(), 4u);
}

TEST(cliSweep, ResumesAfterAKillWithoutLostDuplicatedOrTornRows) {
  TempDir tmp;
  // The datasheet profile: reading the measured one takes long enough that the kill below would
  // land before the first point, not among them.
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 300, outputs.steps_csv: false, calibration: datasheet}
axes:
  - workload.seed: [1, 2, 3, 4, 5, 6, 7, 8]
)");
  const CliResult reference = sweep({file, "-j", "2", "--out", tmp / "reference"});
  ASSERT_EQ(reference.exit_code, 0) << describe({file}, reference);
  const std::string expected = read_file(fs::path(tmp / "reference") / "points.csv");

  // SIGKILL after one second (longer under the sanitizers), in the middle of the points.
  const std::string out = tmp / "out";
  const CliResult killed = sweep({file, "-j", "1", "--out", out}, kSlowdown);
  const auto rows_before = split_lines(read_file(fs::path(out) / "points.csv")).size() - 1;
  SCOPED_TRACE("killed run: exit " + std::to_string(killed.exit_code) + ", " + std::to_string(rows_before) +
               " rows");
  // ...and a row cut short as a write interrupted mid-line would leave it.
  {
    std::ofstream torn(fs::path(out) / "points.csv", std::ios::app | std::ios::binary);
    torn << column(tmp / "reference/points.csv", 0).back() << ",ok,8,default,deepseek-v2";
  }
  const CliResult resumed = sweep({file, "-j", "2", "--out", out});
  ASSERT_EQ(resumed.exit_code, 0) << describe({file}, resumed);
  EXPECT_NE(resumed.err.find("dropped 1 torn row(s)"), std::string::npos) << resumed.err;
  EXPECT_NE(resumed.out.find(std::to_string(rows_before) + " done before"), std::string::npos) << resumed.out;
  EXPECT_EQ(read_file(fs::path(out) / "points.csv"), expected);
  for (const std::string& entry : entries_under(fs::path(out) / "points"))
    EXPECT_EQ(entry.find(".staging-"), std::string::npos) << entry;
}

// sweep.fingerprint is replaced by rename, so a kill never leaves it torn; the temporary of a killed
// sweep is removed by the next one.
TEST(cliSweep, AKilledSweepsFingerprintTemporaryIsRemovedOnResume) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, kSmallSweep);
  const fs::path out = tmp / "out";
  ASSERT_EQ(sweep({file, "--out", out.string()}).exit_code, 0);
  const std::string fingerprint = read_file(out / "sweep.fingerprint");
  const fs::path leftover = out / ".partial-2147483646-sweep.fingerprint";  // no process has this id
  std::ofstream(leftover) << fingerprint.substr(0, 3);
  const CliResult resumed = sweep({file, "--out", out.string()});
  ASSERT_EQ(resumed.exit_code, 0) << describe({file}, resumed);
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_EQ(read_file(out / "sweep.fingerprint"), fingerprint);
}

TEST(cliSweep, ShardsPartitionThePointsAndMergeEqualsAnUnshardedRun) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, R"(sweep: 1
base: default
set: {workload.requests: 10, calibration: datasheet}
axes:
  - workload.arrival.rate: [5, 10, 20, 40, 80]
  - workload.seed: [1, 2]
)");
  ASSERT_EQ(sweep({file, "-j", "2", "--out", tmp / "whole"}).exit_code, 0);
  const std::vector<std::string> all = column(tmp / "whole/points.csv", 0);
  ASSERT_EQ(all.size(), 10u);

  std::vector<std::string> shard_dirs;
  std::map<std::string, int> shard_of;
  for (int i = 0; i < 3; ++i) {
    const std::string dir = tmp / ("shard-" + std::to_string(i));
    const CliResult r = sweep({file, "--shard", std::to_string(i) + "/3", "--out", dir});
    ASSERT_EQ(r.exit_code, 0) << describe({file}, r);
    shard_dirs.push_back(dir);
    for (const std::string& id : column(dir + "/points.csv", 0)) {
      EXPECT_FALSE(shard_of.contains(id)) << id << " is in shards " << shard_of[id] << " and " << i;
      shard_of[id] = i;
    }
  }
  EXPECT_EQ(shard_of.size(), all.size());
  for (std::size_t p = 0; p < all.size(); ++p) EXPECT_EQ(shard_of[all[p]], static_cast<int>(p % 3)) << p;

  std::vector<std::string> args{"merge", file, "--out", tmp / "merged"};
  args.insert(args.end(), shard_dirs.begin(), shard_dirs.end());
  const CliResult merged = sweep(args);
  ASSERT_EQ(merged.exit_code, 0) << describe(args, merged);
  EXPECT_NE(merged.out.find("merged 10 of 10 points from 3 shard folders"), std::string::npos) << merged.out;
  EXPECT_EQ(read_file(fs::path(tmp / "merged") / "points.csv"),
            read_file(fs::path(tmp / "whole") / "points.csv"));
  for (const std::string& id : all)
    EXPECT_EQ(read_file(fs::path(tmp / "merged") / "points" / id / "requests.csv"),
              read_file(fs::path(tmp / "whole") / "points" / id / "requests.csv"));

  // A shard missing: what the others hold is merged, and the exit code says the sweep is not whole.
  const CliResult partial = sweep({"merge", file, "--out", tmp / "partial", shard_dirs[0], shard_dirs[1]});
  EXPECT_EQ(partial.exit_code, 3) << partial.err;
  EXPECT_NE(partial.err.find("incomplete merge: 3 of 10 points are in no shard yet"), std::string::npos)
      << partial.err;
  EXPECT_EQ(column(tmp / "partial/points.csv", 0).size(), 7u);

  // A shard given twice has its points twice: refused.
  const CliResult twice = sweep({"merge", file, "--out", tmp / "twice", shard_dirs[0], shard_dirs[0]});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("is in both"), std::string::npos) << twice.err;
}

// The same sweep again resumes (nothing runs); with points added it extends the folder (only the new
// points run). A sweep whose points differ from those recorded (a value edited changes every point's
// id) is refused, nothing touched; --force removes only the points it does not have and keeps the
// points both share.
TEST(cliSweep, AnExtendedSweepRunsOnlyItsNewPointsAnEditedOneIsRefusedUnlessForced) {
  TempDir tmp;
  const std::string first = write_sweep(tmp, kSmallSweep);
  const std::string out = tmp / "out";
  ASSERT_EQ(sweep({first, "--out", out}).exit_code, 0);
  const CliResult again = sweep({first, "--out", out});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("4 done before, 0 ran"), std::string::npos) << again.out;
  const std::vector<std::string> first_ids = column(out + "/points.csv", 0);

  std::string extended_text = kSmallSweep;
  extended_text.replace(extended_text.find("[10, 40]"), 8, "[10, 20, 40]");
  const CliResult extended = sweep({write_sweep(tmp, extended_text, "extended.yaml"), "--out", out});
  ASSERT_EQ(extended.exit_code, 0) << extended.err;
  EXPECT_NE(extended.out.find("6 points: 4 done before, 2 ran"), std::string::npos) << extended.out;
  const std::vector<std::string> extended_ids = column(out + "/points.csv", 0);
  EXPECT_EQ(extended_ids.size(), 6u);
  for (const std::string& id : first_ids)
    EXPECT_NE(std::find(extended_ids.begin(), extended_ids.end(), id), extended_ids.end()) << id;
  const std::string rows_before = read_file(out + "/points.csv");

  // One series' value edited: its 3 points are new ids, the folder's 3 old ones are not this sweep's.
  std::string edited_text = extended_text;
  edited_text.replace(edited_text.find("sq: {policies.request_scheduling: shortest_queue}"), 49,
                      "sq: {policies.request_scheduling: shortest_queue, workload.seed: 7}");
  const std::string edited = write_sweep(tmp, edited_text, "edited.yaml");
  const CliResult refused = sweep({edited, "--out", out});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("holds 3 point(s) this sweep does not have as recorded"), std::string::npos)
      << refused.err;
  EXPECT_EQ(read_file(out + "/points.csv"), rows_before);

  const CliResult forced = sweep({edited, "--out", out, "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("6 points: 3 done before, 3 ran"), std::string::npos) << forced.out;
  std::vector<std::string> ids = column(out + "/points.csv", 0), folders;
  for (const auto& entry : fs::directory_iterator(out + "/points"))
    folders.push_back(entry.path().filename());
  std::sort(ids.begin(), ids.end());
  std::sort(folders.begin(), folders.end());
  EXPECT_EQ(folders, ids);  // the removed points' folders went with their rows
}

// --progress as the other long commands take it. Into a log (stderr not a terminal, as here) auto and
// always write a plain line per finished point and no carriage return; never draws nothing. The
// points are the same whichever.
TEST(cliSweep, ProgressIsPlainLinesInALogAndNothingWhenNot) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, kSmallSweep);
  const CliResult logged = sweep({file, "--out", tmp / "auto"});
  ASSERT_EQ(logged.exit_code, 0) << logged.err;
  EXPECT_EQ(logged.err.find('\r'), std::string::npos) << logged.err;
  EXPECT_NE(logged.err.find("sweep: 4/4 done, 0 failed"), std::string::npos) << logged.err;
  const CliResult always = sweep({file, "--out", tmp / "always", "--progress", "always"});
  ASSERT_EQ(always.exit_code, 0) << always.err;
  EXPECT_EQ(always.err.find('\r'), std::string::npos) << always.err;
  EXPECT_NE(always.err.find("sweep: 4/4 done, 0 failed"), std::string::npos) << always.err;
  const CliResult never = sweep({file, "--out", tmp / "never", "--progress", "never"});
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_EQ(never.err, "");
  EXPECT_EQ(read_file(tmp / "never/points.csv"), read_file(tmp / "auto/points.csv"));
  EXPECT_EQ(read_file(tmp / "always/points.csv"), read_file(tmp / "auto/points.csv"));
}

TEST(cliSweep, DryRunListsAShardsPointsAndWritesNothing) {
  TempDir tmp;
  const std::string file = write_sweep(tmp, kSmallSweep);
  const CliResult r = sweep({file, "--dry-run", "--shard", "1/2", "--out", tmp / "out"});
  ASSERT_EQ(r.exit_code, 0) << describe({file}, r);
  const auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], file + ": 4 points; point_id series workload.arrival.rate");
  EXPECT_TRUE(lines[1].ends_with(" rr 40")) << lines[1];
  EXPECT_TRUE(lines[2].ends_with(" sq 40")) << lines[2];
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

TEST(cliSweep, ABadSweepFileExits2BeforeWritingAnything) {
  TempDir tmp;
  const std::string file = write_sweep(
      tmp, "sweep: 1\nbase: default\naxes:\n  - workload.arrival.rate: [5, 10]\n  - workload.sed: [1]\n");
  const CliResult r = sweep({file, "--out", tmp / "out"});
  EXPECT_EQ(r.exit_code, 2) << describe({file}, r);
  EXPECT_NE(r.err.find("workload.sed: unknown key 'sed' (did you mean 'seed'?)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(file + ":5:20"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));

  const CliResult shard =
      sweep({write_sweep(tmp, kSmallSweep, "ok.yaml"), "--shard", "3/3", "--out", tmp / "out"});
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_NE(shard.err.find("--shard '3/3': expected i/n with 0 <= i < n"), std::string::npos) << shard.err;
  EXPECT_FALSE(fs::exists(tmp / "out"));
}

// Input errors found once the folder is known (another sweep's folder, a shard without points.csv)
// leave it as it was: no .lock, no points/ skeleton, no output folder for a merge.
TEST(cliSweep, ARefusedFolderOrMergeCreatesNothing) {
  TempDir tmp;
  const std::string out = tmp / "out";
  ASSERT_EQ(sweep({write_sweep(tmp, kSmallSweep), "--out", out}).exit_code, 0);
  fs::remove(out + "/.lock");
  std::vector<std::string> before = entries_under(out);
  std::string edited_text = kSmallSweep;
  edited_text.replace(edited_text.find("[10, 40]"), 8, "[10, 20]");
  const CliResult refused = sweep({write_sweep(tmp, edited_text, "edited.yaml"), "--out", out});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  std::vector<std::string> after = entries_under(out);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before);

  fs::create_directories(tmp / "not-a-shard");
  const CliResult merge =
      sweep({"merge", write_sweep(tmp, kSmallSweep), "--out", tmp / "merged", tmp / "not-a-shard"});
  EXPECT_EQ(merge.exit_code, 2) << merge.err;
  EXPECT_NE(merge.err.find("no points.csv"), std::string::npos) << merge.err;
  EXPECT_FALSE(fs::exists(tmp / "merged"));
}

// A label with a line break is still one row (written as "\n"), so a rerun recognises every point.
TEST(cliSweep, ALabelWithALineBreakStaysOneRowAndResumes) {
  TempDir tmp;
  const std::string file = write_sweep(
      tmp, "sweep: 1\nbase: default\nset: {workload.requests: 5}\naxes:\n  - name: [\"two\\nlines\", one]\n");
  const std::string out = tmp / "out";
  ASSERT_EQ(sweep({file, "--out", out}).exit_code, 0);
  const auto lines = split_lines(read_file(out + "/points.csv"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(column(out + "/points.csv", 2), (std::vector<std::string>{"two\\nlines", "one"}));
  const CliResult again = sweep({file, "--out", out});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("2 done before, 0 ran"), std::string::npos) << again.out;
}

// A swept key named like a summary metric keeps its name and the metric's column is renamed: no two
// columns share one.
TEST(cliSweep, AKeyNamedLikeAMetricKeepsItsNameAndTheMetricIsRenamed) {
  TempDir tmp;
  const std::string file = write_sweep(
      tmp,
      "sweep: 1\nbase: default\nset: {workload.requests: 5}\naxes:\n  - cluster: [h200-1x8, h100-1x8]\n");
  const std::string out = tmp / "out";
  const CliResult r = sweep({file, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> header = split_csv_line(split_lines(read_file(out + "/points.csv"))[0]);
  EXPECT_EQ(header[2], "cluster");
  EXPECT_NE(std::find(header.begin(), header.end(), "summary:cluster"), header.end());
  EXPECT_EQ(std::set<std::string>(header.begin(), header.end()).size(), header.size());
  EXPECT_EQ(column(out + "/points.csv", 2), (std::vector<std::string>{"h200-1x8", "h100-1x8"}));
}

// A point that never ends (or runs far longer than its sweep can wait) is killed at --point-timeout
// and recorded as failed; the others finish and the sweep ends.
TEST(cliSweep, APointPastItsTimeoutIsFailedAndTheOthersFinish) {
  TempDir tmp;
  const std::string file = write_sweep(tmp,
                                       "sweep: 1\nbase: default\nseries:\n  quick: {workload.requests: 5}\n"
                                       "  endless: {workload.requests: 5000000}\n");
  const std::string out = tmp / "out";
  const std::string timeout = std::to_string(5 * kSlowdown);  // the quick point takes under 1 s
  const CliResult r = sweep({file, "-j", "2", "--point-timeout", timeout, "--out", out});
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 points: 0 done before, 2 ran, 1 failed"), std::string::npos) << r.out;
  const std::string csv = out + "/points.csv";
  EXPECT_EQ(column(csv, 1), (std::vector<std::string>{"ok", "failed"}));
  const std::size_t error_column = split_csv_line(split_lines(read_file(csv))[0]).size() - 1;
  EXPECT_NE(
      column(csv, error_column)[1].find("timed out: still running after " + timeout + " s (--point-timeout)"),
      std::string::npos)
      << read_file(csv);
  for (const std::string& entry : entries_under(out + "/points"))
    EXPECT_EQ(entry.find(".staging-"), std::string::npos) << entry;
}

}  // namespace
}  // namespace semsim::cli_test
