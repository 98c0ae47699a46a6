#include "workloads/request_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/json_input.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/text_table.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;

// One request as the file records it; times in integer nanoseconds, so that date-times (epoch
// seconds in 100 ns ticks) subtract exactly.
struct RawRequest {
  std::int64_t time_ns = 0;
  int input_tokens = 0;
  int output_tokens = 0;
  bool failed = false;
  std::vector<std::uint64_t> hash_ids;
};

constexpr double kMaxSeconds = 9.2e9;  // int64 nanoseconds hold up to ~292 years

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

std::string token_count_error(const std::string& got) {
  return fmt::format("expected a token count (an integer in [0, {}]), got {}", LengthDistribution::kMaxLength,
                     got);
}

std::optional<int> token_count(double value) {
  if (value < 0 || value > LengthDistribution::kMaxLength || value != std::floor(value)) return std::nullopt;
  return static_cast<int>(value);
}

// Non-negative seconds (`unit` seconds per file unit) as nanoseconds, or nothing when out of range.
std::optional<std::int64_t> nanoseconds(double value, double unit) {
  const double seconds = value * unit;
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kMaxSeconds) return std::nullopt;
  return std::llround(seconds * 1e9);
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" ('T' may separate date and time) of the years
// 1970 to 2200 as nanoseconds since 1970 UTC (64 bits hold 1678 to 2262): the Azure traces' TIMESTAMP
// (2023: "2023-11-16 18:15:46.6805900", 2024: with "+00:00").
std::optional<std::int64_t> parse_date_time(std::string_view text) {
  std::size_t pos = 0;
  auto number = [&](std::size_t digits, int& out) {
    if (pos + digits > text.size()) return false;
    out = 0;
    for (std::size_t i = 0; i < digits; ++i) {
      const char c = text[pos + i];
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      out = out * 10 + (c - '0');
    }
    pos += digits;
    return true;
  };
  auto separator = [&](std::string_view allowed) {
    if (pos >= text.size() || allowed.find(text[pos]) == std::string_view::npos) return false;
    ++pos;
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!number(4, year) || !separator("-") || !number(2, month) || !separator("-") || !number(2, day) ||
      !separator(" T") || !number(2, hour) || !separator(":") || !number(2, minute) || !separator(":") ||
      !number(2, second))
    return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(year), std::chrono::month(month),
                                         std::chrono::day(day)};
  if (!date.ok() || year < 1970 || year > 2200 || hour > 23 || minute > 59 || second > 59)
    return std::nullopt;
  std::int64_t fraction_ns = 0;
  if (separator(".")) {
    std::int64_t scale = 100'000'000;
    const std::size_t first = pos;
    for (; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos, scale /= 10)
      fraction_ns += (text[pos] - '0') * scale;  // digits past nanoseconds add 0
    if (pos == first) return std::nullopt;
  }
  std::int64_t offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos++] == '-' ? -1 : 1;
    int offset_hours = 0, offset_minutes = 0;
    if (!number(2, offset_hours)) return std::nullopt;
    separator(":");
    if (!number(2, offset_minutes) || offset_hours > 23 || offset_minutes > 59) return std::nullopt;
    offset_seconds = sign * (offset_hours * 3600 + offset_minutes * 60);
  }
  if (pos != text.size()) return std::nullopt;
  const std::int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return seconds * 1'000'000'000 + fraction_ns;
}

// ---- CSV: a header naming the columns, then one request per line --------------------------------

struct CsvColumn {
  const char* role;
  std::vector<std::string> names;  // lowercase; the first is the plain spelling
  int index = -1;
};

