#include "workloads/trace_import.hpp"

#include <fmt/format.h>
#include <yaml-cpp/binary.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/json_input.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files of `path` (itself when it is a file) whose names match `pattern`, ordered by the folder
// they are in and then by the number the pattern's first group captures.
std::vector<std::string> input_files(const std::string& path, const std::regex& pattern,
                                     const std::string& what) {
  if (!fs::exists(path)) throw InputError(path + ": no such file or folder");
  if (!fs::is_directory(path)) return {path};
  std::vector<std::tuple<std::string, long long, std::string>> found;
  for (const auto& entry : fs::recursive_directory_iterator(path)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !std::regex_match(name, match, pattern)) continue;
    const std::string number = match[1].str();
    found.emplace_back(entry.path().parent_path().string(), number.empty() ? 0 : std::stoll(number),
                       entry.path().string());
  }
  if (found.empty()) throw InputError(path + ": no " + what + " files in this folder");
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (const auto& f : found) files.push_back(std::get<2>(f));
  return files;
}

TraceHeader header_for(const MoeModel& model, const std::string& source, bool gate_weights) {
  TraceHeader h;
  h.model = model.name;
  h.source = source;
  h.moe_layers = model.moe_layers();
  h.experts = model.routed_experts;
  h.top_k = model.top_k;
  h.gate_weights = gate_weights;
  return h;
}

// MoE-layer index of each model layer (-1 for dense layers).
std::vector<int> moe_index_of_layers(const MoeModel& model) {
  std::vector<int> index(model.layers, -1);
  for (int layer = 0, moe = 0; layer < model.layers; ++layer)
    if (model.is_moe_layer(layer)) index[layer] = moe++;
  return index;
}

int moe_index(const std::vector<int>& index, long long layer, const MoeModel& model,
              const std::string& where) {
  if (layer < 0 || layer >= model.layers)
    throw InputError(
        fmt::format("{}: layer {} outside the {} layers of '{}'", where, layer, model.layers, model.name));
  if (index[layer] < 0)
    throw InputError(
        fmt::format("{}: layer {} routes experts but is a dense layer of '{}'", where, layer, model.name));
  return index[layer];
}

// Checks one routed row's width before it is copied (the builder checks ids and distinctness).
void expect_top_k(std::size_t got, const MoeModel& model, const std::string& where) {
  if (got != static_cast<std::size_t>(model.top_k))
    throw InputError(
        fmt::format("{}: {} experts per token, but '{}' routes top-{}", where, got, model.name, model.top_k));
}

ExpertId expert_value(long long value, const MoeModel& model, const std::string& where) {
  if (value < 0 || value >= model.routed_experts)
    throw InputError(fmt::format("{}: expert id {} outside [0, {}) of '{}'", where, value,
                                 model.routed_experts, model.name));
  return static_cast<ExpertId>(value);
}

std::string missing_layers(const std::vector<bool>& seen, const MoeModel& model) {
  std::string list;
  for (int layer = 0, moe = 0; layer < model.layers; ++layer)
    if (model.is_moe_layer(layer) && !seen[moe++]) list += (list.empty() ? "" : ", ") + std::to_string(layer);
  return list;
}

// What every importer needs besides its file: the model, its layer map and the trace being built.
struct ImportContext {
  const MoeModel& model;
  std::vector<int> layer_index;  // MoE-layer index of each model layer (-1: dense)
  TraceBuilder builder;
  int dropped_tail_tokens = 0;  // Mixtral: tokens some layers did not record
};

// ---- DeepSeek-V2-Lite CSV (moe-beyond): Layer ID,Batch Number,Token,Activated Expert IDs --------

// Splits one CSV record into fields (RFC 4180 quoting: "" inside quotes is a quote).
bool split_csv(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  bool quoted = false, in_quotes = false;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size()) {
      if (in_quotes) return false;
      fields.push_back(std::move(field));
      break;
    }
    const char c = line[i];
    if (in_quotes) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        in_quotes = false;
      }
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      quoted = false;
    } else if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
    } else {
      field += c;
    }
  }
  return true;
}

