// Request logs (workload.requests_from): each format's requests, arrival times and lengths as the file
// records them; sorting, skipped rows, time_scale, rate-drawn arrivals; every corrupt file an
// InputError naming the file and line (and the CSV column).
#include "workloads/request_log.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/compressed_file.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

class RequestLogTest : public testing::Test {
 protected:
  RequestLogTest() : dir_(fs::temp_directory_path() / ("semsim-request-log-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~RequestLogTest() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The message of the InputError reading `text` as `format` throws ("" when none is thrown).
  std::string error_of(const std::string& text, RequestLogFormat format,
                       const std::string& name = "log") const {
    const std::string path = write(name, text);
    try {
      read_request_log(path, format);
    } catch (const InputError& e) {
      return std::string(e.what()).substr(dir_.string().size() + 1);  // from the file name on
    }
    return "";
  }

  fs::path dir_;
};

std::vector<double> arrivals(const RequestLog& log) {
  std::mt19937_64 unused(1);
  return log.arrival_times(static_cast<int>(log.requests.size()), unused);
}

std::vector<int> inputs(const RequestLog& log) {
  std::vector<int> out;
  for (const LoggedRequest& r : log.requests) out.push_back(r.input_tokens);
  return out;
}

std::vector<int> outputs(const RequestLog& log) {
  std::vector<int> out;
  for (const LoggedRequest& r : log.requests) out.push_back(r.output_tokens);
  return out;
}

TEST_F(RequestLogTest, PlainCsvIsSortedStablyByTimeFromTheFirstRequest) {
  const RequestLog log = read_request_log(
      write("plain.csv", "timestamp,input_tokens,output_tokens\n12.25,30,3\n10,10,1\n\n10.5,20,2\n10,11,4\n"),
      RequestLogFormat::kCsv);
  EXPECT_EQ(log.rows, 4);
  EXPECT_EQ(log.skipped, 0);
  EXPECT_EQ(arrivals(log), (std::vector<double>{0, 0, 0.5, 2.25}));
  EXPECT_EQ(inputs(log), (std::vector<int>{10, 11, 20, 30}));  // the tie at t=10 keeps file order
  EXPECT_EQ(outputs(log), (std::vector<int>{1, 4, 2, 3}));
  EXPECT_EQ(log.arrival_column, "timestamp");
  EXPECT_FALSE(log.drawn);
  EXPECT_EQ(log.note, "");
}

// Spreadsheets save CSV with a UTF-8 byte-order mark before the header: it is not part of its name.
TEST_F(RequestLogTest, CsvWithAByteOrderMarkReadsItsHeader) {
  const RequestLog log = read_request_log(
      write("bom.csv", "\xEF\xBB\xBFtimestamp,input_tokens,output_tokens\r\n1,10,1\r\n2,20,2\r\n"),
      RequestLogFormat::kCsv);
  EXPECT_EQ(log.arrival_column, "timestamp");
  EXPECT_EQ(inputs(log), (std::vector<int>{10, 20}));
  // Only at the start of the file: elsewhere the bytes are text, and here not a number.
  const std::string error = error_of(
      "timestamp,input_tokens,output_tokens\n\xEF\xBB\xBF"
      "1,10,1\n",
      RequestLogFormat::kCsv);
  EXPECT_TRUE(error.starts_with("log:2: column 1 (timestamp): expected seconds or a date-time")) << error;
}

TEST_F(RequestLogTest, AzureCsvReadsDateTimesOfBothTraceYears) {
  // 2023: 100 ns ticks, no zone; across midnight.
  const RequestLog code = read_request_log(write("azure-2023.csv",
                                                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                                 "2023-11-16 23:59:59.6805900,4808,10\n"
                                                 "2023-11-17 00:00:04.0000000,3180,8\n"),
                                           RequestLogFormat::kCsv);
  ASSERT_EQ(code.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(arrivals(code)[1], 4.31941);
  EXPECT_EQ(inputs(code), (std::vector<int>{4808, 3180}));
  EXPECT_EQ(outputs(code), (std::vector<int>{10, 8}));
  EXPECT_EQ(code.arrival_column, "TIMESTAMP");
  // 2024: microseconds and a UTC offset; 02:00:01+02:00 is 00:00:01 UTC.
  const RequestLog conv = read_request_log(write("azure-2024.csv",
                                                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                                 "2024-05-10 02:00:01.000000+02:00,2162,5\n"
                                                 "2024-05-10 00:00:00.009930+00:00,1000,7\n"),
                                           RequestLogFormat::kCsv);
  EXPECT_EQ(inputs(conv), (std::vector<int>{1000, 2162}));
  EXPECT_DOUBLE_EQ(arrivals(conv)[1], 0.99007);
}

TEST_F(RequestLogTest, GzipZeroTokensExtraColumnsAndTimeScale) {
  const std::string path = (dir_ / "trace.csv.gz").string();
  TextWriter writer(path);
  writer.buffer() = "timestamp,input_tokens,output_tokens,model\n0,5,0,a\n1,6,2,a\n3,0,2,b\n4,7,1,b\n";
  writer.close();
  const RequestLog log = read_request_log(path, RequestLogFormat::kCsv, std::nullopt, 0.5);
  EXPECT_EQ(log.rows, 4);
  EXPECT_EQ(log.skipped, 2);  // no output token; no prompt token
  EXPECT_EQ(inputs(log), (std::vector<int>{6, 7}));
  EXPECT_EQ(arrivals(log), (std::vector<double>{0, 1.5}));  // from the first usable request, x 0.5
  EXPECT_EQ(log.note, "columns not used: model");
  EXPECT_EQ(log.arrivals_description(), "the file's timestamp x time_scale 0.5");
}

TEST_F(RequestLogTest, CorruptCsvNamesFileLineAndColumn) {
  const std::string header = "timestamp,input_tokens,output_tokens\n";
  EXPECT_EQ(error_of("time,input_tokens,output_tokens\n0,1,1\n", RequestLogFormat::kCsv),
            "log:1: no column gives the arrival time: expected a header naming 'timestamp' (found "
            "'time,input_tokens,output_tokens')");
  EXPECT_EQ(error_of(header + "0,1,1\n1,-3,1\n", RequestLogFormat::kCsv),
            "log:3: column 2 (input_tokens): expected a token count (an integer in [0, 4194304]), got '-3'");
  EXPECT_EQ(
      error_of("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.1,10,abc\n",
               RequestLogFormat::kCsv),
      "log:2: column 3 (GeneratedTokens): expected a token count (an integer in [0, 4194304]), got 'abc'");
  EXPECT_EQ(error_of(header + "0,1,1\n-1,1,1\n", RequestLogFormat::kCsv),
            "log:3: column 1 (timestamp): expected seconds in [0, 9.2e+09], got -1");
  EXPECT_EQ(error_of(header + "0,1,1\n2,1\n", RequestLogFormat::kCsv),
            "log:3: 2 fields, but the header has 3");
  EXPECT_EQ(error_of(header + "2023-13-01 00:00:00,1,1\n", RequestLogFormat::kCsv),
            "log:2: column 1 (timestamp): expected seconds or a date-time (YYYY-MM-DD "
            "HH:MM:SS[.fraction][+HH:MM], years 1970 to 2200), got '2023-13-01 00:00:00'");
  // Before 1678 or after 2262, nanoseconds since 1970 overflowed 64 bits (found by fuzzing).
  EXPECT_EQ(error_of(header + "1011-11-19 18:15:46.6805900,1,1\n", RequestLogFormat::kCsv),
            "log:2: column 1 (timestamp): expected seconds or a date-time (YYYY-MM-DD "
            "HH:MM:SS[.fraction][+HH:MM], years 1970 to 2200), got '1011-11-19 18:15:46.6805900'");
  EXPECT_EQ(
      error_of(header + "0,1,1\n2023-11-16 00:00:00,1,1\n", RequestLogFormat::kCsv),
      "log:3: column 1 (timestamp): '2023-11-16 00:00:00' is not a number, but the first row's time is a "
      "number of seconds");
  EXPECT_EQ(error_of("timestamp,input_tokens,ContextTokens,output_tokens\n", RequestLogFormat::kCsv),
            "log:1: columns 2 (input_tokens) and 3 (ContextTokens) both give the prompt length");
  EXPECT_EQ(error_of(header + "0,\"1,1\n", RequestLogFormat::kCsv), "log:2: a quoted field is not closed");
  EXPECT_EQ(error_of(header + "0,0,1\n", RequestLogFormat::kCsv),
            "log: no usable request among its 1 (each needs a prompt token and an output token, and "
            "bench_serving's must not have failed)");
}

// hash_ids: one block id per 512 prompt tokens begun (Mooncake's traces), non-negative integers.
TEST_F(RequestLogTest, MooncakeHashIdsAreCheckedAtTheirLine) {
  const std::string ok =
      "{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [0, 1, 2]}\n";
  EXPECT_EQ(error_of(ok, RequestLogFormat::kMooncake), "");
  EXPECT_EQ(
      error_of(
          ok + "{\"timestamp\": 1, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [0, 1, 2]}\n",
          RequestLogFormat::kMooncake),
      "log:2: hash_ids: 3 block ids, but input_length 1024 fills only 2 block(s) of 512 tokens "
      "(requests_from.block_tokens)");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [-1]}\n",
                     RequestLogFormat::kMooncake),
            "log:1: hash_ids: expected block ids (non-negative integers), got -1");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1.5]}\n",
                     RequestLogFormat::kMooncake),
            "log:1: hash_ids: expected block ids (non-negative integers), got 1.5");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": 7}\n",
                     RequestLogFormat::kMooncake),
            "log:1: hash_ids: expected a list of block ids, got 7");
  // A smaller block size allows more ids.
  const RequestLog log = read_request_log(
      write("small-blocks.jsonl",
            "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [4, 5, 6]}\n"),
      RequestLogFormat::kMooncake, std::nullopt, 1, 4);
  EXPECT_EQ(log.block_tokens, 4);
  EXPECT_EQ(log.requests.at(0).hash_ids, (std::vector<std::uint64_t>{4, 5, 6}));
}

