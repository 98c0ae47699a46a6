#include "calibrate/replay/step_export.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <ostream>
#include <sstream>
#include <utility>

#include "models/input_error.hpp"

namespace semsim {

int ExportedRank::tokens() const {
  int sum = 0;
  for (const ExportedChunk& chunk : chunks) sum += chunk.new_tokens;
  return sum;
}

long long ExportedExperts::activations() const {
  return std::accumulate(tokens.begin(), tokens.end(), 0LL);
}

bool ExportedStep::operator==(const ExportedStep& o) const {
  return index == o.index && start_s == o.start_s && end_s == o.end_s &&
         std::equal(std::begin(phase_s), std::end(phase_s), std::begin(o.phase_s)) && ranks == o.ranks &&
         layers == o.layers;
}

namespace {

std::string export_number(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return {text, end};
}

std::string export_number(long long value) {
  return std::to_string(value);
}

template <class T>
std::string export_list(const std::vector<T>& values) {
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text +=
        export_number(static_cast<std::conditional_t<std::is_integral_v<T>, long long, double>>(values[i]));
  }
  return text;
}

std::string export_chunks(const std::vector<ExportedChunk>& chunks) {
  std::string text;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(chunks[i].new_tokens) + "+" + std::to_string(chunks[i].prior_context);
  }
  return text;
}

// One line of the file: its record kind, then key=value words in any order.
class ExportRecord {
 public:
  ExportRecord(const std::string& path, int line, const std::string& text) : path_(path), line_(line) {
    std::istringstream words(text);
    words >> kind_;
    std::string word;
    while (words >> word) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) fail("", "'" + word + "' is not key=value");
      std::string key = word.substr(0, eq);
      if (std::any_of(fields_.begin(), fields_.end(), [&](const auto& f) { return f.first == key; }))
        fail(key, "given twice");
      fields_.emplace_back(std::move(key), word.substr(eq + 1));
    }
  }

  const std::string& kind() const { return kind_; }
  int line() const { return line_; }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    const std::string at = path_ + ":" + std::to_string(line_) + ": ";
    throw InputError(at + (key.empty() ? kind_ : kind_ + " " + key) + ": " + why, key);
  }

  // Every key present is one of `allowed`, and every one of `required` is present.
  void expect(std::initializer_list<const char*> required,
              std::initializer_list<const char*> optional = {}) const {
    for (const auto& field : fields_) {
      const std::string& key = field.first;  // a plain reference: clang 14's lambdas cannot capture bindings
      const auto is = [&](const char* name) { return key == name; };
      if (std::none_of(required.begin(), required.end(), is) &&
          std::none_of(optional.begin(), optional.end(), is)) {
        std::string keys;
        for (const char* name : required) keys += std::string(keys.empty() ? "" : ", ") + name;
        for (const char* name : optional) keys += std::string(", ") + name;
        fail(key, "unknown key; a '" + kind_ + "' line has " + keys);
      }
    }
    for (const char* name : required)
      if (!has(name)) fail(name, "missing");
  }

  bool has(const std::string& key) const {
    return std::any_of(fields_.begin(), fields_.end(), [&](const auto& f) { return f.first == key; });
  }
  const std::string& text(const std::string& key) const {
    for (const auto& [name, value] : fields_)
      if (name == key) return value;
    fail(key, "missing");
  }

  long long integer(const std::string& key, long long low, long long high) const {
    return parse_integer(key, text(key), low, high);
  }
  double seconds(const std::string& key) const { return parse_real(key, text(key)); }

  template <class T>
  std::vector<T> integers(const std::string& key, long long low, long long high) const {
    std::vector<T> values;
    for_each_item(key, [&](const std::string& item) {
      values.push_back(static_cast<T>(parse_integer(key, item, low, high)));
    });
    return values;
  }
  std::vector<double> reals(const std::string& key) const {
    std::vector<double> values;
    for_each_item(key, [&](const std::string& item) { values.push_back(parse_real(key, item)); });
    return values;
  }
  std::vector<ExportedChunk> chunks(const std::string& key) const {
    std::vector<ExportedChunk> values;
    for_each_item(key, [&](const std::string& item) {
      const std::size_t plus = item.find('+');
      if (plus == std::string::npos) fail(key, "'" + item + "' is not NEW+PRIOR");
      values.push_back({static_cast<int>(parse_integer(key, item.substr(0, plus), 1, 1 << 24)),
                        parse_integer(key, item.substr(plus + 1), 0, 1LL << 40)});
    });
    return values;
  }

 private:
  template <class F>
  void for_each_item(const std::string& key, F&& f) const {
    const std::string& all = text(key);
    if (all.empty()) return;
    std::size_t begin = 0;
    while (true) {
      const std::size_t comma = all.find(',', begin);
      f(all.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
      if (comma == std::string::npos) return;
      begin = comma + 1;
    }
  }
  long long parse_integer(const std::string& key, const std::string& item, long long low,
                          long long high) const {
    long long value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size())
      fail(key, "'" + item + "' is not an integer");
    if (value < low || value > high)
      fail(key, item + " is outside [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    return value;
  }
  double parse_real(const std::string& key, const std::string& item) const {
    double value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || !std::isfinite(value))
      fail(key, "'" + item + "' is not a number");
    if (value < 0) fail(key, item + " is negative");
    return value;
  }

  const std::string& path_;
  int line_;
  std::string kind_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

