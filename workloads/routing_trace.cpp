#include "workloads/routing_trace.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unordered_map>

#include "models/compressed_file.hpp"
#include "models/content_hash.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"
#include "models/memory_budget.hpp"
#include "models/output_files.hpp"

namespace semsim {

static_assert(std::endian::native == std::endian::little, "the binary trace form is little-endian");

namespace {

constexpr char kTextMagic[] = "semsim-routing-trace";
constexpr char kBinaryMagic[8] = {'S', 'E', 'M', 'T', 'R', 'A', 'C', 'E'};

// The one check of a header's counts, for both forms: layers and experts as a model may have them.
bool possible_counts(long long moe_layers, long long experts, long long top_k) {
  return moe_layers >= 1 && moe_layers <= limits::kLayers && experts >= 1 && experts <= limits::kExperts &&
         top_k >= 1 && top_k <= experts;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// ---- in-memory trace and builder -------------------------------------------------------------

TraceRequestView RoutingTrace::view(std::size_t r) const {
  const auto first = static_cast<std::size_t>(first_token_[r]);
  const auto count = static_cast<std::size_t>(first_token_[r + 1] - first_token_[r]);
  const std::size_t per_token = static_cast<std::size_t>(header_.moe_layers) * header_.top_k;
  TraceRequestView v;
  v.request = requests_[r];
  v.token_ids = token_ids_.subspan(first, count);
  v.experts = experts_.subspan(first * per_token, count * per_token);
  if (!weights_.empty()) v.weights = weights_.subspan(first * per_token, count * per_token);
  return v;
}

struct TraceBuilder::Storage {
  std::vector<TraceRequest> requests;
  std::vector<std::int64_t> first_token{0};
  std::vector<std::int32_t> token_ids;
  std::vector<ExpertId> experts;
  std::vector<float> weights;
  std::shared_ptr<std::vector<std::string>> vocabulary = std::make_shared<std::vector<std::string>>();
  std::unordered_map<std::string, std::int32_t> ids;
};

TraceBuilder::TraceBuilder(TraceHeader header)
    : header_(std::move(header)), storage_(std::make_shared<Storage>()) {}

std::int32_t TraceBuilder::token_id(const std::string& text) {
  auto [it, inserted] = storage_->ids.emplace(text, static_cast<std::int32_t>(storage_->vocabulary->size()));
  if (inserted) storage_->vocabulary->push_back(text);
  return it->second;
}

std::size_t TraceBuilder::vocabulary_size() const {
  return storage_->vocabulary->size();
}

void TraceBuilder::declare_token(std::int32_t id, const std::string& text, const std::string& where) {
  if (id != static_cast<std::int32_t>(storage_->vocabulary->size()))
    throw InputError(fmt::format("{}: token id {} declared out of order (expected {})", where, id,
                                 storage_->vocabulary->size()));
  storage_->vocabulary->push_back(text);
}

void TraceBuilder::add(const TraceRequestView& request, const std::string& where) {
  validate_request(header_, request, storage_->vocabulary->size(), where);
  Storage& s = *storage_;
  // A trace's size is bounded by its file's, not by a count: a compressed file of valid lines can
  // still expand past what fits, so the arrays are checked before each growth (which doubles them).
  if (const std::size_t entries = s.experts.size() + request.experts.size(); entries > s.experts.capacity())
    check_memory_need(2.0 * static_cast<double>(entries) *
                          static_cast<double>(sizeof(ExpertId) + (header_.gate_weights ? sizeof(float) : 0)),
                      where + ": the trace read so far");
  s.requests.push_back(request.request);
  s.first_token.push_back(s.first_token.back() + request.request.routed_tokens());
  s.token_ids.insert(s.token_ids.end(), request.token_ids.begin(), request.token_ids.end());
  s.experts.insert(s.experts.end(), request.experts.begin(), request.experts.end());
  s.weights.insert(s.weights.end(), request.weights.begin(), request.weights.end());
}

RoutingTrace TraceBuilder::build() && {
  RoutingTrace trace;
  trace.header_ = header_;
  trace.requests_ = std::move(storage_->requests);
  trace.first_token_ = std::move(storage_->first_token);
  trace.token_ids_ = storage_->token_ids;
  trace.experts_ = storage_->experts;
  trace.weights_ = storage_->weights;
  trace.vocabulary_ = storage_->vocabulary;
  trace.storage_ = storage_;
  return trace;
}

long long routed_tokens(const RoutingTrace& trace, const std::vector<bool>& use) {
  long long tokens = 0;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    if (use.empty() || use[r]) tokens += trace.request(r).routed_tokens();
  return tokens;
}

RoutingTrace subset_trace(const RoutingTrace& trace, const std::vector<bool>& keep) {
  TraceBuilder subset(trace.header());
  const auto& vocabulary = trace.vocabulary();
  for (std::size_t token = 0; token < vocabulary.size(); ++token)
    subset.declare_token(static_cast<std::int32_t>(token), vocabulary[token], "subset");
  for (std::size_t r = 0; r < trace.requests(); ++r)
    if (keep[r]) subset.add(trace.view(r), "subset");
  return std::move(subset).build();
}

void validate_request(const TraceHeader& header, const TraceRequestView& view, std::size_t vocabulary,
                      const std::string& where) {
  const TraceRequest& r = view.request;
  if (r.input_tokens < 1)
    throw InputError(fmt::format("{}: input length {} is not positive", where, r.input_tokens));
  if (r.output_tokens < 1)
    throw InputError(fmt::format("{}: output length {} is not positive", where, r.output_tokens));
  if (r.decode_routed < 0 || r.decode_routed > r.output_tokens - 1)
    throw InputError(fmt::format("{}: {} routed decode tokens, but {} output tokens allow at most {}", where,
                                 r.decode_routed, r.output_tokens, r.output_tokens - 1));
  if (r.routed_tokens() == 0) throw InputError(where + ": request has no routed token");
  const std::size_t tokens = static_cast<std::size_t>(r.routed_tokens());
  const std::size_t per_token = static_cast<std::size_t>(header.moe_layers) * header.top_k;
  if (view.token_ids.size() != tokens || view.experts.size() != tokens * per_token ||
      view.weights.size() != (header.gate_weights ? tokens * per_token : 0))
    throw InputError(fmt::format("{}: routing arrays do not match {} tokens x {} layers x top-{}", where,
                                 tokens, header.moe_layers, header.top_k));
  for (std::size_t t = 0; t < tokens; ++t) {
    const std::int32_t id = view.token_ids[t];
    if (id < -1 || id >= static_cast<std::int64_t>(vocabulary))
      throw InputError(
          fmt::format("{}: token {} has id {} outside the vocabulary of {}", where, t, id, vocabulary));
    for (int layer = 0; layer < header.moe_layers; ++layer) {
      const std::size_t base = t * per_token + static_cast<std::size_t>(layer) * header.top_k;
      for (int j = 0; j < header.top_k; ++j) {
        const ExpertId e = view.experts[base + j];
        if (e < 0 || e >= header.experts)
          throw InputError(fmt::format("{}: token {}, MoE layer {}: expert id {} outside [0, {})", where, t,
                                       layer, e, header.experts));
        for (int i = 0; i < j; ++i)
          if (view.experts[base + i] == e)
            throw InputError(
                fmt::format("{}: token {}, MoE layer {}: expert {} chosen twice", where, t, layer, e));
        if (header.gate_weights && !std::isfinite(view.weights[base + j]))
          throw InputError(
              fmt::format("{}: token {}, MoE layer {}: gate weight is not finite", where, t, layer));
      }
    }
  }
}

std::string escape_token_text(std::string_view text, bool escape_spaces) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < ' ' || (c == ' ' && escape_spaces) || c == 0x7f || c == '%')
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string unescape_token_text(std::string_view text, const std::string& where) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= text.size() ||
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr != text.data() + i + 3)
      throw InputError(where + ": bad %-escape in token text");
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

std::string trace_content_hash(const RoutingTrace& trace) {
  const TraceHeader& h = trace.header();
  ContentHash hash;
  const std::int32_t shape[] = {h.moe_layers, h.experts, h.top_k, h.gate_weights ? 1 : 0};
  hash.add(std::span<const std::int32_t>(shape));
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    const TraceRequest& q = trace.request(r);
    const std::int32_t lengths[] = {q.input_tokens, q.output_tokens, q.prefill_routed ? 1 : 0,
                                    q.decode_routed};
    hash.add(std::span<const std::int32_t>(lengths));
  }
  hash.add(trace.token_ids());
  hash.add(trace.all_experts());
  hash.add(trace.all_weights());
  for (const std::string& text : trace.vocabulary()) {
    const auto size = static_cast<std::uint64_t>(text.size());
    hash.add(std::span<const std::uint64_t>(&size, 1));
    hash.add(text);
  }
  return hash.hex();
}