std::vector<RawRequest> read_csv(const std::string& path, RequestLog& log) {
  LineReader reader(path);
  std::vector<CsvColumn> columns{{"the arrival time", {"timestamp"}},
                                 {"the prompt length", {"input_tokens", "contexttokens"}},
                                 {"the output length", {"output_tokens", "generatedtokens"}}};
  std::vector<std::string> header;
  std::vector<RawRequest> requests;
  enum class TimeKind { kUnknown, kSeconds, kDateTime } time_kind = TimeKind::kUnknown;
  std::string_view line;
  while (reader.next(line)) {
    if (trimmed(line).empty()) continue;
    const int number = reader.line_number();
    bool unterminated = false;
    std::vector<std::string> fields = split_csv_line(std::string(line), &unterminated);
    for (std::string& field : fields) field = trimmed(field);
    if (unterminated) fail_at_line(path, number, "a quoted field is not closed");
    if (header.empty()) {
      header = fields;
      std::vector<std::string> unused;
      for (std::size_t i = 0; i < header.size(); ++i) {
        bool used = false;
        for (CsvColumn& column : columns) {
          if (std::find(column.names.begin(), column.names.end(), lowercase(header[i])) == column.names.end())
            continue;
          if (column.index >= 0)
            fail_at_line(
                path, number,
                fmt::format("columns {} ({}) and {} ({}) both give {}", column.index + 1,
                            header[static_cast<std::size_t>(column.index)], i + 1, header[i], column.role));
          column.index = static_cast<int>(i);
          used = true;
        }
        if (!used) unused.push_back(header[i]);
      }
      for (const CsvColumn& column : columns)
        if (column.index < 0)
          fail_at_line(path, number,
                       fmt::format("no column gives {}: expected a header naming '{}' (found '{}')",
                                   column.role, fmt::join(column.names, "' or '"), fmt::join(header, ",")));
      log.arrival_column = header[static_cast<std::size_t>(columns[0].index)];
      if (!unused.empty()) log.note = fmt::format("columns not used: {}", fmt::join(unused, ", "));
      continue;
    }
    if (fields.size() != header.size())
      fail_at_line(path, number,
                   fmt::format("{} fields, but the header has {}", fields.size(), header.size()));
    auto field_error = [&](const CsvColumn& column, const std::string& message) {
      const auto index = static_cast<std::size_t>(column.index);
      fail_at_line(path, number, fmt::format("column {} ({}): {}", index + 1, header[index], message));
    };
    RawRequest request;
    const std::string& time = fields[static_cast<std::size_t>(columns[0].index)];
    const std::optional<double> seconds = parse_number(time);
    const TimeKind kind = seconds ? TimeKind::kSeconds : TimeKind::kDateTime;
    if (time_kind != TimeKind::kUnknown && kind != time_kind)
      field_error(columns[0], fmt::format("'{}' is {}, but the first row's time is {}", time,
                                          seconds ? "a number" : "not a number",
                                          seconds ? "a date-time" : "a number of seconds"));
    time_kind = kind;
    const std::optional<std::int64_t> time_ns = seconds ? nanoseconds(*seconds, 1) : parse_date_time(time);
    if (!time_ns)
      field_error(
          columns[0],
          seconds ? fmt::format("expected seconds in [0, {:g}], got {}", kMaxSeconds, time)
                  : fmt::format("expected seconds or a date-time (YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM], "
                                "years 1970 to 2200), got '{}'",
                                time));
    request.time_ns = *time_ns;
    for (std::size_t c = 1; c < columns.size(); ++c) {
      const std::string& text = fields[static_cast<std::size_t>(columns[c].index)];
      const std::optional<double> value = parse_number(text);
      const std::optional<int> count = value ? token_count(*value) : std::nullopt;
      if (!count) field_error(columns[c], token_count_error("'" + text + "'"));
      (c == 1 ? request.input_tokens : request.output_tokens) = *count;
    }
    requests.push_back(request);
  }
  if (header.empty()) throw InputError(path + ": empty file; expected a header naming the columns");
  return requests;
}

// ---- JSON files: Mooncake-style JSONL, bench_serving results -------------------------------------

// Python's json module writes NaN, Infinity and -Infinity for non-finite floats, which JSON lacks:
// they become strings (outside strings only), so the rest of the file parses and keeps its lines.
std::string quote_python_constants(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool quoted = false;
    for (const std::string_view word : {"-Infinity", "Infinity", "NaN"})
      if (text.substr(i).starts_with(word)) {
        out += fmt::format("\"{}\"", word);
        i += word.size() - 1;
        quoted = true;
        break;
      }
    if (!quoted) out += c;
  }
  return out;
}

// Every JSON value of a result file (bench_serving's may be pretty-printed or one result per line).
std::vector<JsonValueAt> parse_results(const std::string& path, const std::string& text) {
  std::vector<JsonValueAt> values = parse_json_values(quote_python_constants(text), path);
  if (values.empty()) throw InputError(path + ": empty file");
  return values;
}

std::optional<double> json_number(const Json& value) {
  if (value.is_number()) return value.get<double>();
  return std::nullopt;
}