constexpr long long kMaxExportCount = 1 << 24;

void read_export_model(const ExportRecord& r, ExportedModel& m) {
  r.expect({"name", "hidden", "layers", "routed_experts", "top_k", "expert_ffn", "attention", "heads",
            "moe_layers", "weights", "dispatch_bytes_per_element", "activation_bytes"},
           {"kv_heads", "head_dim", "kv_lora", "rope", "nope", "v_head"});
  m.name = r.text("name");
  m.hidden = static_cast<int>(r.integer("hidden", 1, kMaxExportCount));
  m.layers = static_cast<int>(r.integer("layers", 1, 1024));
  m.routed_experts = static_cast<int>(r.integer("routed_experts", 1, 32767));
  m.top_k = static_cast<int>(r.integer("top_k", 1, m.routed_experts));
  m.expert_ffn = static_cast<int>(r.integer("expert_ffn", 1, kMaxExportCount));
  const std::string& attention = r.text("attention");
  if (attention != "mla" && attention != "gqa") r.fail("attention", "'" + attention + "' is not mla or gqa");
  m.mla = attention == "mla";
  m.heads = static_cast<int>(r.integer("heads", 1, 4096));
  if (m.mla) {
    m.kv_lora = static_cast<int>(r.integer("kv_lora", 1, kMaxExportCount));
    m.rope = static_cast<int>(r.integer("rope", 0, kMaxExportCount));
    m.nope = static_cast<int>(r.integer("nope", 1, kMaxExportCount));
    m.v_head = static_cast<int>(r.integer("v_head", 1, kMaxExportCount));
  } else {
    m.kv_heads = static_cast<int>(r.integer("kv_heads", 1, m.heads));
    if (m.heads % m.kv_heads != 0) r.fail("kv_heads", "does not divide heads");
    m.head_dim = static_cast<int>(r.integer("head_dim", 1, kMaxExportCount));
  }
  m.moe_layers = r.integers<int>("moe_layers", 0, m.layers - 1);
  if (m.moe_layers.empty()) r.fail("moe_layers", "empty: a model without MoE layers has nothing to export");
  for (std::size_t i = 1; i < m.moe_layers.size(); ++i)
    if (m.moe_layers[i] <= m.moe_layers[i - 1]) r.fail("moe_layers", "not ascending");
  m.weights = r.text("weights");
  if (m.weights != "bf16" && m.weights != "fp8") r.fail("weights", "'" + m.weights + "' is not bf16 or fp8");
  m.dispatch_bytes_per_element = r.seconds("dispatch_bytes_per_element");
  m.activation_bytes = r.seconds("activation_bytes");
}

const char* const kExportedGemmOps[] = {"attention_projections", "gate", "shared_experts", "dense_ffn",
                                        "lm_head"};