TEST_F(RequestLogTest, MooncakeJsonlInMilliseconds) {
  const RequestLog log = read_request_log(
      write("mooncake.jsonl",
            "{\"timestamp\": 1500, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47]}\n"
            "{\"timestamp\": 250, \"input_length\": 6472, \"output_length\": 26, \"hash_ids\": [46]}\n"),
      RequestLogFormat::kMooncake);
  EXPECT_EQ(arrivals(log), (std::vector<double>{0, 1.25}));
  EXPECT_EQ(inputs(log), (std::vector<int>{6472, 6955}));
  EXPECT_EQ(outputs(log), (std::vector<int>{26, 52}));
  // Sorted with their requests: the later file line arrives first.
  ASSERT_EQ(log.requests.size(), 2u);
  EXPECT_EQ(log.requests[0].hash_ids, (std::vector<std::uint64_t>{46}));
  EXPECT_EQ(log.requests[1].hash_ids, (std::vector<std::uint64_t>{46, 47}));
  EXPECT_TRUE(log.has_hash_ids);
  EXPECT_EQ(log.block_tokens, kMooncakeBlockTokens);
  EXPECT_EQ(log.note, "");  // whether they are used is the run's to say (serving.prefix_cache)

  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 5, "
                     "\"input_length\": 1}\n",
                     RequestLogFormat::kMooncake),
            "log:2: no 'output_length'");
  EXPECT_EQ(error_of("{\"timestamp\": 0, \"input_length\": 1.5, \"output_length\": 1}\n",
                     RequestLogFormat::kMooncake),
            "log:1: input_length: expected a token count (an integer in [0, 4194304]), got 1.5");
  EXPECT_EQ(error_of("{\"timestamp\": \"soon\", \"input_length\": 1, \"output_length\": 1}\n",
                     RequestLogFormat::kMooncake),
            "log:1: timestamp: expected a time in [0, 9.2e+12] milliseconds, got \"soon\"");
  EXPECT_TRUE(error_of("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 1,\n",
                       RequestLogFormat::kMooncake)
                  .starts_with("log:2: not valid JSON"));
  // A number past a double is the parser's out_of_range, not its parse_error (a fuzz finding).
  EXPECT_TRUE(error_of("{\"timestamp\": 4444e4444, \"input_length\": 1, \"output_length\": 1}\n",
                       RequestLogFormat::kMooncake)
                  .starts_with("log:1: not valid JSON"));
}

