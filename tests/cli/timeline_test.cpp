// `semsim run --timeline`: Chrome/Perfetto trace-event JSON (required fields, time order per track,
// spans nested, the chosen window, bounded requests), its serving counters and span args against
// steps.csv and requests.csv, --timeline-at, and outputs.layers_csv agreeing with the summary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/csv.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

constexpr int kMoeLayers = 26;  // DeepSeek-V2-Lite: 27 layers, the first dense
constexpr int kDevices = 8;
constexpr int kTopK = 6;
constexpr int kExpertsPerDevice = 64 / kDevices;
constexpr int kInputTokens = 512;  // the default scenario's fixed lengths
constexpr int kOutputTokens = 256;

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
    ASSERT_TRUE(e["ph"] == "X" || e["ph"] == "C") << e;
    ASSERT_TRUE(e["ts"].is_number() && (e["ph"] == "C" || e["dur"].is_number())) << e;
    if (e["ph"] == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
    } else {
      for (const auto& [key, value] : e["args"].items()) EXPECT_TRUE(value.is_number()) << key << " in " << e;
    }
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
    std::map<std::pair<int, int>, std::pair<double, double>> layer_span;  // (step, layer) -> [begin, end]
    for (const Json& layer : layers)
      layer_span[{layer["args"]["step"], layer["args"]["layer"]}] = {
          layer["ts"], layer["ts"].get<double>() + layer["dur"].get<double>()};
    for (const char* phase : {"attention", "dispatch", "experts", "combine"}) {
      const auto phases = spans_named(trace, phase, 1, d);
      EXPECT_EQ(phases.size(), 3u * kMoeLayers) << phase;
      for (const Json& p : phases) {
        const auto layer = layer_span.find({p["args"]["step"], p["args"]["layer"]});
        ASSERT_NE(layer, layer_span.end()) << "outside every layer: " << p;
        EXPECT_GE(p["ts"].get<double>(), layer->second.first - 1e-6) << p;
        EXPECT_LE(p["ts"].get<double>() + p["dur"].get<double>(), layer->second.second + 1e-6) << p;
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

// A CSV file's rows as column -> field.
std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& path) {
  const auto lines = split_lines(read_file(path));
  std::vector<std::map<std::string, std::string>> rows;
  if (lines.empty()) return rows;
  const auto header = split_csv_line(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto fields = split_csv_line(lines[i]);
    auto& row = rows.emplace_back();
    for (std::size_t c = 0; c < header.size() && c < fields.size(); ++c) row[header[c]] = fields[c];
  }
  return rows;
}

using Samples = std::map<double, Json>;  // ts in microseconds -> args (the later of two at one ts)

// Every counter's samples, by counter name.
std::map<std::string, Samples> counters_of(const Json& trace) {
  std::map<std::string, Samples> out;
  for (const Json& e : trace["traceEvents"])
    if (e["ph"] == "C") out[e["name"]][e["ts"].get<double>()] = e["args"];
  return out;
}

// The sample taken at `ts` (within a nanosecond: a span's ts + dur rounds apart from its end's ts);
// null when there is none.
Json sample_at(const Samples& samples, double ts) {
  const auto found = samples.lower_bound(ts - 1e-3);
  return found == samples.end() || found->first > ts + 1e-3 ? Json() : found->second;
}

struct RequestRow {
  int rank;
  double arrival, finish;  // finish: -1 when not completed
};

std::vector<RequestRow> request_rows(const fs::path& requests_csv) {
  std::vector<RequestRow> out;
  for (const auto& row : csv_rows(requests_csv)) {
    const double arrival = std::stod(row.at("arrival_s"));
    out.push_back({std::stoi(row.at("rank")), arrival,
                   row.at("completed") == "1" ? arrival + std::stod(row.at("e2e_s")) : -1.0});
  }
  return out;
}

// Tolerance for times read back from the CSV files (9 significant digits); steps last milliseconds.
constexpr double kCsvSeconds = 1e-6;

// Counters over a window where ranks queue (one running request at most): per rank, batch tokens
// adding up to steps.csv's, running + queued equal to the requests of requests.csv that arrived and
// had not finished by the step's start, KV reserved for every running request's input + output, and
// KV cached growing by the step's tokens less what finished requests held.
TEST(cliTimelineCounters, AgreeWithStepsAndRequestsCsv) {
  TempDir tmp;
  const Json trace =
      run_with_timeline(tmp, {"--timeline-steps", "300:40", "--set", "serving.max_running_requests=1"});
  const auto counters = counters_of(trace);
  const auto steps = csv_rows(fs::path(tmp / "out") / "steps.csv");
  const auto requests = request_rows(fs::path(tmp / "out") / "requests.csv");
  const Json summary = Json::parse(read_file(fs::path(tmp / "out") / "summary.json"));
  EXPECT_EQ(trace["otherData"]["kv_capacity_tokens_per_rank"], summary["kv_capacity_tokens_per_rank"]);
  bool named = false;
  for (const Json& e : trace["traceEvents"])
    named =
        named || (e["ph"] == "M" && e["pid"] == 3 &&
                  e["args"]["name"] == fmt::format("serving (KV cache capacity {} tokens per rank)",
                                                   summary["kv_capacity_tokens_per_rank"].get<long long>()));
  EXPECT_TRUE(named);

  const auto step_spans = spans_named(trace, "step ", 1, 0);
  ASSERT_EQ(step_spans.size(), 40u);
  int queued_somewhere = 0;
  std::vector<long long> cached_before(kDevices, -1);
  for (std::size_t i = 0; i < step_spans.size(); ++i) {
    const int step = step_spans[i]["args"]["step"];
    ASSERT_EQ(step, 300 + static_cast<int>(i));
    const auto& row = steps.at(step);
    const double ts = step_spans[i]["ts"], start = std::stod(row.at("start_s"));
    const double end = start + std::stod(row.at("duration_s"));
    int prefill = 0, decode = 0;
    for (int r = 0; r < kDevices; ++r) {
      const std::string rank = "rank " + std::to_string(r);
      const Json batch = sample_at(counters.at(rank + " batch tokens"), ts);
      const Json reqs = sample_at(counters.at(rank + " requests"), ts);
      const Json kv = sample_at(counters.at(rank + " KV cache tokens"), ts);
      ASSERT_FALSE(batch.is_null() || reqs.is_null() || kv.is_null()) << rank << " step " << step;
      prefill += batch["prefill"].get<int>();
      decode += batch["decode"].get<int>();
      const int running = reqs["running"], queued = reqs["queued"];
      EXPECT_LE(running, 1);
      queued_somewhere += queued;
      int alive = 0, finishing = 0;
      for (const RequestRow& q : requests) {
        if (q.rank != r) continue;
        alive += q.arrival <= start && (q.finish < 0 || q.finish > start + kCsvSeconds) ? 1 : 0;
        finishing += q.finish >= 0 && std::abs(q.finish - end) < kCsvSeconds ? 1 : 0;
      }
      EXPECT_EQ(running + queued, alive) << rank << " step " << step;
      EXPECT_EQ(kv["reserved"].get<long long>(), running * (kInputTokens + kOutputTokens)) << rank;
      const long long cached = kv["cached"];
      EXPECT_LE(cached, kv["reserved"].get<long long>());
      if (cached_before[r] >= 0) {
        EXPECT_EQ(cached, cached_before[r]) << rank << " step " << step;
      }
      // What the next step starts from: this step's tokens in, the finished requests' KV out.
      cached_before[r] = cached + batch["prefill"].get<int>() + batch["decode"].get<int>() -
                         finishing * (kInputTokens + kOutputTokens - 1);
    }
    EXPECT_EQ(prefill, std::stoi(row.at("prefill_tokens"))) << "step " << step;
    EXPECT_EQ(decode, std::stoi(row.at("decode_tokens"))) << "step " << step;
  }
  EXPECT_GT(queued_somewhere, 0) << "the window should show queues";
  // After the window's last step, the state at its end: no batch in flight.
  const auto last = *counters.at("rank 0 batch tokens").rbegin();
  const Json& final_step = step_spans.back();
  EXPECT_NEAR(last.first, final_step["ts"].get<double>() + final_step["dur"].get<double>(), 1e-3);
  EXPECT_EQ(last.second["prefill"], 0);
  EXPECT_EQ(last.second["decode"], 0);
}

// Between steps the loop idles only with nothing running or queued: every counter reads 0 from the
// step's end until the next step starts; steps that follow on at once get no end sample.
TEST(cliTimelineCounters, ReadZeroWhileTheLoopIdles) {
  TempDir tmp;
  // Requests of 8 output tokens (each 8 steps), seconds apart.
  const Json trace =
      run_with_timeline(tmp, {"--timeline-steps", "0:10000", "--set", "workload.requests=4", "--set",
                              "workload.arrival.rate=0.5", "--set", "workload.output_len.value=8"});
  const auto counters = counters_of(trace);
  ASSERT_EQ(counters.size(), 3u * kDevices);
  const auto steps = spans_named(trace, "step ", 1, 0);
  ASSERT_GE(steps.size(), 8u);
  std::size_t gaps = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double end = steps[i]["ts"].get<double>() + steps[i]["dur"].get<double>();
    const bool last = i + 1 == steps.size();
    if (!last && steps[i + 1]["ts"].get<double>() <= end + 1) continue;  // follows on (ts in microseconds)
    gaps += last ? 0 : 1;
    for (const auto& [name, samples] : counters) {
      const Json at_end = sample_at(samples, end);
      ASSERT_FALSE(at_end.is_null()) << name << " at the end of " << steps[i]["name"];
      for (const auto& [key, value] : at_end.items()) EXPECT_EQ(value, 0) << name << " " << key;
    }
  }
  EXPECT_GT(gaps, 0u);
  // One sample per step start, one per idle end and one at the window's end.
  for (const auto& [name, samples] : counters) EXPECT_EQ(samples.size(), steps.size() + gaps + 1) << name;
}