// Per-rank or per-pair lists must have one entry per rank (or pair).
void expect_export_size(const ExportRecord& r, const std::string& key, std::size_t size, std::size_t wanted) {
  if (size != wanted) r.fail(key, std::to_string(size) + " values; expected " + std::to_string(wanted));
}

class ExportReader {
 public:
  explicit ExportReader(const std::string& path) : path_(path) {}

  StepExport read() {
    std::ifstream in(path_);
    if (!in) throw InputError(path_ + ": cannot open the step export");
    std::string text;
    int line = 0;
    long long declared_steps = -1;
    while (std::getline(in, text)) {
      ++line;
      if (text.empty() || text[0] == '#') continue;
      const ExportRecord r(path_, line, text);
      last_line_ = line;
      if (!header_seen_) {
        read_header(r);
        continue;
      }
      if (r.kind() == "run") {
        declared_steps = read_run(r);
      } else if (r.kind() == "model") {
        needs(r, seen_run_, "a 'run' line");
        read_export_model(r, data_.model);
        seen_model_ = true;
      } else if (r.kind() == "gemm") {
        needs(r, seen_model_ && data_.steps.empty(), "the 'model' line, before the first step");
        read_gemm(r);
      } else if (r.kind() == "step") {
        needs(r, seen_model_, "the 'model' line");
        finish_step(r.line());
        read_step(r);
      } else if (r.kind() == "rank") {
        needs(r, !data_.steps.empty() && step().layers.empty(), "a 'step' line, before its layers");
        read_rank(r);
      } else if (r.kind() == "layer") {
        needs(r, !data_.steps.empty(), "a 'step' line");
        read_layer(r);
      } else if (r.kind() == "experts") {
        needs(r, !data_.steps.empty() && !step().layers.empty(), "a 'layer' line");
        read_experts(r);
      } else {
        r.fail("", "unknown line kind; expected run, model, gemm, step, rank, layer or experts");
      }
    }
    if (!header_seen_)
      throw InputError(path_ + ": empty; expected a '" + std::string(kStepExportFormat) + "' export");
    if (!seen_model_) throw InputError(path_ + ":" + std::to_string(last_line_) + ": no 'model' line");
    finish_step(last_line_ + 1);
    if (static_cast<long long>(data_.steps.size()) != declared_steps)
      throw InputError(path_ + ":" + std::to_string(last_line_) +
                           ": run steps: " + std::to_string(data_.steps.size()) +
                           " steps in the file, the run line says " + std::to_string(declared_steps),
                       "steps");
    return std::move(data_);
  }

 private:
  void needs(const ExportRecord& r, bool ok, const std::string& what) const {
    if (!ok) r.fail("", "out of place: it comes after " + what);
  }
  ExportedStep& step() { return data_.steps.back(); }

  void read_header(const ExportRecord& r) {
    if (r.kind() != kStepExportFormat)
      r.fail("", "not a step export: the first line is '" + std::string(kStepExportFormat) + " version=N'");
    r.expect({"version"});
    const long long version = r.integer("version", 1, 1 << 20);
    if (version != kStepExportVersion)
      r.fail("version", "version " + std::to_string(version) + " is not one this semsim reads (" +
                            std::to_string(kStepExportVersion) + ")");
    header_seen_ = true;
  }

  long long read_run(const ExportRecord& r) {
    if (seen_run_) r.fail("", "a second 'run' line");
    r.expect({"scenario", "seed", "rate", "ranks", "first_step", "steps"});
    data_.scenario = r.text("scenario");
    data_.seed = static_cast<std::uint64_t>(r.integer("seed", 0, std::numeric_limits<long long>::max()));
    data_.rate = r.seconds("rate");
    data_.ranks = static_cast<int>(r.integer("ranks", 1, 4096));
    data_.first_step = r.integer("first_step", 0, std::numeric_limits<long long>::max());
    seen_run_ = true;
    return r.integer("steps", 1, 10000);
  }