// vLLM's --save-result --save-detailed: one object; recent versions add start_times (perf_counter).
const char* const kVllmWithStartTimes =
    R"({"backend": "vllm", "request_rate": 8.0, "burstiness": 1.0, "max_concurrency": null,
 "input_lens": [100, 200, 300, 400], "output_lens": [10, 0, 30, 40],
 "start_times": [5000.5, 5000.75, 5000.25, 5002.0], "ttfts": [0.1, null, 0.1, 0.1],
 "errors": ["", "timeout", "", ""], "mean_ttft_ms": NaN})";

TEST_F(RequestLogTest, BenchServingWithStartTimesSkipsFailedRequests) {
  const RequestLog log =
      read_request_log(write("vllm.json", kVllmWithStartTimes), RequestLogFormat::kBenchServing);
  EXPECT_EQ(log.rows, 4);
  EXPECT_EQ(log.skipped, 1);
  EXPECT_EQ(inputs(log), (std::vector<int>{300, 100, 400}));
  EXPECT_EQ(arrivals(log), (std::vector<double>{0, 0.25, 1.75}));
  EXPECT_EQ(log.arrivals_description(), "the file's start_times");
  EXPECT_FALSE(log.drawn);
}

// SGLang's --output-file --output-details appends one line per run; Python writes inf as Infinity.
TEST_F(RequestLogTest, BenchServingWithoutTimesDrawsArrivalsAtTheFileRate) {
  const std::string path = write(
      "sglang.jsonl",
      "{\"backend\": \"sglang\", \"request_rate\": Infinity, \"max_concurrency\": 2, \"input_lens\": [1, 2], "
      "\"output_lens\": [3, 4], \"errors\": [\"\", \"\"]}\n"
      "{\"backend\": \"sglang\", \"request_rate\": 4.0, \"max_concurrency\": null, \"input_lens\": [5, 6, "
      "7], "
      "\"output_lens\": [8, 9, 10], \"generated_texts\": [\"NaN\", \"a \\\"Infinity\\\"\", \"\"]}\n");
  try {
    read_request_log(path, RequestLogFormat::kBenchServing);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 results (lines 1, 2): pick one with workload.requests_from.line"),
              std::string::npos)
        << e.what();
  }
  const RequestLog at_once = read_request_log(path, RequestLogFormat::kBenchServing, 1);
  ASSERT_TRUE(at_once.drawn);
  EXPECT_EQ(arrivals(at_once), (std::vector<double>{0, 0}));
  EXPECT_EQ(at_once.note, "the file's max_concurrency 2 (a client-side cap) is not applied");
  EXPECT_EQ(at_once.arrivals_description(),
            "all at t=0: the file's request_rate is inf; the file records no per-request arrival times");

  const RequestLog poisson = read_request_log(path, RequestLogFormat::kBenchServing, 2);
  EXPECT_EQ(inputs(poisson), (std::vector<int>{5, 6, 7}));  // file order
  ASSERT_TRUE(poisson.drawn);
  EXPECT_EQ(poisson.drawn->rate, 4);
  EXPECT_EQ(poisson.drawn->burstiness, 1);
  // The same draws as a scenario's {process: poisson, rate: 4} from the same generator.
  std::mt19937_64 a(7), b(7);
  ArrivalProcess reference;
  reference.rate = 4;
  EXPECT_EQ(poisson.arrival_times(3, a), reference.arrival_times(3, b));
  EXPECT_EQ(poisson.note, "");
}

