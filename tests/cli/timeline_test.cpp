// `semsim run --timeline`: Chrome/Perfetto trace-event JSON (required fields, time order per track,
// spans nested, the chosen window, bounded requests), and outputs.layers_csv agreeing with the
// summary.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "sim/cli/points_csv.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

constexpr int kMoeLayers = 26;  // DeepSeek-V2-Lite: 27 layers, the first dense
constexpr int kDevices = 8;

Json run_with_timeline(const TempDir& tmp, const std::vector<std::string>& timeline_args) {
  std::vector<std::string> args{"run",   "default",   "--set",      "workload.requests=60",
                                "--out", tmp / "out", "--timeline", tmp / "trace.json"};
  args.insert(args.end(), timeline_args.begin(), timeline_args.end());
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("Timeline in " + tmp / "trace.json"), std::string::npos) << r.out;
  return Json::parse(read_file(tmp / "trace.json"));
}

std::vector<Json> spans_named(const Json& trace, const std::string& prefix, int pid, int tid) {
  std::vector<Json> out;
  for (const Json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid &&
        e["name"].get<std::string>().starts_with(prefix))
      out.push_back(e);
  return out;
}

TEST(cliTimeline, IsTraceEventJsonWithRequiredFieldsAndTimeOrderPerTrack) {
  TempDir tmp;
  const Json trace = run_with_timeline(tmp, {"--timeline-steps", "5:3"});
  ASSERT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  std::map<std::pair<int, int>, double> last_ts;
  std::map<int, std::string> thread_names;
  for (const Json& e : trace["traceEvents"]) {
    for (const char* key : {"name", "ph", "pid", "tid"})
      ASSERT_TRUE(e.contains(key)) << key << " missing: " << e;
    ASSERT_TRUE(e["name"].is_string() && e["ph"].is_string() && e["pid"].is_number_integer() &&
                e["tid"].is_number_integer())
        << e;
    if (e["ph"] == "M") {
      ASSERT_TRUE(e["args"]["name"].is_string()) << e;
      if (e["name"] == "thread_name" && e["pid"] == 1) thread_names[e["tid"]] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e;
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
    EXPECT_GE(e["dur"].get<double>(), 0) << e;
    const std::pair<int, int> track{e["pid"], e["tid"]};
    const double ts = e["ts"];
    if (last_ts.contains(track)) {
      EXPECT_GE(ts, last_ts[track]) << "time goes back on track " << e;
    }
    last_ts[track] = ts;
  }
  ASSERT_EQ(thread_names.size(), static_cast<std::size_t>(kDevices));
  for (int d = 0; d < kDevices; ++d) EXPECT_EQ(thread_names[d], "device " + std::to_string(d));

  // Every device shows steps 5, 6, 7 and, in each, every MoE layer's four phases inside the layer.
  for (int d = 0; d < kDevices; ++d) {
    const auto steps = spans_named(trace, "step ", 1, d);
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[0]["name"], "step 5");
    EXPECT_EQ(steps[2]["name"], "step 7");
    const auto layers = spans_named(trace, "layer ", 1, d);
    ASSERT_EQ(layers.size(), 3u * kMoeLayers);
    for (const char* phase : {"attention", "dispatch", "experts", "combine"})
      EXPECT_EQ(spans_named(trace, phase, 1, d).size(), 3u * kMoeLayers) << phase;
    for (const Json& layer : layers) {
      const double begin = layer["ts"], end = begin + layer["dur"].get<double>();
      for (const char* phase : {"attention", "dispatch", "experts", "combine"})
        for (const Json& p : spans_named(trace, phase, 1, d))
          if (p["args"]["step"] == layer["args"]["step"] && p["args"]["layer"] == layer["args"]["layer"]) {
            EXPECT_GE(p["ts"].get<double>(), begin - 1e-6) << p;
            EXPECT_LE(p["ts"].get<double>() + p["dur"].get<double>(), end + 1e-6) << p;
          }
    }
  }

  // Request lifetimes on lanes that never overlap, covering the window.
  const Json& other = trace["otherData"];
  EXPECT_EQ(other["steps"], "5:3");
  EXPECT_GT(other["requests_shown"].get<int>(), 0);
  std::map<int, double> lane_end;
  for (const Json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 2 && e["name"].get<std::string>().starts_with("request ")) {
      const int lane = e["tid"];
      if (lane_end.contains(lane)) {
        EXPECT_GE(e["ts"].get<double>(), lane_end[lane]) << e;
      }
      lane_end[lane] = e["ts"].get<double>() + e["dur"].get<double>();
    }
  EXPECT_FALSE(lane_end.empty());
}