// A non-negative number; the strings the Python constants became are not numbers.
std::int64_t json_time(const Json& value, double unit, const std::string& path, int line,
                       const std::string& key) {
  const std::optional<double> number = json_number(value);
  const std::optional<std::int64_t> ns = number ? nanoseconds(*number, unit) : std::nullopt;
  if (!ns)
    fail_at_line(path, line,
                 fmt::format("{}: expected a time in [0, {:g}] {}, got {}", key, kMaxSeconds / unit,
                             unit == 1 ? "seconds" : "milliseconds", value.dump()));
  return *ns;
}

int json_count(const Json& value, const std::string& path, int line, const std::string& key) {
  const std::optional<double> number = json_number(value);
  const std::optional<int> count = number ? token_count(*number) : std::nullopt;
  if (!count) fail_at_line(path, line, fmt::format("{}: {}", key, token_count_error(value.dump())));
  return *count;
}

// A Mooncake request's hash_ids: block ids (non-negative integers), at most one per `block_tokens`
// prompt tokens begun.
std::vector<std::uint64_t> json_hash_ids(const Json& value, int input_tokens, int block_tokens,
                                         const std::string& path, int line) {
  if (!value.is_array())
    fail_at_line(path, line, fmt::format("hash_ids: expected a list of block ids, got {}", value.dump()));
  std::vector<std::uint64_t> ids;
  for (const Json& id : value) {
    if (!id.is_number_unsigned() && !(id.is_number_integer() && id.get<std::int64_t>() >= 0))
      fail_at_line(path, line,
                   fmt::format("hash_ids: expected block ids (non-negative integers), got {}", id.dump()));
    ids.push_back(id.get<std::uint64_t>());
  }
  const long long blocks = (static_cast<long long>(input_tokens) + block_tokens - 1) / block_tokens;
  if (static_cast<long long>(ids.size()) > blocks)
    fail_at_line(
        path, line,
        fmt::format("hash_ids: {} block ids, but input_length {} fills only {} block(s) of {} tokens "
                    "(requests_from.block_tokens)",
                    ids.size(), input_tokens, blocks, block_tokens));
  return ids;
}

std::vector<RawRequest> read_mooncake(const std::string& path, int block_tokens, RequestLog& log) {
  LineReader reader(path);
  std::vector<RawRequest> requests;
  std::string_view line;
  while (reader.next(line)) {
    if (trimmed(line).empty()) continue;
    const int number = reader.line_number();
    Json row;
    try {
      row = Json::parse(line);
    } catch (const Json::exception& e) {  // a syntax error, or a number past a double (out_of_range)
      fail_at_line(path, number, fmt::format("not valid JSON ({})", e.what()));
    }
    if (!row.is_object()) fail_at_line(path, number, "expected one JSON object per line");
    for (const char* key : {"timestamp", "input_length", "output_length"})
      if (!row.contains(key)) fail_at_line(path, number, fmt::format("no '{}'", key));
    RawRequest request;
    request.time_ns = json_time(row["timestamp"], 1e-3, path, number, "timestamp");
    request.input_tokens = json_count(row["input_length"], path, number, "input_length");
    request.output_tokens = json_count(row["output_length"], path, number, "output_length");
    if (row.contains("hash_ids"))
      request.hash_ids = json_hash_ids(row["hash_ids"], request.input_tokens, block_tokens, path, number);
    log.has_hash_ids = log.has_hash_ids || !request.hash_ids.empty();
    requests.push_back(std::move(request));
  }
  log.arrival_column = "timestamp";
  log.block_tokens = block_tokens;
  return requests;
}

// The bench_serving result (vLLM --save-result --save-detailed: one JSON object; SGLang --output-file
// --output-details: one JSON object per line and run) holding per-request details.
const JsonValueAt& pick_result(const std::string& path, const std::vector<JsonValueAt>& results,
                               std::optional<int> result_line) {
  if (result_line) {
    for (const JsonValueAt& result : results)
      if (result.line == *result_line) return result;
    throw InputError(fmt::format("{}: no result starts on line {}", path, *result_line));
  }
  if (results.size() == 1) return results.front();
  std::vector<int> lines;
  for (const JsonValueAt& result : results) lines.push_back(result.line);
  throw InputError(fmt::format("{}: {} results (lines {}): pick one with workload.requests_from.line", path,
                               results.size(), fmt::join(lines, ", ")));
}