// Span args: attention's tokens are the rank's batch, the experts of a layer serve top-k activations
// of every token with at most a device's experts active, and dispatch + combine bytes sent add up to
// the step's all-to-all bytes in steps.csv (every byte sent is received).
TEST(cliTimelineArgs, SpansCarryTokensActivationsExpertsAndBytes) {
  TempDir tmp;
  const Json trace = run_with_timeline(tmp, {"--timeline-steps", "30:2"});
  const auto counters = counters_of(trace);
  const auto steps = csv_rows(fs::path(tmp / "out") / "steps.csv");
  for (const int step : {30, 31}) {
    const auto& row = steps.at(step);
    const int tokens = std::stoi(row.at("prefill_tokens")) + std::stoi(row.at("decode_tokens"));
    std::map<int, long long> activations;  // per layer
    long long attention_tokens = 0;
    double sent = 0, received = 0;
    for (int d = 0; d < kDevices; ++d) {
      const double ts = spans_named(trace, "step " + std::to_string(step), 1, d).at(0)["ts"];
      const Json batch = sample_at(counters.at("rank " + std::to_string(d) + " batch tokens"), ts);
      const int rank_tokens = batch["prefill"].get<int>() + batch["decode"].get<int>();
      for (const Json& a : spans_named(trace, "attention", 1, d))
        if (a["args"]["step"] == step) {
          EXPECT_EQ(a["args"]["tokens"], rank_tokens) << a;
          attention_tokens += a["args"]["tokens"].get<int>();
        }
      for (const Json& e : spans_named(trace, "experts", 1, d))
        if (e["args"]["step"] == step) {
          const long long served = e["args"]["activations"];
          const int active = e["args"]["active_experts"];
          activations[e["args"]["layer"]] += served;
          EXPECT_LE(active, std::min<long long>(served, kExpertsPerDevice)) << e;
          EXPECT_EQ(active == 0, served == 0) << e;
        }
      for (const char* phase : {"dispatch", "combine"})
        for (const Json& c : spans_named(trace, phase, 1, d))
          if (c["args"]["step"] == step) {
            sent += c["args"]["bytes_sent"].get<double>();
            received += c["args"]["bytes_received"].get<double>();
          }
    }
    EXPECT_EQ(attention_tokens, static_cast<long long>(kMoeLayers) * tokens);
    ASSERT_EQ(activations.size(), static_cast<std::size_t>(kMoeLayers));
    for (const auto& [layer, served] : activations)
      EXPECT_EQ(served, static_cast<long long>(tokens) * kTopK) << "layer " << layer;
    const double a2a = std::stod(row.at("a2a_scale_up_bytes")) + std::stod(row.at("a2a_scale_out_bytes"));
    EXPECT_GT(a2a, 0);
    EXPECT_NEAR(sent, a2a, 1e-8 * a2a) << "step " << step;
    EXPECT_NEAR(received, sent, 1e-9 * sent);
  }
}