  void read_gemm(const ExportRecord& r) {
    r.expect({"op", "n", "k"});
    const std::string& op = r.text("op");
    if (std::none_of(std::begin(kExportedGemmOps), std::end(kExportedGemmOps),
                     [&](const char* o) { return op == o; }))
      r.fail("op", "'" + op + "' is not attention_projections, gate, shared_experts, dense_ffn or lm_head");
    data_.model.gemms.push_back({op, r.integer("n", 1, 1LL << 32), r.integer("k", 1, 1LL << 32)});
  }

  void read_step(const ExportRecord& r) {
    r.expect({"index", "start_s", "end_s", "attention_s", "dispatch_s", "experts_s", "combine_s", "other_s"});
    ExportedStep& s = data_.steps.emplace_back();
    s.index = r.integer("index", 0, std::numeric_limits<long long>::max());
    const long long wanted = data_.first_step + static_cast<long long>(data_.steps.size()) - 1;
    if (s.index != wanted) r.fail("index", std::to_string(s.index) + "; expected " + std::to_string(wanted));
    s.start_s = r.seconds("start_s");
    s.end_s = r.seconds("end_s");
    if (s.end_s < s.start_s) r.fail("end_s", "before start_s");
    for (int p = 0; p < kExportedPhaseCount; ++p)
      s.phase_s[p] = r.seconds(std::string(kExportedPhases[p]) + "_s");
    step_line_ = r.line();
  }

  void read_rank(const ExportRecord& r) {
    if (static_cast<int>(step().ranks.size()) == data_.ranks)
      r.fail("", "more 'rank' lines than the run's " + std::to_string(data_.ranks) + " ranks");
    r.expect({"chunks", "logits", "other_s"});
    ExportedRank& rank = step().ranks.emplace_back();
    rank.chunks = r.chunks("chunks");
    rank.logits = static_cast<int>(r.integer("logits", 0, static_cast<long long>(rank.chunks.size())));
    rank.other_s = r.seconds("other_s");
  }

  void read_layer(const ExportRecord& r) {
    ExportedStep& s = step();
    if (static_cast<int>(s.ranks.size()) != data_.ranks)
      r.fail("", "the step has " + std::to_string(s.ranks.size()) + " 'rank' lines; expected " +
                     std::to_string(data_.ranks));
    finish_layer(r.line());
    if (s.layers.size() == data_.model.moe_layers.size())
      r.fail("", "more 'layer' lines than the model's " + std::to_string(data_.model.moe_layers.size()) +
                     " MoE layers");
    r.expect({"layer", "dispatch_s", "combine_s", "dispatch_bytes", "combine_bytes"});
    ExportedLayer& l = s.layers.emplace_back();
    l.layer = static_cast<int>(r.integer("layer", 0, data_.model.layers - 1));
    const int wanted = data_.model.moe_layers[s.layers.size() - 1];
    if (l.layer != wanted)
      r.fail("layer", std::to_string(l.layer) + "; expected MoE layer " + std::to_string(wanted));
    l.dispatch_s = r.seconds("dispatch_s");
    l.combine_s = r.seconds("combine_s");
    const auto pairs = static_cast<std::size_t>(data_.ranks) * data_.ranks;
    l.dispatch_bytes = r.reals("dispatch_bytes");
    expect_export_size(r, "dispatch_bytes", l.dispatch_bytes.size(), pairs);
    l.combine_bytes = r.reals("combine_bytes");
    expect_export_size(r, "combine_bytes", l.combine_bytes.size(), pairs);
    layer_line_ = r.line();
  }

  void read_experts(const ExportRecord& r) {
    ExportedLayer& l = step().layers.back();
    if (static_cast<int>(l.ranks.size()) == data_.ranks)
      r.fail("", "more 'experts' lines than the run's " + std::to_string(data_.ranks) + " ranks");
    r.expect({"ids", "tokens", "attention_s", "experts_s"});
    ExportedExperts& e = l.ranks.emplace_back();
    e.ids = r.integers<int>("ids", 0, data_.model.routed_experts - 1);
    e.tokens = r.integers<int>("tokens", 0, kMaxExportCount);
    expect_export_size(r, "tokens", e.tokens.size(), e.ids.size());
    e.attention_s = r.seconds("attention_s");
    e.experts_s = r.seconds("experts_s");
  }