// ---- text form -------------------------------------------------------------------------------

namespace {

class TextTraceParser {
 public:
  explicit TextTraceParser(const std::string& path) : lines_(path) {}

  void run(const std::function<void(const TraceHeader&)>& on_header,
           const std::function<void(const TraceRequestView&, const std::vector<std::string>&)>& on_request) {
    std::string_view line;
    read_header(line);
    on_header(header_);
    bool have_line = true;
    while (have_line) {
      if (is_skippable(line)) {
        have_line = lines_.next(line);
        continue;
      }
      if (line.starts_with("v ")) {
        declare(line.substr(2));
        have_line = lines_.next(line);
      } else if (line.starts_with("r ")) {
        read_request(line.substr(2));
        on_request(current_, vocabulary_);
        ++request_index_;
        have_line = lines_.next(line);
      } else {
        fail("expected a 'v' (vocabulary) or 'r' (request) line");
      }
    }
    if (request_index_ == 0) throw InputError(lines_.path() + ": the trace holds no request");
  }

 private:
  static bool is_skippable(std::string_view line) { return line.empty() || line.front() == '#'; }

  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(fmt::format("{}:{}: {}", lines_.path(), lines_.line_number(), message));
  }
  std::string where() const { return fmt::format("{}:{}", lines_.path(), lines_.line_number()); }

