// `semsim run` on a workload from a request log (workload.requests_from): requests.csv holds the log's
// arrival times and lengths, summary.json and the console summary name the file, its format, the rows
// used and where the arrival times came from; bench_serving's rate-drawn arrivals say they were drawn.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "models/csv.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

// A small scenario whose requests come from `requests_from` (a flow map), in `dir`.
std::string write_scenario(const TempDir& dir, const std::string& requests_from) {
  const std::string path = dir / "scenario.yaml";
  std::ofstream(path) << "schema: 1\nname: logged\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
                         "parallelism: {ep: 8, attention: dp}\ncalibration: datasheet\n"
                         "workload:\n  seed: 1\n  requests_from: "
                      << requests_from << "\n";
  return path;
}

CliResult run_ok(const std::vector<std::string>& args) {
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(r.err, "") << describe(args, r);
  return r;
}

// A console summary line: the label padded to 40 characters, then the value.
std::string summary_line(const std::string& label, const std::string& value) {
  return label + std::string(40 - label.size(), ' ') + value;
}

// requests.csv's rows as {arrival_s, input_tokens, output_tokens}, as written.
std::vector<std::vector<std::string>> arrivals_and_lengths(const std::string& requests_csv) {
  std::vector<std::vector<std::string>> rows;
  const std::vector<std::string> lines = split_lines(requests_csv);
  EXPECT_EQ(lines.at(0).substr(0, 45), "id,arrival_s,rank,input_tokens,output_tokens,");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = split_csv_line(lines[i]);
    rows.push_back({fields.at(1), fields.at(3), fields.at(4)});
  }
  return rows;
}

TEST(cliRequestLogs, CsvArrivalsAndLengthsAreTheFilesInTimeOrder) {
  TempDir dir;
  // Unsorted, one request without output tokens (skipped), an extra column.
  std::ofstream(dir / "trace.csv") << "timestamp,input_tokens,output_tokens,tenant\n"
                                      "100.75,96,5,b\n100,64,3,a\n101.5,80,0,a\n100.25,128,2,c\n102,32,4,b\n";
  const std::string scenario = write_scenario(dir, "{file: trace.csv, format: csv, time_scale: 2}");
  const std::string out = dir / "out";
  const CliResult r = run_ok({"run", scenario, "--out", out});
  if (r.exit_code != 0) return;

  EXPECT_EQ(arrivals_and_lengths(read_file(fs::path(out) / "requests.csv")),
            (std::vector<std::vector<std::string>>{
                {"0", "64", "3"}, {"0.5", "128", "2"}, {"1.5", "96", "5"}, {"4", "32", "4"}}));
  const Json s = Json::parse(read_file(fs::path(out) / "summary.json"));
  EXPECT_EQ(s["requests"], 4);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_TRUE(s["request_rate"].is_null());
  const Json& from = s["requests_from"];
  EXPECT_EQ(from["file"], "trace.csv");
  EXPECT_EQ(from["format"], "csv");
  EXPECT_EQ(from["rows"], 5);
  EXPECT_EQ(from["skipped"], 1);
  EXPECT_EQ(from["used"], 4);
  EXPECT_EQ(from["arrivals"], "the file's timestamp x time_scale 2");
  EXPECT_EQ(from["note"], "columns not used: tenant");
  EXPECT_NE(r.out.find(summary_line("Requests from:", "trace.csv (csv): 4 of its 5 requests (1 unusable)")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(summary_line("Traffic request rate:", "arrival times from a file")),
            std::string::npos);
  EXPECT_NE(r.out.find(summary_line("Not simulated:", "columns not used: tenant")), std::string::npos);

  // workload.requests takes the first requests by arrival; `check` says where they come from.
  const std::string first_two = dir / "first-two";
  run_ok({"run", scenario, "--out", first_two, "--set", "workload.requests=2"});
  EXPECT_EQ(arrivals_and_lengths(read_file(fs::path(first_two) / "requests.csv")),
            (std::vector<std::vector<std::string>>{{"0", "64", "3"}, {"0.5", "128", "2"}}));
  const CliResult check = run_ok({"check", scenario});
  EXPECT_NE(check.out.find(
                "workload: 4 requests from trace.csv (csv; arrivals: the file's timestamp x time_scale 2)"),
            std::string::npos)
      << check.out;
}

TEST(cliRequestLogs, BenchServingWithoutArrivalTimesSaysTheyWereDrawn) {
  TempDir dir;
  std::ofstream(dir / "sglang.jsonl")
      << "{\"backend\": \"sglang\", \"request_rate\": 50.0, \"max_concurrency\": null, \"input_lens\": [64, "
         "32, 96], "
         "\"output_lens\": [4, 0, 2], \"errors\": [\"\", \"timeout\", \"\"], \"mean_ttft_ms\": NaN}\n";
  const std::string scenario = write_scenario(dir, "{file: sglang.jsonl, format: bench_serving}");
  const std::string out = dir / "out";
  const CliResult r = run_ok({"run", scenario, "--out", out, "--result-json", dir / "result.json"});
  if (r.exit_code != 0) return;

  const auto rows = arrivals_and_lengths(read_file(fs::path(out) / "requests.csv"));
  ASSERT_EQ(rows.size(), 2u);  // the failed request is left out
  EXPECT_EQ(rows[0][1], "64");
  EXPECT_EQ(rows[1][1], "96");
  const Json s = Json::parse(read_file(fs::path(out) / "summary.json"));
  EXPECT_EQ(s["request_rate"], 50.0);
  EXPECT_EQ(s["requests_from"]["skipped"], 1);
  EXPECT_EQ(
      s["requests_from"]["arrivals"],
      "drawn (Poisson, workload.seed) at the file's request_rate 50 req/s; the file records no per-request "
      "arrival times");
  const Json result = Json::parse(read_file(dir / "result.json"));
  EXPECT_EQ(result["request_rate"], 50.0);
  EXPECT_EQ(result["burstiness"], 1.0);
  EXPECT_EQ(result["input_lens"], (Json{64, 96}));
  EXPECT_NE(r.out.find(summary_line("Arrival times:", "drawn (Poisson")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(summary_line("Traffic request rate:", "50")), std::string::npos) << r.out;
}

}  // namespace
}  // namespace semsim::cli_test