  // A layer is complete with one 'experts' line per rank; a step with one 'layer' per MoE layer.
  void finish_layer(int line) {
    ExportedStep& s = step();
    if (s.layers.empty()) return;
    const ExportedLayer& l = s.layers.back();
    if (static_cast<int>(l.ranks.size()) != data_.ranks)
      throw InputError(path_ + ":" + std::to_string(layer_line_) + ": layer " + std::to_string(l.layer) +
                           ": " + std::to_string(l.ranks.size()) + " 'experts' lines before line " +
                           std::to_string(line) + "; expected " + std::to_string(data_.ranks),
                       "experts");
  }
  void finish_step(int line) {
    if (data_.steps.empty()) return;
    finish_layer(line);
    const ExportedStep& s = step();
    if (s.layers.size() != data_.model.moe_layers.size())
      throw InputError(path_ + ":" + std::to_string(step_line_) + ": step " + std::to_string(s.index) + ": " +
                           std::to_string(s.layers.size()) + " 'layer' lines before line " +
                           std::to_string(line) + "; expected " +
                           std::to_string(data_.model.moe_layers.size()),
                       "layer");
  }

  const std::string& path_;
  StepExport data_;
  bool header_seen_ = false, seen_run_ = false, seen_model_ = false;
  int last_line_ = 0, step_line_ = 0, layer_line_ = 0;
};

}  // namespace

void write_step_export(std::ostream& out, const StepExport& data) {
  const ExportedModel& m = data.model;
  out << kStepExportFormat << " version=" << kStepExportVersion << "\n"
      << "# The work semsim simulated, per step and rank (calibrate/live/README.md).\n"
      << "run scenario=" << data.scenario << " seed=" << data.seed << " rate=" << export_number(data.rate)
      << " ranks=" << data.ranks << " first_step=" << data.first_step << " steps=" << data.steps.size()
      << "\n"
      << "model name=" << m.name << " hidden=" << m.hidden << " layers=" << m.layers
      << " routed_experts=" << m.routed_experts << " top_k=" << m.top_k << " expert_ffn=" << m.expert_ffn
      << " attention=" << (m.mla ? "mla" : "gqa") << " heads=" << m.heads;
  if (m.mla)
    out << " kv_lora=" << m.kv_lora << " rope=" << m.rope << " nope=" << m.nope << " v_head=" << m.v_head;
  else
    out << " kv_heads=" << m.kv_heads << " head_dim=" << m.head_dim;
  out << " moe_layers=" << export_list(m.moe_layers) << " weights=" << m.weights
      << " dispatch_bytes_per_element=" << export_number(m.dispatch_bytes_per_element)
      << " activation_bytes=" << export_number(m.activation_bytes) << "\n";
  for (const ExportedGemm& g : m.gemms) out << "gemm op=" << g.op << " n=" << g.n << " k=" << g.k << "\n";
  for (const ExportedStep& s : data.steps) {
    out << "step index=" << s.index << " start_s=" << export_number(s.start_s)
        << " end_s=" << export_number(s.end_s);
    for (int p = 0; p < kExportedPhaseCount; ++p)
      out << " " << kExportedPhases[p] << "_s=" << export_number(s.phase_s[p]);
    out << "\n";
    for (const ExportedRank& r : s.ranks)
      out << "rank chunks=" << export_chunks(r.chunks) << " logits=" << r.logits
          << " other_s=" << export_number(r.other_s) << "\n";
    for (const ExportedLayer& l : s.layers) {
      out << "layer layer=" << l.layer << " dispatch_s=" << export_number(l.dispatch_s)
          << " combine_s=" << export_number(l.combine_s)
          << " dispatch_bytes=" << export_list(l.dispatch_bytes)
          << " combine_bytes=" << export_list(l.combine_bytes) << "\n";
      for (const ExportedExperts& e : l.ranks)
        out << "experts ids=" << export_list(e.ids) << " tokens=" << export_list(e.tokens)
            << " attention_s=" << export_number(e.attention_s) << " experts_s=" << export_number(e.experts_s)
            << "\n";
    }
  }
}

StepExport read_step_export(const std::string& path) {
  return ExportReader(path).read();
}

}  // namespace semsim