  static std::string_view next_field(std::string_view& rest) {
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) {
      rest = {};
      return {};
    }
    rest.remove_prefix(start);
    const auto end = rest.find(' ');
    const std::string_view field = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    return field;
  }

  template <typename T>
  T number(std::string_view field, const char* what) const {
    T value{};
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || ptr != field.data() + field.size())
      fail(fmt::format("expected {}, got '{}'", what, field));
    return value;
  }

  void read_header(std::string_view& line) {
    bool first = true;
    bool seen_layers = false, seen_experts = false, seen_k = false, seen_model = false;
    while (lines_.next(line)) {
      if (first) {
        std::string_view rest = line;
        if (next_field(rest) != kTextMagic)
          fail("not a semsim routing trace (first line must be 'semsim-routing-trace 1')");
        const int version = number<int>(next_field(rest), "a format version");
        if (version != kTraceFormatVersion)
          fail(fmt::format("unsupported trace format version {} (this semsim reads {})", version,
                           kTraceFormatVersion));
        first = false;
        continue;
      }
      if (is_skippable(line)) continue;
      if (line.starts_with("v ") || line.starts_with("r ")) break;
      std::string_view rest = line;
      const std::string_view key = next_field(rest);
      const auto value_start = rest.find_first_not_of(' ');
      const std::string_view value = value_start == std::string_view::npos ? "" : rest.substr(value_start);
      if (key == "model") {
        header_.model = std::string(value), seen_model = true;
      } else if (key == "source") {
        header_.source = unescape_token_text(value, where());
      } else if (key == "moe_layers") {
        header_.moe_layers = number<int>(value, "a layer count"), seen_layers = true;
      } else if (key == "experts") {
        header_.experts = number<int>(value, "an expert count"), seen_experts = true;
      } else if (key == "top_k") {
        header_.top_k = number<int>(value, "top-k"), seen_k = true;
      } else if (key == "gate_weights") {
        header_.gate_weights = number<int>(value, "0 or 1") != 0;
      } else {
        fail(fmt::format("unknown header key '{}'", key));
      }
    }
    if (first) throw InputError(lines_.path() + ": empty file, not a semsim routing trace");
    if (!seen_model || !seen_layers || !seen_experts || !seen_k)
      throw InputError(lines_.path() + ": header lacks one of model, moe_layers, experts, top_k");
    if (!possible_counts(header_.moe_layers, header_.experts, header_.top_k))
      throw InputError(fmt::format(
          "{}: impossible header: {} MoE layers, {} experts, top-{} (at most {} layers and {} experts)",
          lines_.path(), header_.moe_layers, header_.experts, header_.top_k, limits::kLayers,
          limits::kExperts));
  }

  void declare(std::string_view rest) {
    const auto id = number<std::int32_t>(next_field(rest), "a token id");
    if (id != static_cast<std::int32_t>(vocabulary_.size()))
      fail(fmt::format("token id {} declared out of order (expected {})", id, vocabulary_.size()));
    const auto start = rest.find_first_not_of(' ');
    vocabulary_.push_back(
        unescape_token_text(start == std::string_view::npos ? "" : rest.substr(start), where()));
  }

  void read_request(std::string_view rest) {
    const std::string request_line = where();
    TraceRequest& r = current_.request;
    r.input_tokens = number<int>(next_field(rest), "an input length");
    r.output_tokens = number<int>(next_field(rest), "an output length");
    r.prefill_routed = number<int>(next_field(rest), "0 or 1 (prefill routed)") != 0;
    r.decode_routed = number<int>(next_field(rest), "a routed decode count");
    // Each count on its own first: their sum must not overflow.
    for (const int count : {r.input_tokens, r.output_tokens, r.decode_routed})
      if (count < 0 || count > limits::kRequestTokens)
        fail(fmt::format("impossible request line (a length or count outside [0, {}])",
                         limits::kRequestTokens));
    if (r.input_tokens < 1) fail("impossible request line");
    const auto tokens = static_cast<std::size_t>(r.routed_tokens());
    // Grown as token lines are read, so a request line declaring more tokens than follow costs
    // nothing before the truncation is found.
    ids_.clear();
    experts_.clear();
    weights_.clear();
    std::string_view line;
    for (std::size_t t = 0; t < tokens; ++t) {
      if (!lines_.next(line))
        throw InputError(fmt::format("{}: truncated: the request lacks {} of its {} token lines",
                                     request_line, tokens - t, tokens));
      read_token(line);
    }
    current_.token_ids = ids_;
    current_.experts = experts_;
    current_.weights = weights_;
    validate_request(header_, current_, vocabulary_.size(),
                     fmt::format("{}: request {}", request_line, request_index_));
  }

  void read_token(std::string_view line) {
    if (!line.starts_with("t ")) fail("expected a token line 't ID GROUPS...'");
    std::string_view rest = line.substr(2);
    const std::string_view id = next_field(rest);
    ids_.push_back(id == "-" ? -1 : number<std::int32_t>(id, "a token id or '-'"));
    for (int layer = 0; layer < header_.moe_layers; ++layer) {
      std::string_view group = next_field(rest);
      if (group.empty())
        fail(fmt::format("token line has {} layer groups, expected {}", layer, header_.moe_layers));
      for (int j = 0; j < header_.top_k; ++j) {
        const auto comma = group.find(',');
        if ((comma == std::string_view::npos) != (j == header_.top_k - 1))
          fail(fmt::format("MoE layer {}: expected {} experts separated by ','", layer, header_.top_k));
        std::string_view item = group.substr(0, comma);
        group.remove_prefix(comma == std::string_view::npos ? group.size() : comma + 1);
        const auto colon = item.find(':');
        if ((colon != std::string_view::npos) != header_.gate_weights)
          fail(header_.gate_weights ? "expected expert:weight items"
                                    : "unexpected ':weight' (gate_weights 0)");
        experts_.push_back(number<ExpertId>(item.substr(0, colon), "an expert id"));
        if (header_.gate_weights) weights_.push_back(number<float>(item.substr(colon + 1), "a gate weight"));
      }
    }
    if (!next_field(rest).empty())
      fail(fmt::format("token line has more than {} layer groups", header_.moe_layers));
  }

  LineReader lines_;
  TraceHeader header_;
  std::vector<std::string> vocabulary_;
  std::vector<std::int32_t> ids_;
  std::vector<ExpertId> experts_;
  std::vector<float> weights_;
  TraceRequestView current_;
  std::size_t request_index_ = 0;
};

