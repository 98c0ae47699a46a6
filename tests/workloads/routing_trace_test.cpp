#include <gtest/gtest.h>
#include <yaml-cpp/binary.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "models/presets.hpp"
#include "tests/unit_test_helpers.hpp"
#include "workloads/routing_trace.hpp"
#include "workloads/trace_import.hpp"

namespace semsim {
namespace {

using test::error_of;
using test::TempFolder;

namespace fs = std::filesystem;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void write_gz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

// Two requests over 2 MoE layers, 4 experts, top-2, with gate weights: the second has decode tokens.
RoutingTrace small_trace() {
  TraceBuilder b({"tiny", "unit test", 2, 4, 2, true});
  const std::int32_t hello = b.token_id("Hello"), space = b.token_id("Ġ 100%");
  const std::vector<std::int32_t> ids1{hello, space};
  const std::vector<ExpertId> e1{0, 1, 2, 3, 3, 2, 1, 0};
  const std::vector<float> w1{0.5f, 0.5f, 0.7f, 0.3f, 0.6f, 0.4f, 0.9f, 0.1f};
  b.add({{2, 1, true, 0}, ids1, e1, w1}, "r0");
  const std::vector<std::int32_t> ids2{space, -1, hello};
  const std::vector<ExpertId> e2{1, 3, 0, 2, 2, 1, 3, 0, 0, 1, 1, 2};
  const std::vector<float> w2(12, 0.5f);
  b.add({{1, 4, true, 2}, ids2, e2, w2}, "r1");
  return std::move(b).build();
}

void expect_same(const RoutingTrace& a, const RoutingTrace& b) {
  ASSERT_EQ(a.requests(), b.requests());
  EXPECT_EQ(a.header().model, b.header().model);
  EXPECT_EQ(a.header().source, b.header().source);
  EXPECT_EQ(a.header().gate_weights, b.header().gate_weights);
  EXPECT_EQ(a.vocabulary(), b.vocabulary());
  for (std::size_t r = 0; r < a.requests(); ++r) {
    const auto va = a.view(r), vb = b.view(r);
    EXPECT_EQ(va.request.input_tokens, vb.request.input_tokens);
    EXPECT_EQ(va.request.output_tokens, vb.request.output_tokens);
    EXPECT_EQ(va.request.decode_routed, vb.request.decode_routed);
    EXPECT_TRUE(
        std::equal(va.token_ids.begin(), va.token_ids.end(), vb.token_ids.begin(), vb.token_ids.end()));
    EXPECT_TRUE(std::equal(va.experts.begin(), va.experts.end(), vb.experts.begin(), vb.experts.end()));
    EXPECT_TRUE(std::equal(va.weights.begin(), va.weights.end(), vb.weights.begin(), vb.weights.end()));
  }
}

TEST(RoutingTrace, TextAndBinaryFormsRoundTrip) {
  TempFolder dir;
  const RoutingTrace trace = small_trace();
  EXPECT_EQ(trace.tokens(), 5u);
  EXPECT_EQ(trace.first_token(1), 2);
  EXPECT_EQ(trace.experts_of(4, 1)[1], 2);  // request 1, decode token 1, layer 1
  for (const char* name : {"t.semtrace", "t.semtrace.txt", "t.semtrace.txt.gz"}) {
    write_trace(trace, dir / name);
    expect_same(trace, load_trace(dir / name));
  }
  // Streaming sees the requests in order with their vocabulary.
  std::vector<int> routed;
  read_trace(
      dir / "t.semtrace.txt", [](const TraceHeader& h) { EXPECT_EQ(h.top_k, 2); },
      [&](const TraceRequestView& v, const std::vector<std::string>& vocabulary) {
        routed.push_back(v.request.routed_tokens());
        EXPECT_EQ(vocabulary[1], "Ġ 100%");
      });
  EXPECT_EQ(routed, (std::vector<int>{2, 3}));
  EXPECT_THROW(write_trace(trace, dir / "t.csv"), InputError);
}

// A trace's content hash names what it records, in any form, and changes with any routed expert.
TEST(RoutingTrace, ContentHashIsTheSameInEveryFormAndChangesWithTheRouting) {
  TempFolder dir;
  const RoutingTrace trace = small_trace();
  const std::string hash = trace_content_hash(trace);
  EXPECT_EQ(hash.size(), 16u);
  for (const char* name : {"t.semtrace", "t.semtrace.txt.gz"}) {
    write_trace(trace, dir / name);
    EXPECT_EQ(trace_content_hash(load_trace(dir / name)), hash) << name;
  }
  TraceBuilder other({"tiny", "another source text", 2, 4, 2, true});
  for (const std::string& text : trace.vocabulary()) other.token_id(text);
  for (std::size_t r = 0; r < trace.requests(); ++r) {
    TraceRequestView v = trace.view(r);
    std::vector<ExpertId> experts(v.experts.begin(), v.experts.end());
    if (r == 1) std::swap(experts[0], experts[1]);  // one token's experts in another order
    v.experts = experts;
    other.add(v, "r");
  }
  EXPECT_NE(trace_content_hash(std::move(other).build()), hash);
}

TEST(RoutingTrace, BadTextTracesNameFileAndLine) {
  TempFolder dir;
  write_trace(small_trace(), dir / "good.semtrace.txt");
  std::ifstream in(dir / "good.semtrace.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto variant = [&](std::size_t drop_from, const std::string& replace_line = "", std::size_t at = 0) {
    std::string text;
    for (std::size_t i = 0; i < std::min(drop_from, lines.size()); ++i)
      text += (i == at && !replace_line.empty() ? replace_line : lines[i]) + "\n";
    write(dir / "bad.semtrace.txt", text);
    return error_of([&] { load_trace(dir / "bad.semtrace.txt"); });
  };
  // lines: 0 magic, 1 model, 2 source, 3 layers, 4 experts, 5 k, 6 weights, 7-8 vocabulary, 9 r, 10-11 t, 12
  // r ...
  EXPECT_NE(variant(lines.size() - 1).find("truncated"), std::string::npos);
  EXPECT_NE(variant(lines.size(), "t 0 0:0.5,9:0.5 3:0.5,2:0.5", 10)
                .find("bad.semtrace.txt:10: request 0: token 0, MoE layer 0: expert id 9 outside [0, 4)"),
            std::string::npos);
  EXPECT_NE(variant(lines.size(), "t 0 0:0.5,1:0.5", 10).find(":11: token line has 1 layer groups"),
            std::string::npos);
  EXPECT_NE(variant(lines.size(), "t 0 1:0.5,1:0.5 3:0.5,2:0.5", 10).find("expert 1 chosen twice"),
            std::string::npos);
  EXPECT_NE(variant(lines.size(), "semsim-routing-trace 7", 0).find("unsupported trace format version 7"),
            std::string::npos);
  EXPECT_NE(variant(0).find("empty file"), std::string::npos);
}

TEST(RoutingTrace, TruncatedOrCorruptBinaryAndGzipFailCleanly) {
  TempFolder dir;
  write_trace(small_trace(), dir / "t.semtrace");
  std::ifstream in(dir / "t.semtrace", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  for (std::size_t cut : {8ul, 79ul, 100ul, bytes.size() - 1}) {
    write(dir / "cut.semtrace", bytes.substr(0, cut));
    EXPECT_THROW(load_trace(dir / "cut.semtrace"), InputError) << cut;
  }
  std::string corrupt = bytes;
  corrupt[80 + 16 * 2 + 4 * 5 + 4] = 7;  // first expert id -> 7, outside [0, 4)
  write(dir / "corrupt.semtrace", corrupt);
  EXPECT_NE(
      error_of([&] { load_trace(dir / "corrupt.semtrace"); }).find("request record 0: token 0, MoE layer 0"),
      std::string::npos);

  write_trace(small_trace(), dir / "t.semtrace.txt.gz");
  std::ifstream gz_in(dir / "t.semtrace.txt.gz", std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(gz_in)), {});
  write(dir / "cut.semtrace.txt.gz", gz.substr(0, gz.size() / 2));
  EXPECT_NE(error_of([&] { load_trace(dir / "cut.semtrace.txt.gz"); }).find("corrupt or truncated"),
            std::string::npos);
}

// A header whose section sizes wrap around 64 bits can describe a small file while its spans reach
// far past it (this one made the reader walk off its mapping and crash): refused before any span.
TEST(RoutingTrace, BinaryHeaderWhoseSizesOverflowIsRefused) {
  struct Header {
    char magic[8] = {'S', 'E', 'M', 'T', 'R', 'A', 'C', 'E'};
    std::uint32_t version = 1, flags = 0, moe_layers = 270, experts = 32767, top_k = 31433, reserved = 0;
    std::uint64_t requests = 1 << 20, tokens = 1086775971855, vocabulary = 0, vocabulary_bytes = 0,
                  model_bytes = 0, source_bytes = 0;
  } h;
  static_assert(sizeof(Header) == 80);
  // The size its sections add up to when every product and sum wraps: 2,949,216 bytes.
  auto align8 = [](std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; };
  const std::uint64_t experts_at = align8(align8(80 + h.requests * 16) + h.tokens * 4);
  const std::uint64_t wrapped_end = align8(experts_at + h.tokens * h.moe_layers * h.top_k * 2) + 8;
  ASSERT_EQ(wrapped_end, 2949216u);
  std::string bytes(wrapped_end, '\0');
  std::memcpy(bytes.data(), &h, sizeof h);
  TempFolder dir;
  write(dir / "overflow.semtrace", bytes);
  EXPECT_EQ(error_of([&] { load_trace(dir / "overflow.semtrace"); }),
            dir / "overflow.semtrace" + ": corrupt binary trace header (its section sizes overflow 64 bits)");
}

// Counts that pass a per-field parse but not together: an input and decode count whose sum
// overflows, a layer count that multiplies into gigabytes per token, and a request promising 2^24
// token lines that are not there (each used to allocate before noticing).
TEST(RoutingTrace, TextCountsAreBoundedBeforeAnythingIsAllocated) {
  TempFolder dir;
  const std::string header = "semsim-routing-trace 1\nmodel tiny\nmoe_layers 2\nexperts 4\ntop_k 2\n";
  write(dir / "sum.semtrace.txt", header + "r 2147483647 1 1 2147483647\nt - 0,1 2,3\n");
  EXPECT_EQ(
      error_of([&] { load_trace(dir / "sum.semtrace.txt"); }),
      dir / "sum.semtrace.txt" + ":6: impossible request line (a length or count outside [0, 16777216])");
  write(
      dir / "layers.semtrace.txt",
      "semsim-routing-trace 1\nmodel tiny\nmoe_layers 2000000000\nexperts 4\ntop_k 2\nr 1 2 1 0\nt - 0,1\n");
  EXPECT_NE(
      error_of([&] { load_trace(dir / "layers.semtrace.txt"); })
          .find("impossible header: 2000000000 MoE layers, 4 experts, top-2 (at most 1024 layers and 32767 "
                "experts)"),
      std::string::npos);
  write(dir / "promise.semtrace.txt", header + "r 16777216 2 1 0\nt - 0,1 2,3\n");
  EXPECT_EQ(
      error_of([&] { load_trace(dir / "promise.semtrace.txt"); }),
      dir / "promise.semtrace.txt" + ":6: truncated: the request lacks 16777215 of its 16777216 token lines");
}

// ---- importers -------------------------------------------------------------------------------------

std::string deepseek_csv(int tokens, int bad_layer = -1, const std::string& bad_list = "") {
  const MoeModel m = model_preset("deepseek-v2-lite");
  std::string text = "Layer ID,Batch Number,Token,Activated Expert IDs\n";
  const std::vector<std::string> texts{"<s>", "\"", "a,b", "Ġto"};
  for (int layer = 1; layer <= m.moe_layers(); ++layer)
    for (int t = 0; t < tokens; ++t) {
      std::string list = "[";
      for (int j = 0; j < 6; ++j) list += (j ? ", " : "") + std::to_string((layer + t + 10 * j) % 64);
      list += "]";
      if (layer == bad_layer) list = bad_list;
      std::string quoted = "\"";
      for (char c : texts[t % 4]) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      text += std::to_string(layer) + ",0," + quoted + "\",\"" + list + "\"\n";
    }
  return text;
}

TEST(TraceImport, DeepseekCsvFolderInPromptOrder) {
  TempFolder dir;
  fs::create_directories(dir / "ds");
  write_gz(dir / "ds/prompt_10_data.csv.gz", deepseek_csv(2));
  write_gz(dir / "ds/prompt_9_data.csv.gz", deepseek_csv(4));
  const MoeModel m = model_preset("deepseek-v2-lite");
  const RoutingTrace trace = import_trace(TraceImportFormat::kDeepseekCsv, dir / "ds", m);
  ASSERT_EQ(trace.requests(), 2u);
  EXPECT_EQ(trace.request(0).input_tokens, 4);  // prompt 9 before prompt 10
  EXPECT_EQ(trace.request(1).input_tokens, 2);
  EXPECT_EQ(trace.vocabulary(), (std::vector<std::string>{"<s>", "\"", "a,b", "Ġto"}));
  EXPECT_EQ(trace.token_ids()[4], 0);           // request 1 token 0 is "<s>" again
  const ExpertId* e = trace.experts_of(1, 25);  // token 1 at MoE layer 25 (model layer 26)
  EXPECT_EQ(e[0], (26 + 1) % 64);
  EXPECT_EQ(e[5], (26 + 1 + 50) % 64);
}

TEST(TraceImport, DeepseekCsvViolationsAreNamed) {
  TempFolder dir;
  const MoeModel m = model_preset("deepseek-v2-lite");
  auto import_text = [&](const std::string& text) {
    write(dir / "prompt_1_data.csv", text);
    return error_of([&] { import_trace(TraceImportFormat::kDeepseekCsv, dir / "prompt_1_data.csv", m); });
  };
  EXPECT_NE(import_text(deepseek_csv(2, 3, "[1, 2, 3, 4, 5, 64]")).find("expert id 64 outside [0, 64)"),
            std::string::npos);
  EXPECT_NE(import_text(deepseek_csv(2, 3, "[1, 2, 3, 4, 5]"))
                .find("5 experts per token, but 'deepseek-v2-lite' routes top-6"),
            std::string::npos);
  std::string text = deepseek_csv(2);
  text = text.substr(0, text.rfind("26,0,"));  // drop layer 26's last token
  EXPECT_NE(import_text(text).find("incomplete"), std::string::npos);
  EXPECT_NE(import_text("Layer ID,Batch Number,Token,Activated Expert IDs\n0,0,x,\"[1, 2, 3, 4, 5, 6]\"\n")
                .find("layer 0 routes experts but is a dense layer"),
            std::string::npos);
  EXPECT_NE(import_text("Layer ID,Batch Number,Token,Activated Expert IDs\n1,0,\"x,\"[1\n")
                .find(":2: expected 4 CSV"),
            std::string::npos);
  EXPECT_NE(import_text("").find("expected the header"), std::string::npos);
}

TEST(TraceImport, Llama4JsonPrefillAndDecode) {
  TempFolder dir;
  fs::create_directories(dir / "l4/subject");
  const MoeModel m = model_preset("llama-4-maverick");
  auto pass = [&](int tokens, int dense_value) {
    nlohmann::json layers = nlohmann::json::object();
    for (int layer = 0; layer < m.layers; ++layer) {
      if (!m.is_moe_layer(layer)) {
        layers[std::to_string(layer)] =
            dense_value < 0 ? nlohmann::json() : nlohmann::json::array({{dense_value}});
        continue;
      }
      nlohmann::json rows = nlohmann::json::array();
      for (int t = 0; t < tokens; ++t) rows.push_back({(layer * 7 + t) % 128});
      layers[std::to_string(layer)] = rows;
    }
    return layers;
  };
  write_gz(dir / "l4/subject/0.json.gz",
           nlohmann::json::array({pass(3, -1), pass(1, -1), pass(1, -1)}).dump());
  const RoutingTrace trace = import_trace(TraceImportFormat::kLlama4Json, dir / "l4", m);
  ASSERT_EQ(trace.requests(), 1u);
  EXPECT_EQ(trace.request(0).input_tokens, 3);
  EXPECT_EQ(trace.request(0).decode_routed, 2);
  EXPECT_EQ(trace.request(0).output_tokens, 3);
  EXPECT_EQ(trace.token_ids()[0], -1);
  EXPECT_EQ(trace.experts_of(2, 1)[0], (3 * 7 + 2) % 128);  // token 2 at MoE layer 1 (model layer 3)

  write_gz(dir / "l4/subject/0.json.gz", nlohmann::json::array({pass(3, 5)}).dump());
  EXPECT_NE(
      error_of([&] { import_trace(TraceImportFormat::kLlama4Json, dir / "l4", m); }).find("dense layer"),
      std::string::npos);
  write_gz(dir / "l4/subject/0.json.gz", "[{\"1\": [[3]]");
  EXPECT_NE(
      error_of([&] { import_trace(TraceImportFormat::kLlama4Json, dir / "l4", m); }).find("not valid JSON"),
      std::string::npos);
}

TEST(TraceImport, MixtralJsonlDropsUnrecordedTailTokens) {
  TempFolder dir;
  fs::create_directories(dir / "mx");
  const MoeModel m = model_preset("mixtral-8x7b");
  std::string routing;
  for (int layer = 0; layer < 32; ++layer)
    for (int t = 0; t < (layer == 5 ? 3 : 4); ++t)
      routing += nlohmann::json{{"dataset", "gsm8k"},
                                {"problem_id", 0},
                                {"layer", layer},
                                {"experts", {t % 8, (t + 1) % 8}},
                                {"gating_probs", {0.75, 0.25}},
                                {"token_idx", t}}
                     .dump() +
                 "\n";
  write_gz(dir / "mx/gsm8k_2_routing.jsonl.gz", routing);
  write_gz(dir / "mx/gsm8k_2_outputs.jsonl.gz", "{\"problem_id\": 0, \"prompt\": \"twelve bytes\"}\n");
  const RoutingTrace trace = import_trace(TraceImportFormat::kMixtralJsonl, dir / "mx", m);
  ASSERT_EQ(trace.requests(), 1u);
  EXPECT_EQ(trace.request(0).decode_routed, 3);  // token 3 is missing in layer 5
  EXPECT_FALSE(trace.request(0).prefill_routed);
  EXPECT_EQ(trace.request(0).input_tokens, 3);  // 12 bytes / 4
  EXPECT_FLOAT_EQ(trace.all_weights()[0], 0.75f);
  EXPECT_NE(trace.header().source.find("1 trailing tokens dropped"), std::string::npos);
}

TEST(TraceImport, SglangRoutedExpertsBase64) {
  TempFolder dir;
  const MoeModel m = model_preset("mixtral-8x7b");  // 32 layers, all MoE, top-2 of 8
  const int prompt = 3, completion = 2, rows = prompt + completion - 1;
  std::vector<std::int32_t> values;
  for (int t = 0; t < rows; ++t)
    for (int layer = 0; layer < 32; ++layer)
      values.insert(values.end(), {t % 8, (t + layer + 1) % 8 == t % 8 ? 7 : (t + layer + 1) % 8});
  auto encode = [](const std::vector<std::int32_t>& v) {
    return YAML::EncodeBase64(reinterpret_cast<const unsigned char*>(v.data()), v.size() * 4);
  };
  nlohmann::json response{
      {"text", "ok"},
      {"input_ids", {11, 12, 11}},
      {"meta_info",
       {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"routed_experts", encode(values)}}}};
  write(dir / "responses.jsonl", response.dump() + "\n");
  const RoutingTrace trace = import_trace(TraceImportFormat::kSglang, dir / "responses.jsonl", m);
  ASSERT_EQ(trace.requests(), 1u);
  EXPECT_EQ(trace.request(0).input_tokens, 3);
  EXPECT_EQ(trace.request(0).decode_routed, 1);
  EXPECT_EQ(trace.token_ids()[0], trace.token_ids()[2]);
  EXPECT_EQ(trace.token_ids()[3], -1);  // no output_ids given
  EXPECT_EQ(trace.experts_of(3, 4)[1], (3 + 4 + 1) % 8);

  values.pop_back();
  response["meta_info"]["routed_experts"] = encode(values);
  write(dir / "responses.jsonl", response.dump() + "\n");
  EXPECT_NE(error_of([&] {
              import_trace(TraceImportFormat::kSglang, dir / "responses.jsonl", m);
            }).find("responses.jsonl:1: routed_experts holds"),
            std::string::npos);
}

}  // namespace
}  // namespace semsim