std::vector<RawRequest> read_bench_serving(const std::string& path, std::optional<int> result_line,
                                           RequestLog& log) {
  const std::vector<JsonValueAt> results = parse_results(path, read_text_file(path));
  const JsonValueAt& picked = pick_result(path, results, result_line);
  const Json& result = picked.value;
  const int line = picked.line;
  if (!result.is_object()) fail_at_line(path, line, "expected a JSON object (a bench_serving result)");
  if (!result.contains("input_lens") || !result.contains("output_lens"))
    fail_at_line(path, line,
                 "no per-request details (input_lens, output_lens): save them with vLLM's --save-detailed or "
                 "SGLang's --output-details");
  const Json& input_lens = result["input_lens"];
  if (!input_lens.is_array()) fail_at_line(path, line, "input_lens: expected a list");
  const std::size_t count = input_lens.size();
  auto per_request = [&](const char* key) -> const Json* {
    if (!result.contains(key) || result[key].is_null()) return nullptr;
    const Json& values = result[key];
    if (!values.is_array() || values.size() != count)
      fail_at_line(path, line,
                   fmt::format("{}: expected a list of {} values (one per input_lens entry), got {}", key,
                               count, values.is_array() ? std::to_string(values.size()) : values.dump()));
    return &values;
  };
  const Json* output_lens = per_request("output_lens");
  if (!output_lens) fail_at_line(path, line, "output_lens: expected a list, got null");
  const Json* errors = per_request("errors");
  const Json* start_times = per_request("start_times");
  std::vector<RawRequest> requests(count);
  for (std::size_t i = 0; i < count; ++i) {
    RawRequest& request = requests[i];
    request.input_tokens = json_count(input_lens[i], path, line, fmt::format("input_lens[{}]", i));
    request.output_tokens = json_count((*output_lens)[i], path, line, fmt::format("output_lens[{}]", i));
    if (errors) {
      const Json& error = (*errors)[i];
      if (!error.is_string() && !error.is_null())
        fail_at_line(path, line, fmt::format("errors[{}]: expected a string, got {}", i, error.dump()));
      request.failed = error.is_string() && !error.get<std::string>().empty();
    }
    if (start_times)
      request.time_ns = json_time((*start_times)[i], 1, path, line, fmt::format("start_times[{}]", i));
  }
  std::vector<std::string> notes;
  const Json max_concurrency = result.value("max_concurrency", Json());
  if (start_times) {
    log.arrival_column = "start_times";
    if (!max_concurrency.is_null())
      notes.push_back(
          fmt::format("start_times are when the client sent each request under its max_concurrency {}",
                      max_concurrency.dump()));
  } else {
    // bench_serving sends at `request_rate` (inf: all at once), gamma gaps of shape `burstiness`.
    auto rate_of = [&](const char* key, double fallback) {
      if (!result.contains(key)) {
        if (fallback > 0) return fallback;
        fail_at_line(path, line,
                     "no per-request arrival times (start_times) and no request_rate to draw them from");
      }
      const Json& value = result[key];
      if (value.is_string() && (value == "inf" || value == "Infinity"))
        return std::numeric_limits<double>::infinity();
      const std::optional<double> number = json_number(value);
      if (!number || *number <= 0)
        fail_at_line(path, line,
                     fmt::format("{}: expected a positive number or \"inf\", got {}", key, value.dump()));
      return *number;
    };
    log.drawn = DrawnArrivals{rate_of("request_rate", 0), rate_of("burstiness", 1)};
    if (!max_concurrency.is_null())
      notes.push_back(fmt::format("the file's max_concurrency {} (a client-side cap) is not applied",
                                  max_concurrency.dump()));
  }
  log.note = fmt::format("{}", fmt::join(notes, "; "));
  return requests;
}

}  // namespace

const std::vector<std::string>& request_log_format_names() {
  static const std::vector<std::string> names{"csv", "mooncake", "bench_serving"};
  return names;
}

std::string RequestLog::format_name() const {
  return request_log_format_names()[static_cast<std::size_t>(format)];
}