// Attention-TP: the one TP group's counters, and every device's attention runs the group's batch.
TEST(cliTimelineCounters, AttentionTpCountsTheTpGroup) {
  TempDir tmp;
  const Json trace =
      run_with_timeline(tmp, {"--timeline-steps", "30:1", "--set", "parallelism.attention=tp"});
  const auto steps = csv_rows(fs::path(tmp / "out") / "steps.csv");
  const int tokens =
      std::stoi(steps.at(30).at("prefill_tokens")) + std::stoi(steps.at(30).at("decode_tokens"));
  const auto counters = counters_of(trace);
  ASSERT_TRUE(counters.contains("TP group batch tokens"));
  const Json& batch = counters.at("TP group batch tokens").begin()->second;
  EXPECT_EQ(batch["prefill"].get<int>() + batch["decode"].get<int>(), tokens);
  EXPECT_FALSE(counters.contains("rank 0 requests"));
  for (int d = 0; d < kDevices; ++d)
    for (const Json& a : spans_named(trace, "attention", 1, d)) EXPECT_EQ(a["args"]["tokens"], tokens) << a;
}

// --timeline-at SECONDS[:COUNT] starts at the first step whose start is at or after SECONDS.
TEST(cliTimelineAt, StartsAtTheFirstStepStartingAtOrAfterTheTime) {
  TempDir tmp;
  const std::vector<std::string> plain{"run",   "default",    "--set", "workload.requests=60",
                                       "--out", tmp / "plain"};
  ASSERT_EQ(run_semsim(plain).exit_code, 0);
  const auto steps = csv_rows(fs::path(tmp / "plain") / "steps.csv");
  const double between = (std::stod(steps.at(41).at("start_s")) + std::stod(steps.at(42).at("start_s"))) / 2;
  const Json trace = run_with_timeline(tmp, {"--timeline-at", fmt::format("{:.9g}:3", between)});
  EXPECT_EQ(trace["otherData"]["steps"], "42:3");
  EXPECT_EQ(trace["otherData"]["timeline_at_seconds"].get<double>(),
            std::stod(fmt::format("{:.9g}", between)));
  const auto spans = spans_named(trace, "step ", 1, 0);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["name"], "step 42");
  EXPECT_EQ(spans[2]["name"], "step 44");
  EXPECT_NEAR(spans[0]["ts"].get<double>(), std::stod(steps.at(42).at("start_s")) * 1e6, 1e-2);

  const Json from_zero = run_with_timeline(tmp, {"--timeline-at", "0"});
  EXPECT_EQ(from_zero["otherData"]["steps"], "0:10");
  EXPECT_EQ(from_zero["otherData"]["steps_recorded"], 10);
}