// "[a, b, c]" -> ids.
void parse_id_list(std::string_view text, const MoeModel& model, const std::string& where,
                   std::vector<ExpertId>& out) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']')
    throw InputError(where + ": expert list must look like [a, b, ...], got '" + std::string(text) + "'");
  text = text.substr(1, text.size() - 2);
  std::size_t count = 0;
  while (true) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    long long value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc()) throw InputError(where + ": bad expert id in the list");
    out.push_back(expert_value(value, model, where));
    ++count;
    text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) break;
    if (text.front() != ',') throw InputError(where + ": expert ids must be separated by ','");
    text.remove_prefix(1);
  }
  expect_top_k(count, model, where);
}

void import_deepseek_file(const std::string& path, ImportContext& context) {
  const MoeModel& model = context.model;
  const std::vector<int>& layer_index = context.layer_index;
  TraceBuilder& builder = context.builder;
  const int layers = model.moe_layers();
  const std::string text = read_text_file(path);
  std::vector<std::string> texts;                       // token texts, from the first MoE layer
  std::vector<std::vector<ExpertId>> by_layer(layers);  // [moe layer] -> [token][k]
  std::vector<std::size_t> filled(layers, 0);           // tokens seen per layer
  std::vector<std::string> fields;
  std::size_t begin = 0;
  int line_number = 0;
  int last_moe = -1;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = fmt::format("{}:{}", path, line_number);
    if (line_number == 1) {
      if (line != "Layer ID,Batch Number,Token,Activated Expert IDs")
        throw InputError(where + ": expected the header 'Layer ID,Batch Number,Token,Activated Expert IDs'");
      continue;
    }
    if (line.empty()) continue;
    if (!split_csv(line, fields) || fields.size() != 4)
      throw InputError(where + ": expected 4 CSV fields (unterminated quote or wrong field count)");
    long long layer = 0;
    const auto [ptr, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), layer);
    if (ec != std::errc() || ptr != fields[0].data() + fields[0].size())
      throw InputError(where + ": bad layer id '" + fields[0] + "'");
    const int moe = moe_index(layer_index, layer, model, where);
    if (moe < last_moe) throw InputError(where + ": rows must be ordered by layer");
    last_moe = moe;
    const std::size_t position = filled[moe]++;
    if (moe == 0)
      texts.push_back(fields[2]);
    else if (position >= texts.size())
      throw InputError(fmt::format("{}: layer {} routes more tokens than the first MoE layer", where, layer));
    else if (texts[position] != fields[2])
      throw InputError(fmt::format("{}: token {} is '{}' here but '{}' in the first MoE layer", where,
                                   position, fields[2], texts[position]));
    parse_id_list(fields[3], model, where, by_layer[moe]);
  }
  if (line_number == 0)
    throw InputError(path + ": empty file; expected the header 'Layer ID,Batch Number,...'");
  std::vector<bool> complete(layers);
  for (int moe = 0; moe < layers; ++moe) complete[moe] = filled[moe] == texts.size() && !texts.empty();
  if (std::find(complete.begin(), complete.end(), false) != complete.end())
    throw InputError(
        fmt::format("{}: layers missing or incomplete (every MoE layer must route all {} tokens): {}", path,
                    texts.size(), missing_layers(complete, model)));

  const std::size_t k = static_cast<std::size_t>(model.top_k);
  std::vector<std::int32_t> ids;
  for (const auto& t : texts) ids.push_back(builder.token_id(t));
  std::vector<ExpertId> experts(texts.size() * layers * k);
  for (std::size_t t = 0; t < texts.size(); ++t)
    for (int moe = 0; moe < layers; ++moe)
      std::copy_n(&by_layer[moe][t * k], k, &experts[(t * layers + moe) * k]);
  TraceRequestView view;
  view.request = {static_cast<int>(texts.size()), 1, true, 0};
  view.token_ids = ids;
  view.experts = experts;
  builder.add(view, path);
}