RequestLog read_request_log(const std::string& path, RequestLogFormat format, std::optional<int> result_line,
                            double time_scale, int block_tokens) {
  RequestLog log;
  log.file = path;
  log.format = format;
  log.time_scale = time_scale;
  std::vector<RawRequest> raw;
  switch (format) {
    case RequestLogFormat::kCsv:
      raw = read_csv(path, log);
      break;
    case RequestLogFormat::kMooncake:
      raw = read_mooncake(path, block_tokens, log);
      break;
    case RequestLogFormat::kBenchServing:
      raw = read_bench_serving(path, result_line, log);
      break;
  }
  log.rows = static_cast<int>(raw.size());
  // A request without a prompt or an output token, or one that failed, cannot be served as recorded.
  std::erase_if(raw,
                [](const RawRequest& r) { return r.failed || r.input_tokens == 0 || r.output_tokens == 0; });
  log.skipped = log.rows - static_cast<int>(raw.size());
  if (raw.empty())
    throw InputError(
        fmt::format("{}: no usable request among its {} (each needs a prompt token and an output "
                    "token, and bench_serving's must not have failed)",
                    path, log.rows));
  if (!log.drawn) {
    std::stable_sort(raw.begin(), raw.end(),
                     [](const RawRequest& a, const RawRequest& b) { return a.time_ns < b.time_ns; });
  }
  const std::int64_t first = raw.front().time_ns;
  for (const RawRequest& r : raw)
    log.requests.push_back(
        {static_cast<double>(r.time_ns - first) / 1e9, r.input_tokens, r.output_tokens, r.hash_ids});
  return log;
}

RequestLog load_request_log(const YamlInput& in, const std::string& base_dir) {
  in.expect_map({"file", "format", "time_scale", "line", "block_tokens"});
  const YamlInput file = in.required("file");
  const std::string path = resolve_relative(file.as_string(), base_dir);
  if (const auto why = why_not_a_regular_file(path)) file.fail("request log '" + path + "' " + *why);
  const auto& names = request_log_format_names();
  const auto format = static_cast<RequestLogFormat>(
      std::find(names.begin(), names.end(), in.required("format").as_choice(names)) - names.begin());
  std::optional<int> result_line;
  if (const auto line = in.optional("line")) {
    if (format != RequestLogFormat::kBenchServing)
      line->fail("only a bench_serving file holds several results to pick from");
    result_line = static_cast<int>(line->as_int_in(1, std::numeric_limits<int>::max()));
  }
  int block_tokens = kMooncakeBlockTokens;
  if (const auto block = in.optional("block_tokens")) {
    if (format != RequestLogFormat::kMooncake)
      block->fail("only a mooncake file has hash_ids, in blocks of tokens");
    block_tokens = static_cast<int>(block->as_int_in(1, 1 << 16));
  }
  RequestLog log = read_request_log(path, format, result_line,
                                    in.get_double_in("time_scale", 1, limits::kTimeScale), block_tokens);
  log.file = file.as_string();
  return log;
}

std::vector<double> RequestLog::arrival_times(int count, std::mt19937_64& rng) const {
  const auto n = static_cast<std::size_t>(std::clamp<int>(count, 0, static_cast<int>(requests.size())));
  std::vector<double> times(n, 0.0);
  if (drawn && std::isinf(drawn->rate)) return times;  // all sent at once
  if (drawn) {
    ArrivalProcess process;
    process.rate = drawn->rate;
    process.kind = std::isinf(drawn->burstiness) ? ArrivalProcess::Kind::kFixed
                   : drawn->burstiness == 1      ? ArrivalProcess::Kind::kPoisson
                                                 : ArrivalProcess::Kind::kGamma;
    process.cv = 1 / std::sqrt(drawn->burstiness);  // gamma of shape k has cv 1/sqrt(k)
    times = process.arrival_times(static_cast<int>(n), rng);
  } else {
    for (std::size_t i = 0; i < n; ++i) times[i] = requests[i].arrival;
  }
  for (double& t : times) t *= time_scale;
  return times;
}

std::string RequestLog::arrivals_description() const {
  const std::string scaled = time_scale == 1 ? "" : fmt::format(" x time_scale {:g}", time_scale);
  if (!drawn) return fmt::format("the file's {}{}", arrival_column, scaled);
  const std::string why = "; the file records no per-request arrival times";
  if (std::isinf(drawn->rate)) return "all at t=0: the file's request_rate is inf" + why;
  const std::string process = std::isinf(drawn->burstiness) ? "evenly spaced"
                              : drawn->burstiness == 1
                                  ? "Poisson"
                                  : fmt::format("gamma (burstiness {:g})", drawn->burstiness);
  return fmt::format("drawn ({}, workload.seed) at the file's request_rate {:g} req/s{}{}", process,
                     drawn->rate, scaled, why);
}

}  // namespace semsim