// Two-batch overlap: each device's compute stream on its own track, each micro-batch's layers and
// collectives on one more per device; on every track spans nest (Perfetto draws them so).
TEST(cliTimeline, TwoBatchOverlapGivesEachMicroBatchATrackWhoseSpansNest) {
  TempDir tmp;
  const Json trace =
      run_with_timeline(tmp, {"--timeline-steps", "20:2", "--set", "serving.overlap=two_batch"});
  std::map<int, std::vector<std::pair<double, double>>> tracks;
  std::map<int, std::string> names;
  for (const Json& e : trace["traceEvents"]) {
    if (e["pid"] != 1) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X")
      tracks[e["tid"]].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  }
  ASSERT_EQ(names.size(), static_cast<std::size_t>(3 * kDevices));
  EXPECT_EQ(names[kDevices + 2 * 3 + 1], "device 3 micro-batch 1");
  for (auto& [tid, spans] : tracks) {
    std::sort(spans.begin(), spans.end(),
              [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<double> open_ends;
    for (const auto& [begin, end] : spans) {
      while (!open_ends.empty() && open_ends.back() <= begin + 1e-6) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back() + 1e-6) << names[tid] << " span [" << begin << ", " << end << "]";
      }
      open_ends.push_back(end);
    }
  }
  for (int m = 0; m < 2; ++m)
    EXPECT_EQ(spans_named(trace, "dispatch", 1, kDevices + m).size(), 2u * kMoeLayers) << m;
  EXPECT_EQ(spans_named(trace, "experts", 1, 0).size(), 2u * 2 * kMoeLayers);
}

TEST(cliTimeline, WindowAndRequestCapBoundTheSize) {
  TempDir tmp;
  const Json one = run_with_timeline(tmp, {"--timeline-steps", "40:1", "--timeline-requests", "2"});
  EXPECT_GT(one["otherData"]["requests_alive_in_window"].get<int>(), 2);
  EXPECT_EQ(one["otherData"]["requests_shown"], 2);
  EXPECT_EQ(one["otherData"]["steps_recorded"], 1);
  std::size_t request_spans = 0;
  for (const Json& e : one["traceEvents"])
    request_spans += e["ph"] == "X" && e["name"].get<std::string>().starts_with("request ") ? 1 : 0;
  EXPECT_EQ(request_spans, 2u);
  // One step: per device a step span, a dense span and 5 per MoE layer; plus the request spans.
  std::size_t device_spans = 0;
  for (const Json& e : one["traceEvents"]) device_spans += e["ph"] == "X" && e["pid"] == 1 ? 1 : 0;
  EXPECT_EQ(device_spans, static_cast<std::size_t>(kDevices * (2 + 5 * kMoeLayers)));
}

TEST(cliTimeline, BadWindowExits2WithoutOutputs) {
  TempDir tmp;
  const std::vector<std::string> args{"run",          "default",          "--out", tmp / "out", "--timeline",
                                      tmp / "t.json", "--timeline-steps", "5"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_NE(r.err.find("--timeline-steps '5': expected FIRST:COUNT"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp / "t.json"));
  EXPECT_TRUE(entries_under(tmp / "out").empty());

  const CliResult without = run_semsim({"run", "default", "--out", tmp / "out", "--timeline-steps", "0:5"});
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_NE(without.err.find("--timeline-steps requires --timeline"), std::string::npos) << without.err;
}

TEST(cliLayersCsv, PerLayerTotalsAddUpToTheSummary) {
  TempDir tmp;
  const std::vector<std::string> args{
      "run",   "default",  "--set", "workload.requests=40", "--set", "outputs.layers_csv=true",
      "--out", tmp / "out"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  const auto lines = split_lines(read_file(fs::path(tmp / "out") / "layers.csv"));
  ASSERT_EQ(lines.size(), 1u + kMoeLayers);
  const auto header = split_csv_line(lines[0]);
  ASSERT_EQ(header.size(), 10u + kDevices);
  EXPECT_EQ(header[2], "attention_s");
  EXPECT_EQ(header[6 + kDevices], "activations_device_7");
  EXPECT_EQ(header.back(), "permute_s");  // Attention-TP columns, zero here

  const Json summary = Json::parse(read_file(fs::path(tmp / "out") / "summary.json"));
  std::map<std::string, double> phase_sums;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto f = split_csv_line(lines[i]);
    EXPECT_EQ(f[0], std::to_string(i - 1));
    EXPECT_EQ(f[1], std::to_string(i));  // layer 0 is dense
    for (int p = 2; p <= 5; ++p) phase_sums[header[p]] += std::stod(f[p]);
    // Every token is routed to top-6 experts in every MoE layer: 40 x (512 prompt + 255 decode) x 6.
    long long served = 0, most = 0;
    for (int d = 0; d < kDevices; ++d) {
      const long long n = std::stoll(f[7 + d]);
      served += n;
      most = std::max(most, n);
    }
    EXPECT_EQ(served, 40LL * (512 + 255) * 6) << lines[i];
    EXPECT_NEAR(std::stod(f[6]), static_cast<double>(most) / (static_cast<double>(served) / kDevices), 1e-5);
  }
  for (const char* phase : {"attention", "dispatch", "experts", "combine"}) {
    const double total = summary["phase_seconds"][phase];
    EXPECT_NEAR(phase_sums[std::string(phase) + "_s"], total, 1e-6 * total) << phase;
  }
}

}  // namespace
}  // namespace semsim::cli_test