// ---- Llama-4 per-request JSON (SGLang dump): [prefill, decode...], each {"layer": null | [[e]...]} --

void import_llama4_file(const std::string& path, ImportContext& context) {
  const MoeModel& model = context.model;
  const std::vector<int>& layer_index = context.layer_index;
  TraceBuilder& builder = context.builder;
  const json passes = parse_json_file(read_text_file(path), path);
  if (!passes.is_array() || passes.empty())
    throw InputError(path + ": expected a JSON list of forward passes (prefill first)");
  const int layers = model.moe_layers();
  const std::size_t k = static_cast<std::size_t>(model.top_k);
  std::vector<ExpertId> experts;
  std::size_t prefill_tokens = 0;
  for (std::size_t pass = 0; pass < passes.size(); ++pass) {
    const std::string where = fmt::format("{}: pass {}", path, pass);
    const json& layers_json = passes[pass];
    if (!layers_json.is_object()) throw InputError(where + ": expected an object of layers");
    std::vector<const json*> rows_of(layers, nullptr);
    for (const auto& [key, rows] : layers_json.items()) {
      long long layer = 0;
      const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), layer);
      if (ec != std::errc() || ptr != key.data() + key.size())
        throw InputError(where + ": bad layer key '" + key + "'");
      if (rows.is_null()) {
        if (layer >= 0 && layer < model.layers && layer_index[layer] >= 0)
          throw InputError(fmt::format("{}: MoE layer {} has no routing (null)", where, layer));
        continue;
      }
      rows_of[moe_index(layer_index, layer, model, where)] = &rows;
    }
    std::vector<bool> seen(layers);
    for (int moe = 0; moe < layers; ++moe) seen[moe] = rows_of[moe] != nullptr;
    if (std::find(seen.begin(), seen.end(), false) != seen.end())
      throw InputError(where + ": MoE layers missing: " + missing_layers(seen, model));
    const std::size_t tokens = rows_of[0]->is_array() ? rows_of[0]->size() : 0;
    if (tokens == 0 || (pass > 0 && tokens != 1))
      throw InputError(fmt::format(
          "{}: {} tokens; the prefill pass needs at least one, a decode pass exactly one", where, tokens));
    if (pass == 0) prefill_tokens = tokens;
    const std::size_t first = experts.size();
    experts.resize(first + tokens * layers * k);
    for (int moe = 0; moe < layers; ++moe) {
      const json& rows = *rows_of[moe];
      if (!rows.is_array() || rows.size() != tokens)
        throw InputError(fmt::format("{}: MoE layer {} routes {} tokens, the first MoE layer {}", where, moe,
                                     rows.is_array() ? rows.size() : 0, tokens));
      for (std::size_t t = 0; t < tokens; ++t) {
        const std::string row_where = fmt::format("{}, MoE layer {}, token {}", where, moe, t);
        if (!rows[t].is_array()) throw InputError(row_where + ": expected a list of expert ids");
        expect_top_k(rows[t].size(), model, row_where);
        for (std::size_t j = 0; j < k; ++j)
          experts[first + (t * layers + moe) * k + j] =
              expert_value(json_integer(rows[t][j], row_where, "an expert id"), model, row_where);
      }
    }
  }
  const int decode_steps = static_cast<int>(passes.size() - 1);
  const std::vector<std::int32_t> ids(prefill_tokens + decode_steps, -1);
  TraceRequestView view;
  view.request = {static_cast<int>(prefill_tokens), decode_steps + 1, true, decode_steps};
  view.token_ids = ids;
  view.experts = experts;
  builder.add(view, path);
}

// ---- Mixtral JSONL (speculative-moe): one line per (problem, layer, generated token) --------------

struct DecodeRouting {
  std::map<int, std::pair<std::vector<ExpertId>, std::vector<float>>>
      by_layer_token;  // key: layer * 2^20 + token
  int max_token = -1;
};