TEST(cliTimelineAt, BadOrPastTheEndExits2WithoutOutputs) {
  TempDir tmp;
  // The datasheet profile: the checks do not depend on it, and reading the measured one costs each
  // of the dozen runs here 0.7 s.
  const std::vector<std::string> base{
      "run",   "default",   "--set",      "workload.requests=20", "--set", "calibration=datasheet",
      "--out", tmp / "out", "--timeline", tmp / "t.json"};
  auto fails_with = [&](const std::vector<std::string>& extra, const std::string& message) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(message), std::string::npos) << describe(args, r);
    EXPECT_FALSE(fs::exists(tmp / "t.json"));
    EXPECT_TRUE(entries_under(tmp / "out").empty()) << describe(args, r);
    return r.err;
  };
  fails_with({"--timeline-at", "1", "--timeline-steps", "0:5"}, "--timeline-steps excludes --timeline-at");
  const CliResult without = run_semsim({"run", "default", "--out", tmp / "out", "--timeline-at", "1"});
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_NE(without.err.find("--timeline-at requires --timeline"), std::string::npos) << without.err;
  for (const std::string bad : {"soon", "-1", "1:0", "1:2.5", "1:10001", "1:"})
    fails_with({"--timeline-at", bad}, "--timeline-at '" + bad + "': expected SECONDS[:COUNT]");
  fails_with({"--timeline-at", "5", "--set", "serving.time_limit=2"},
             "--timeline-at 5:10: no step starts at or after 5 s: serving.time_limit stops the run at 2 s");

  // Past the end: known once the run is simulated, still before anything is written.
  const std::vector<std::string> plain{
      "run",   "default",    "--set", "workload.requests=20", "--set", "calibration=datasheet",
      "--out", tmp / "plain"};
  ASSERT_EQ(run_semsim(plain).exit_code, 0);
  const Json summary = Json::parse(read_file(fs::path(tmp / "plain") / "summary.json"));
  const auto steps = csv_rows(fs::path(tmp / "plain") / "steps.csv");
  const std::string lasted =
      fmt::format("the run lasted {:.9g} s (simulated), its last step (step {}) starting at {}",
                  summary["simulated_seconds"].get<double>(), steps.size() - 1, steps.back().at("start_s"));
  fails_with({"--timeline-at", "1000"},
             "--timeline-at 1000:10: no step starts at or after 1000 s; " + lasted);
  fails_with({"--timeline-steps", fmt::format("{}:5", steps.size())},
             fmt::format("--timeline-steps {}:5: the run has {} steps", steps.size(), steps.size()));
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