TEST_F(RequestLogTest, BenchServingPrettyPrintedAndCorrupt) {
  const RequestLog pretty = read_request_log(
      write("pretty.json",
            "{\n  \"request_rate\": \"inf\",\n  \"burstiness\": 0.5,\n  \"input_lens\": [1],\n"
            "  \"output_lens\": [2]\n}\n"),
      RequestLogFormat::kBenchServing);
  ASSERT_TRUE(pretty.drawn);
  EXPECT_TRUE(std::isinf(pretty.drawn->rate));
  EXPECT_EQ(pretty.drawn->burstiness, 0.5);

  const auto bench = RequestLogFormat::kBenchServing;
  EXPECT_EQ(
      error_of("{\"request_rate\": 1, \"completed\": 3}\n", bench),
      "log:1: no per-request details (input_lens, output_lens): save them with vLLM's --save-detailed or "
      "SGLang's --output-details");
  EXPECT_EQ(error_of("{\"input_lens\": [1, 2], \"output_lens\": [1, 2]}\n", bench),
            "log:1: no per-request arrival times (start_times) and no request_rate to draw them from");
  EXPECT_EQ(error_of("{\"request_rate\": 1, \"input_lens\": [1, 2], \"output_lens\": [1]}\n", bench),
            "log:1: output_lens: expected a list of 2 values (one per input_lens entry), got 1");
  EXPECT_EQ(error_of("{\"request_rate\": 1, \"input_lens\": [1, -2], \"output_lens\": [1, 1]}\n", bench),
            "log:1: input_lens[1]: expected a token count (an integer in [0, 4194304]), got -2");
  EXPECT_EQ(error_of("{\"request_rate\": 0, \"input_lens\": [1], \"output_lens\": [1]}\n", bench),
            "log:1: request_rate: expected a positive number or \"inf\", got 0");
  EXPECT_TRUE(error_of("{\"request_rate\": 1,\n \"input_lens\": [1,, 2]}\n", bench)
                  .starts_with("log:2: not valid JSON"))
      << error_of("{\"request_rate\": 1,\n \"input_lens\": [1,, 2]}\n", bench);
}