// Prompt length estimated from the prompt text of the matching *_outputs.jsonl file (4 bytes per
// token, the usual English BPE ratio); 1 when there is no such file. The trace records no prompt
// routing either way.
std::map<long long, int> estimated_prompt_lengths(const std::string& routing_path) {
  std::map<long long, int> lengths;
  const std::string outputs =
      std::regex_replace(routing_path, std::regex("_routing\\.jsonl"), "_outputs.jsonl");
  if (outputs == routing_path || !fs::exists(outputs)) return lengths;
  LineReader lines(outputs);
  std::string_view line;
  while (lines.next(line)) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", outputs, lines.line_number());
    const json record = parse_json(line, where);
    if (!record.is_object() || !record.contains("problem_id") || !record.contains("prompt") ||
        !record["prompt"].is_string())
      throw InputError(where + ": expected an object with problem_id and prompt");
    const auto bytes = record["prompt"].get<std::string>().size();
    lengths[json_integer(record["problem_id"], where, "problem_id")] =
        std::max<int>(1, static_cast<int>((bytes + 3) / 4));
  }
  return lengths;
}

void import_mixtral_file(const std::string& path, ImportContext& context) {
  const MoeModel& model = context.model;
  const std::vector<int>& layer_index = context.layer_index;
  TraceBuilder& builder = context.builder;
  std::map<long long, DecodeRouting> problems;
  LineReader lines(path);
  std::string_view line;
  const std::size_t k = static_cast<std::size_t>(model.top_k);
  while (lines.next(line)) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, lines.line_number());
    const json record = parse_json(line, where);
    if (!record.is_object()) throw InputError(where + ": expected a JSON object");
    for (const char* key : {"problem_id", "layer", "experts", "gating_probs", "token_idx"})
      if (!record.contains(key)) throw InputError(where + ": missing '" + key + "'");
    const int moe = moe_index(layer_index, json_integer(record["layer"], where, "layer"), model, where);
    const long long token = json_integer(record["token_idx"], where, "token_idx");
    if (token < 0 || token >= (1 << 20)) throw InputError(where + ": token_idx out of range");
    const json& experts = record["experts"];
    const json& probs = record["gating_probs"];
    if (!experts.is_array() || !probs.is_array() || probs.size() != experts.size())
      throw InputError(where + ": experts and gating_probs must be lists of the same length");
    expect_top_k(experts.size(), model, where);
    DecodeRouting& problem = problems[json_integer(record["problem_id"], where, "problem_id")];
    auto& [ids, weights] = problem.by_layer_token[moe * (1 << 20) + static_cast<int>(token)];
    if (!ids.empty())
      throw InputError(fmt::format("{}: token {} of layer {} recorded twice", where, token, moe));
    for (std::size_t j = 0; j < k; ++j) {
      ids.push_back(expert_value(json_integer(experts[j], where, "an expert id"), model, where));
      if (!probs[j].is_number()) throw InputError(where + ": gating_probs must be numbers");
      weights.push_back(probs[j].get<float>());
    }
    problem.max_token = std::max(problem.max_token, static_cast<int>(token));
  }
  if (problems.empty()) throw InputError(path + ": no routing records");
  const std::map<long long, int> prompt_lengths = estimated_prompt_lengths(path);
  const int layers = model.moe_layers();
  for (const auto& [problem_id, problem] : problems) {
    // Keep the tokens every layer recorded: a few layers miss the last 1-3 tokens (the dump stops
    // mid-step); a token missing in the middle is an error.
    int common = problem.max_token + 1;
    for (int moe = 0; moe < layers; ++moe) {
      int count = 0;
      while (problem.by_layer_token.count(moe * (1 << 20) + count)) ++count;
      common = std::min(common, count);
    }
    const std::string where = fmt::format("{}: problem {}", path, problem_id);
    const std::size_t recorded = problem.by_layer_token.size();
    if (recorded - static_cast<std::size_t>(common) * layers > static_cast<std::size_t>(3 * layers))
      throw InputError(where +
                       ": tokens missing in the middle of a layer (only the last few may be missing)");
    if (common == 0) throw InputError(where + ": no token is recorded in every MoE layer");
    context.dropped_tail_tokens += problem.max_token + 1 - common;
    std::vector<ExpertId> experts(static_cast<std::size_t>(common) * layers * k);
    std::vector<float> weights(experts.size());
    for (int t = 0; t < common; ++t)
      for (int moe = 0; moe < layers; ++moe) {
        const auto& [ids, probs] = problem.by_layer_token.at(moe * (1 << 20) + t);
        std::copy(ids.begin(), ids.end(), &experts[(static_cast<std::size_t>(t) * layers + moe) * k]);
        std::copy(probs.begin(), probs.end(), &weights[(static_cast<std::size_t>(t) * layers + moe) * k]);
      }
    const auto prompt = prompt_lengths.find(problem_id);
    const std::vector<std::int32_t> ids(common, -1);
    TraceRequestView view;
    view.request = {prompt == prompt_lengths.end() ? 1 : prompt->second, common + 1, false, common};
    view.token_ids = ids;
    view.experts = experts;
    view.weights = weights;
    builder.add(view, where);
  }
}