void write_text_trace(const RoutingTrace& trace, const std::string& path) {
  TextWriter writer(path);
  const TraceHeader& h = trace.header();
  std::string& out = writer.buffer();
  out += fmt::format("{} {}\nmodel {}\nsource ", kTextMagic, kTraceFormatVersion, h.model);
  out += escape_token_text(h.source, false);
  out += fmt::format("\nmoe_layers {}\nexperts {}\ntop_k {}\ngate_weights {}\n", h.moe_layers, h.experts,
                     h.top_k, h.gate_weights ? 1 : 0);
  std::size_t declared = 0;
  const auto& vocabulary = trace.vocabulary();
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    const TraceRequestView v = trace.view(r);
    // Declare every id this request uses before its request line (ids are in first-use order).
    for (std::int32_t id : v.token_ids)
      for (; id >= 0 && declared <= static_cast<std::size_t>(id); ++declared) {
        out += fmt::format("v {} ", declared);
        out += escape_token_text(vocabulary[declared]);
        out += '\n';
      }
    out += fmt::format("r {} {} {} {}\n", v.request.input_tokens, v.request.output_tokens,
                       v.request.prefill_routed ? 1 : 0, v.request.decode_routed);
    for (std::size_t t = 0; t < v.token_ids.size(); ++t) {
      if (v.token_ids[t] < 0)
        out += "t -";
      else
        out += fmt::format("t {}", v.token_ids[t]);
      for (int layer = 0; layer < h.moe_layers; ++layer) {
        const std::size_t base = (t * h.moe_layers + layer) * h.top_k;
        for (int j = 0; j < h.top_k; ++j) {
          out += j == 0 ? ' ' : ',';
          if (h.gate_weights)
            out += fmt::format("{}:{}", v.experts[base + j], v.weights[base + j]);
          else
            out += fmt::format("{}", v.experts[base + j]);
        }
      }
      out += '\n';
    }
    writer.flush_if_large();
  }
  writer.close();
}