YamlInput scenario_yaml(const std::string& text) {
  return YamlInput::parse(text, "scenario.yaml");
}

TEST_F(RequestLogTest, WorkloadTakesEachRequestFromTheLog) {
  write("requests.csv", "timestamp,input_tokens,output_tokens\n3,30,3\n1,10,1\n2,20,2\n");
  const std::string base = "{seed: 3, requests_from: {file: requests.csv, format: csv, time_scale: 2}";
  const WorkloadSpec all = WorkloadSpec::from_yaml(scenario_yaml(base + "}"), dir_.string());
  EXPECT_EQ(all.requests, 3);  // the file's usable requests
  const std::vector<Request> requests = generate_requests(all);
  ASSERT_EQ(requests.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(requests[i].arrival, 2.0 * static_cast<double>(i));
    EXPECT_EQ(requests[i].input_tokens, 10 * static_cast<int>(i + 1));
    EXPECT_EQ(requests[i].output_tokens, static_cast<int>(i + 1));
  }
  EXPECT_EQ(all.input_len.upper_bound() + all.output_len.upper_bound(), 33);

  const WorkloadSpec first_two =
      WorkloadSpec::from_yaml(scenario_yaml(base + ", requests: 2}"), dir_.string());
  EXPECT_EQ(generate_requests(first_two).size(), 2u);
  EXPECT_EQ(first_two.input_len.upper_bound(), 20);  // the simulated requests bound the KV cache

  auto error = [&](const std::string& text) {
    try {
      WorkloadSpec::from_yaml(scenario_yaml(text), dir_.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(
      error(base + ", requests: 4}"),
      "scenario.yaml:1:86: requests: 4 requests, but request log 'requests.csv' holds 3 usable (0 of its 3 "
      "skipped)");
  EXPECT_EQ(error(base + ", arrival: {process: poisson, rate: 1}}"),
            "scenario.yaml:1:85: arrival: each request's arrival time and lengths come from "
            "workload.requests_from; remove this key");
  EXPECT_NE(error("{requests_from: {file: requests.csv, format: csv, lines: 2}}").find("lines"),
            std::string::npos);
  EXPECT_NE(error("{requests_from: {file: requests.csv, format: csv, line: 2}}")
                .find("only a bench_serving file holds several results"),
            std::string::npos);
  EXPECT_NE(error("{requests_from: {file: missing.csv, format: csv}}").find("does not exist"),
            std::string::npos);
  EXPECT_NE(error("{requests_from: {file: requests.csv, format: azure}}").find("format"), std::string::npos);
}

}  // namespace
}  // namespace semsim