// ---- SGLang /generate responses with return_routed_experts ---------------------------------------

std::vector<std::int32_t> sglang_token_ids(const json& record, const char* key, std::size_t expected,
                                           TraceBuilder& builder, const std::string& where) {
  if (!record.contains(key)) return std::vector<std::int32_t>(expected, -1);
  const json& ids = record[key];
  if (!ids.is_array() || ids.size() < expected)
    throw InputError(fmt::format("{}: '{}' must list at least {} token ids", where, key, expected));
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < expected; ++i)
    out.push_back(builder.token_id(std::to_string(json_integer(ids[i], where, "a token id"))));
  return out;
}

void import_sglang_file(const std::string& path, ImportContext& context) {
  const MoeModel& model = context.model;
  const std::vector<int>& layer_index = context.layer_index;
  TraceBuilder& builder = context.builder;
  LineReader lines(path);
  std::string_view line;
  const std::size_t k = static_cast<std::size_t>(model.top_k);
  const int layers = model.moe_layers();
  while (lines.next(line)) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, lines.line_number());
    const json record = parse_json(line, where);
    if (!record.is_object() || !record.contains("meta_info") || !record["meta_info"].is_object())
      throw InputError(where + ": expected a /generate response object with meta_info");
    const json& meta = record["meta_info"];
    for (const char* key : {"routed_experts", "prompt_tokens", "completion_tokens"})
      if (!meta.contains(key)) throw InputError(where + ": meta_info lacks '" + key + "'");
    if (!meta["routed_experts"].is_string())
      throw InputError(where + ": meta_info.routed_experts must be a base64 string");
    const long long prompt = json_integer(meta["prompt_tokens"], where, "prompt_tokens");
    const long long completion = json_integer(meta["completion_tokens"], where, "completion_tokens");
    if (prompt < 1 || completion < 1 || prompt + completion > (1 << 24))
      throw InputError(where + ": prompt_tokens and completion_tokens must be positive");
    const std::vector<unsigned char> bytes = YAML::DecodeBase64(meta["routed_experts"].get<std::string>());
    if (bytes.empty() && !meta["routed_experts"].get<std::string>().empty())
      throw InputError(where + ": meta_info.routed_experts is not valid base64");
    // Rows cover positions [0, prompt + completion - 1): the last generated token is never fed back.
    const std::size_t rows = static_cast<std::size_t>(prompt + completion - 1);
    const std::size_t values = bytes.size() / 4;
    std::size_t row_layers = 0;
    if (bytes.size() % 4 == 0 && values == rows * model.layers * k)
      row_layers = static_cast<std::size_t>(model.layers);
    else if (bytes.size() % 4 == 0 && values == rows * layers * k)
      row_layers = static_cast<std::size_t>(layers);
    else
      throw InputError(
          fmt::format("{}: routed_experts holds {} bytes; {} tokens x {} layers (or {} MoE layers) x top-{} "
                      "int32 expected",
                      where, bytes.size(), rows, model.layers, layers, k));
    std::vector<ExpertId> experts(rows * layers * k);
    for (std::size_t t = 0; t < rows; ++t)
      for (std::size_t row_layer = 0, moe = 0; row_layer < row_layers; ++row_layer) {
        if (row_layers == static_cast<std::size_t>(model.layers) && layer_index[row_layer] < 0) continue;
        for (std::size_t j = 0; j < k; ++j) {
          std::int32_t value;
          std::memcpy(&value, &bytes[((t * row_layers + row_layer) * k + j) * 4], 4);
          experts[(t * layers + moe) * k + j] =
              expert_value(value, model, fmt::format("{}: token {}, MoE layer {}", where, t, moe));
        }
        ++moe;
      }
    std::vector<std::int32_t> ids =
        sglang_token_ids(record, "input_ids", static_cast<std::size_t>(prompt), builder, where);
    const std::vector<std::int32_t> output_ids =
        sglang_token_ids(record, "output_ids", static_cast<std::size_t>(completion - 1), builder, where);
    ids.insert(ids.end(), output_ids.begin(), output_ids.end());
    TraceRequestView view;
    view.request = {static_cast<int>(prompt), static_cast<int>(completion), true,
                    static_cast<int>(completion - 1)};
    view.token_ids = ids;
    view.experts = experts;
    builder.add(view, where);
  }
}

}  // namespace