// ---- binary form -----------------------------------------------------------------------------

struct BinaryHeader {
  char magic[8];
  std::uint32_t version, flags, moe_layers, experts, top_k, reserved;
  std::uint64_t requests, tokens, vocabulary, vocabulary_bytes, model_bytes, source_bytes;
};
static_assert(sizeof(BinaryHeader) == 80);

// Offsets of the sections after the header, in file order; `end` is the exact file size.
struct BinaryLayout {
  std::uint64_t requests, token_ids, experts, weights, vocabulary_offsets, vocabulary_bytes, model, source,
      end;
};

// Sizes from a header that may be hostile: every product and sum is checked, so that sizes which
// wrap around cannot describe a small file whose sections reach past it.
class CheckedSize {
 public:
  explicit CheckedSize(std::uint64_t value) : value_(value) {}
  CheckedSize operator*(std::uint64_t factor) const {
    CheckedSize out(0);
    out.overflow_ = overflow_ || __builtin_mul_overflow(value_, factor, &out.value_);
    return out;
  }
  CheckedSize operator+(const CheckedSize& other) const {
    CheckedSize out(0);
    out.overflow_ = overflow_ || other.overflow_ || __builtin_add_overflow(value_, other.value_, &out.value_);
    return out;
  }
  CheckedSize aligned8() const {
    CheckedSize out = *this + CheckedSize(7);
    out.value_ &= ~std::uint64_t{7};
    return out;
  }
  bool overflow() const { return overflow_; }
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_;
  bool overflow_ = false;
};