const std::vector<std::string>& trace_import_format_names() {
  static const std::vector<std::string> names{"deepseek-csv", "llama4-json", "mixtral-jsonl", "sglang"};
  return names;
}

TraceImportFormat trace_import_format_named(const std::string& name) {
  const auto& names = trace_import_format_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    throw InputError("unknown trace format '" + name + "'" + did_you_mean(name, names) +
                     "; formats: deepseek-csv, llama4-json, mixtral-jsonl, sglang");
  return static_cast<TraceImportFormat>(it - names.begin());
}

RoutingTrace import_trace(TraceImportFormat format, const std::string& path, const MoeModel& model,
                          const ProgressCallback& progress) {
  struct Importer {
    const char* file_pattern;  // its first group, when not empty, orders files numerically
    const char* files;         // for "no ... files in this folder"
    void (*import_file)(const std::string&, ImportContext&);
  };
  static const Importer importers[] = {
      {R"(prompt_(\d+)_data\.csv(\.gz)?)", "prompt_N_data.csv", import_deepseek_file},
      {R"((\d+)\.json(\.gz)?)", "N.json", import_llama4_file},
      {R"(()[^/]*_routing\.jsonl(\.gz)?)", "*_routing.jsonl", import_mixtral_file},
      {R"(()[^/]*\.jsonl(\.gz)?)", "*.jsonl", import_sglang_file},
  };
  const Importer& importer = importers[static_cast<std::size_t>(format)];
  const std::string& format_name = trace_import_format_names()[static_cast<std::size_t>(format)];
  ImportContext context{
      model, moe_index_of_layers(model),
      TraceBuilder(header_for(model, format_name + ": " + fs::path(path).filename().string(),
                              format == TraceImportFormat::kMixtralJsonl))};
  const std::vector<std::string> files = input_files(path, std::regex(importer.file_pattern), importer.files);
  ProgressCounter counter(progress, "file", static_cast<long long>(files.size()));
  for (const std::string& file : files) {
    importer.import_file(file, context);
    counter.finished_one();
  }
  if (format == TraceImportFormat::kMixtralJsonl)
    context.builder.set_source(
        fmt::format("{}; decode routing only; prompt lengths estimated at 4 bytes per token from "
                    "*_outputs.jsonl; {} trailing "
                    "tokens dropped that some layers did not record",
                    context.builder.header().source, context.dropped_tail_tokens));
  return std::move(context.builder).build();
}

}  // namespace semsim