// The layout `h` describes, or nothing when its sizes do not fit in 64 bits.
std::optional<BinaryLayout> layout_of(const BinaryHeader& h) {
  const CheckedSize entries = CheckedSize(h.tokens) * h.moe_layers * h.top_k;
  const CheckedSize requests(sizeof(BinaryHeader));
  const CheckedSize token_ids = (requests + CheckedSize(h.requests) * 16).aligned8();
  const CheckedSize experts = (token_ids + CheckedSize(h.tokens) * 4).aligned8();
  const CheckedSize weights = (experts + entries * 2).aligned8();
  const CheckedSize vocabulary_offsets =
      (weights + ((h.flags & 1) ? entries * 4 : CheckedSize(0))).aligned8();
  const CheckedSize vocabulary_bytes = vocabulary_offsets + (CheckedSize(h.vocabulary) + CheckedSize(1)) * 8;
  const CheckedSize model = vocabulary_bytes + CheckedSize(h.vocabulary_bytes);
  const CheckedSize source = model + CheckedSize(h.model_bytes);
  const CheckedSize end = source + CheckedSize(h.source_bytes);
  if (end.overflow()) return std::nullopt;
  return BinaryLayout{requests.value(),
                      token_ids.value(),
                      experts.value(),
                      weights.value(),
                      vocabulary_offsets.value(),
                      vocabulary_bytes.value(),
                      model.value(),
                      source.value(),
                      end.value()};
}

void write_binary_trace(const RoutingTrace& trace, const std::string& path) {
  const TraceHeader& t = trace.header();
  std::string vocabulary_bytes;
  std::vector<std::uint64_t> vocabulary_offsets{0};
  for (const auto& text : trace.vocabulary()) {
    vocabulary_bytes += text;
    vocabulary_offsets.push_back(vocabulary_bytes.size());
  }
  BinaryHeader h{};
  std::memcpy(h.magic, kBinaryMagic, sizeof(h.magic));
  h.version = kTraceFormatVersion;
  h.flags = t.gate_weights ? 1 : 0;
  h.moe_layers = static_cast<std::uint32_t>(t.moe_layers);
  h.experts = static_cast<std::uint32_t>(t.experts);
  h.top_k = static_cast<std::uint32_t>(t.top_k);
  h.requests = trace.requests();
  h.tokens = trace.tokens();
  h.vocabulary = trace.vocabulary().size();
  h.vocabulary_bytes = vocabulary_bytes.size();
  h.model_bytes = t.model.size();
  h.source_bytes = t.source.size();
  const BinaryLayout l = *layout_of(h);  // sizes of a trace in memory fit

  std::string out(l.end, '\0');
  std::memcpy(out.data(), &h, sizeof(h));
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    const TraceRequest& q = trace.request(r);
    const std::uint32_t fields[4] = {static_cast<std::uint32_t>(q.input_tokens),
                                     static_cast<std::uint32_t>(q.output_tokens), q.prefill_routed ? 1u : 0u,
                                     static_cast<std::uint32_t>(q.decode_routed)};
    std::memcpy(out.data() + l.requests + r * 16, fields, 16);
  }
  auto copy = [&](std::uint64_t offset, const auto& span) {
    if (!span.empty()) std::memcpy(out.data() + offset, span.data(), span.size_bytes());
  };
  copy(l.token_ids, trace.token_ids());
  copy(l.experts, trace.all_experts());
  copy(l.weights, trace.all_weights());
  copy(l.vocabulary_offsets, std::span<const std::uint64_t>(vocabulary_offsets));
  std::memcpy(out.data() + l.vocabulary_bytes, vocabulary_bytes.data(), vocabulary_bytes.size());
  std::memcpy(out.data() + l.model, t.model.data(), t.model.size());
  std::memcpy(out.data() + l.source, t.source.data(), t.source.size());

  write_text_file(path, out);
}

struct Mapping {
  void* address = MAP_FAILED;
  std::size_t size = 0;
  ~Mapping() {
    if (address != MAP_FAILED) ::munmap(address, size);
  }
};

bool has_binary_magic(const std::string& path) {
  const int fd = open_regular_file(path);
  char magic[sizeof(kBinaryMagic)] = {};
  const bool read = ::read(fd, magic, sizeof(magic)) == static_cast<ssize_t>(sizeof(magic));
  ::close(fd);
  return read && std::memcmp(magic, kBinaryMagic, sizeof(magic)) == 0;
}

}  // namespace

RoutingTrace map_binary_trace(const std::string& path) {
  const int fd = open_regular_file(path);
  struct stat st {};
  ::fstat(fd, &st);
  auto mapping = std::make_shared<Mapping>();
  mapping->size = static_cast<std::size_t>(st.st_size);
  if (mapping->size >= sizeof(BinaryHeader))
    mapping->address = ::mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping->address == MAP_FAILED)
    throw InputError(path + ": truncated binary trace (no complete header)");
  const auto* base = static_cast<const char*>(mapping->address);
  BinaryHeader h;
  std::memcpy(&h, base, sizeof(h));
  if (h.version != kTraceFormatVersion)
    throw InputError(fmt::format("{}: unsupported binary trace version {} (this semsim reads {})", path,
                                 h.version, kTraceFormatVersion));
  if (!possible_counts(h.moe_layers, h.experts, h.top_k) ||
      h.requests > static_cast<std::uint64_t>(limits::kRequests) || h.tokens > (1ULL << 40) ||
      h.vocabulary > static_cast<std::uint64_t>(limits::kVocabulary) || h.vocabulary_bytes > (1ULL << 40) ||
      h.model_bytes > 4096 || h.source_bytes > (1 << 20) || (h.flags & ~1u))
    throw InputError(path + ": corrupt binary trace header");
  const std::optional<BinaryLayout> layout = layout_of(h);
  if (!layout) throw InputError(path + ": corrupt binary trace header (its section sizes overflow 64 bits)");
  const BinaryLayout& l = *layout;
  if (l.end != mapping->size)
    throw InputError(
        fmt::format("{}: binary trace is {} bytes, its header describes {} (truncated or corrupt)", path,
                    mapping->size, l.end));

  RoutingTrace trace;
  trace.header_.model.assign(base + l.model, h.model_bytes);
  trace.header_.source.assign(base + l.source, h.source_bytes);
  trace.header_.moe_layers = static_cast<int>(h.moe_layers);
  trace.header_.experts = static_cast<int>(h.experts);
  trace.header_.top_k = static_cast<int>(h.top_k);
  trace.header_.gate_weights = (h.flags & 1) != 0;
  const std::size_t entries = h.tokens * h.moe_layers * h.top_k;
  trace.token_ids_ = {reinterpret_cast<const std::int32_t*>(base + l.token_ids), h.tokens};
  trace.experts_ = {reinterpret_cast<const ExpertId*>(base + l.experts), entries};
  if (trace.header_.gate_weights)
    trace.weights_ = {reinterpret_cast<const float*>(base + l.weights), entries};

  auto vocabulary = std::make_shared<std::vector<std::string>>();
  const auto* offsets = reinterpret_cast<const std::uint64_t*>(base + l.vocabulary_offsets);
  for (std::uint64_t i = 0; i < h.vocabulary; ++i) {
    if (offsets[i] > offsets[i + 1] || offsets[i + 1] > h.vocabulary_bytes)
      throw InputError(fmt::format("{}: corrupt vocabulary table at entry {}", path, i));
    vocabulary->emplace_back(base + l.vocabulary_bytes + offsets[i], offsets[i + 1] - offsets[i]);
  }
  trace.vocabulary_ = vocabulary;

  trace.first_token_.push_back(0);
  for (std::uint64_t r = 0; r < h.requests; ++r) {
    std::uint32_t fields[4];
    std::memcpy(fields, base + l.requests + r * 16, 16);
    if (fields[0] > (1u << 24) || fields[1] > (1u << 24) || fields[2] > 1 || fields[3] > (1u << 24))
      throw InputError(fmt::format("{}: request record {}: impossible lengths", path, r));
    TraceRequest q{static_cast<int>(fields[0]), static_cast<int>(fields[1]), fields[2] == 1,
                   static_cast<int>(fields[3])};
    trace.requests_.push_back(q);
    trace.first_token_.push_back(trace.first_token_.back() + q.routed_tokens());
    if (static_cast<std::uint64_t>(trace.first_token_.back()) > h.tokens)
      throw InputError(
          fmt::format("{}: request record {}: more routed tokens than the trace holds", path, r));
  }
  if (static_cast<std::uint64_t>(trace.first_token_.back()) != h.tokens)
    throw InputError(fmt::format("{}: requests route {} tokens, the header says {}", path,
                                 trace.first_token_.back(), h.tokens));
  if (h.requests == 0) throw InputError(path + ": the trace holds no request");
  trace.storage_ = mapping;
  for (std::size_t r = 0; r < trace.requests(); ++r)
    validate_request(trace.header_, trace.view(r), vocabulary->size(),
                     fmt::format("{}: request record {}", path, r));
  return trace;
}

void read_trace(
    const std::string& path, const std::function<void(const TraceHeader&)>& on_header,
    const std::function<void(const TraceRequestView&, const std::vector<std::string>&)>& on_request) {
  if (!path_exists(path)) throw InputError(path + ": no such file");
  if (has_binary_magic(path)) {
    const RoutingTrace trace = map_binary_trace(path);
    on_header(trace.header());
    for (std::size_t r = 0; r < trace.requests(); ++r) on_request(trace.view(r), trace.vocabulary());
    return;
  }
  TextTraceParser(path).run(on_header, on_request);
}

RoutingTrace load_trace(const std::string& path) {
  if (path_exists(path) && has_binary_magic(path)) return map_binary_trace(path);
  std::unique_ptr<TraceBuilder> builder;
  std::size_t index = 0;
  read_trace(
      path, [&](const TraceHeader& header) { builder = std::make_unique<TraceBuilder>(header); },
      [&](const TraceRequestView& request, const std::vector<std::string>& vocabulary) {
        for (std::size_t id = builder->vocabulary_size(); id < vocabulary.size(); ++id)
          builder->declare_token(static_cast<std::int32_t>(id), vocabulary[id], path);
        builder->add(request, fmt::format("{}: request {}", path, index++));
      });
  return std::move(*builder).build();
}

bool is_trace_file_name(const std::string& path) {
  return ends_with(path, ".semtrace") || ends_with(path, ".semtrace.txt") ||
         ends_with(path, ".semtrace.txt.gz");
}

void write_trace(const RoutingTrace& trace, const std::string& path) {
  if (ends_with(path, ".semtrace"))
    write_binary_trace(trace, path);
  else if (ends_with(path, ".semtrace.txt") || ends_with(path, ".semtrace.txt.gz"))
    write_text_trace(trace, path);
  else
    throw InputError(
        path +
        ": a trace file name must end in .semtrace (binary), .semtrace.txt or .semtrace.txt.gz (text)");
}

}  // namespace semsim
