// Per-operator FLOP and byte counts, checked against numbers worked out by hand (the arithmetic is in
// the comments; the expected values are literals, not re-evaluations of the formulas under test).
#include "models/operator_costs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace semsim {
namespace {

const Precision kBf16{};  // weights, KV and activations all 2 B

// HF config.json of deepseek-ai/DeepSeek-V2-Lite.
MoeModel deepseek_v2_lite() {
  MoeModel m;
  m.name = "deepseek-v2-lite";
  m.layers = 27;
  m.hidden = 2048;
  m.vocabulary = 102400;
  m.first_dense_layers = 1;
  m.moe_layer_interval = 1;
  m.dense_ffn = 10944;
  m.routed_experts = 64;
  m.shared_experts = 2;
  m.top_k = 6;
  m.expert_ffn = 1408;
  m.shared_expert_ffn = 1408;
  m.tied_embeddings = false;
  m.attention.kind = AttentionKind::kMla;
  m.attention.heads = 16;
  m.attention.kv_heads = 1;
  m.attention.q_lora_rank = 0;
  m.attention.kv_lora_rank = 512;
  m.attention.qk_nope_head_dim = 128;
  m.attention.qk_rope_head_dim = 64;
  m.attention.v_head_dim = 128;
  return m;
}

// HF config.json of deepseek-ai/DeepSeek-V3 (q_lora_rank > 0).
MoeModel deepseek_v3() {
  MoeModel m = deepseek_v2_lite();
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.vocabulary = 129280;
  m.first_dense_layers = 3;
  m.dense_ffn = 18432;
  m.routed_experts = 256;
  m.shared_experts = 1;
  m.top_k = 8;
  m.expert_ffn = 2048;
  m.shared_expert_ffn = 2048;
  m.attention.heads = 128;
  m.attention.q_lora_rank = 1536;
  return m;
}

// HF config.json of Qwen/Qwen3-30B-A3B.
MoeModel qwen3_30b_a3b() {
  MoeModel m;
  m.name = "qwen3-30b-a3b";
  m.layers = 48;
  m.hidden = 2048;
  m.vocabulary = 151936;
  m.routed_experts = 128;
  m.top_k = 8;
  m.expert_ffn = 768;
  m.shared_expert_ffn = 768;
  m.tied_embeddings = false;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.heads = 32;
  m.attention.kv_heads = 4;
  m.attention.head_dim = 128;
  return m;
}

// GPT-OSS-120B-like: GQA 64/8, head 64, sliding window 128 on every other layer (0, 2, 4, ...).
MoeModel gpt_oss_like() {
  MoeModel m;
  m.name = "gpt-oss-like";
  m.layers = 36;
  m.hidden = 2880;
  m.vocabulary = 201088;
  m.routed_experts = 128;
  m.top_k = 4;
  m.expert_ffn = 2880;
  m.shared_expert_ffn = 2880;
  m.attention.kind = AttentionKind::kGqa;
  m.attention.heads = 64;
  m.attention.kv_heads = 8;
  m.attention.head_dim = 64;
  m.attention.sliding_window = 128;
  m.attention.sliding_window_every = 2;
  return m;
}

std::vector<SequenceChunk> decode_batch_100_to_400() {
  return {{1, 100}, {1, 200}, {1, 300}, {1, 400}};
}

TEST(OperatorCosts, AttentionParamsPerLayer) {
  // DeepSeek-V2-Lite (MLA, q_lora 0):
  //   q    = 2048*16*(128+64)   = 6,291,456
  //   kv_a = 2048*(512+64)      = 1,179,648
  //   kv_b = 512*16*(128+128)   = 2,097,152
  //   o    = 16*128*2048        = 4,194,304
  //   sum                       = 13,762,560
  EXPECT_EQ(attention_params_per_layer(deepseek_v2_lite()), 13'762'560);
  // Qwen3-30B-A3B (GQA 32/4, head 128):
  //   q = 2048*32*128 = 8,388,608; k = v = 2048*4*128 = 1,048,576; o = 32*128*2048 = 8,388,608
  //   sum = 8,388,608 + 2*1,048,576 + 8,388,608 = 18,874,368
  EXPECT_EQ(attention_params_per_layer(qwen3_30b_a3b()), 18'874'368);
  // DeepSeek-V3 (MLA, q_lora 1536):
  //   q    = 7168*1536 + 1536*128*192 = 11,010,048 + 37,748,736 = 48,758,784
  //   kv_a = 7168*576                 = 4,128,768
  //   kv_b = 512*128*256              = 16,777,216
  //   o    = 128*128*7168             = 117,440,512
  //   sum                             = 187,105,280
  EXPECT_EQ(attention_params_per_layer(deepseek_v3()), 187'105'280);
  // GPT-OSS-like: q = o = 2880*64*64 = 11,796,480; k = v = 2880*8*64 = 1,474,560; sum = 26,542,080
  EXPECT_EQ(attention_params_per_layer(gpt_oss_like()), 26'542'080);
}

TEST(OperatorCosts, FfnAndEmbeddingParams) {
  const MoeModel ds = deepseek_v2_lite();
  EXPECT_EQ(expert_params(ds), 8'650'752);         // 3*2048*1408
  EXPECT_EQ(shared_expert_params(ds), 8'650'752);  // 3*2048*1408
  EXPECT_EQ(dense_ffn_params(ds), 67'239'936);     // 3*2048*10944
  EXPECT_EQ(gate_params(ds), 131'072);             // 2048*64
  EXPECT_EQ(embedding_params(ds), 419'430'400);    // 102400*2048*2 (not tied)
  const MoeModel qw = qwen3_30b_a3b();
  EXPECT_EQ(expert_params(qw), 4'718'592);       // 3*2048*768
  EXPECT_EQ(gate_params(qw), 262'144);           // 2048*128
  EXPECT_EQ(embedding_params(qw), 622'329'856);  // 151936*2048*2
  MoeModel tied = qw;
  tied.tied_embeddings = true;
  EXPECT_EQ(embedding_params(tied), 311'164'928);  // 151936*2048
}

TEST(OperatorCosts, PrefillChunkDeepSeekV2Lite) {
  const std::vector<SequenceChunk> batch{{512, 0}};
  const OpCost c = attention_cost(deepseek_v2_lite(), 0, batch, kBf16);
  // projections: 2*512*13,762,560 = 14,092,861,440
  // attended tokens: 1+2+...+512 = 512*513/2 = 131,328
  // per attended token (non-absorbed MLA prefill): 2*16*(192+128) = 10,240 -> 1,344,798,720
  // total = 15,437,660,160
  EXPECT_EQ(c.flops, 15'437'660'160.0);
  // weights 13,762,560*2 = 27,525,120; KV write 512*576*2 = 589,824; no prior KV read;
  // activations 2*512*2048*2 = 4,194,304; total = 32,309,248
  EXPECT_EQ(c.bytes, 32'309'248.0);
}

TEST(OperatorCosts, PrefillChunkQwen3) {
  const std::vector<SequenceChunk> batch{{512, 0}};
  const OpCost c = attention_cost(qwen3_30b_a3b(), 7, batch, kBf16);
  // projections: 2*512*18,874,368 = 19,327,352,832
  // per attended token: 2*32*(128+128) = 16,384; * 131,328 = 2,151,677,952
  // total = 21,479,030,784
  EXPECT_EQ(c.flops, 21'479'030'784.0);
  // weights 18,874,368*2 = 37,748,736; KV write 512*(2*4*128)*2 = 1,048,576; activations 4,194,304
  // total = 42,991,616
  EXPECT_EQ(c.bytes, 42'991'616.0);
}

TEST(OperatorCosts, DecodeBatchDeepSeekV2LiteAbsorbed) {
  const auto batch = decode_batch_100_to_400();
  const OpCost c = attention_cost(deepseek_v2_lite(), 5, batch, kBf16);
  // T = 4; projections 2*4*13,762,560 = 110,100,480
  // attended: 101 + 201 + 301 + 401 = 1,004
  // per attended token (absorbed): 2*16*((512+64) + 512) = 34,816 -> 34,955,264
  // total = 145,055,744
  EXPECT_EQ(c.flops, 145'055'744.0);
  // weights 27,525,120; KV read (100+200+300+400)*576*2 = 1,152,000; KV write 4*576*2 = 4,608;
  // activations 2*4*2048*2 = 32,768; total = 28,714,496
  EXPECT_EQ(c.bytes, 28'714'496.0);
}

TEST(OperatorCosts, DecodeBatchQwen3) {
  const auto batch = decode_batch_100_to_400();
  const OpCost c = attention_cost(qwen3_30b_a3b(), 0, batch, kBf16);
  // projections 2*4*18,874,368 = 150,994,944; attention 16,384*1,004 = 16,449,536; total 167,444,480
  EXPECT_EQ(c.flops, 167'444'480.0);
  // weights 37,748,736; KV read 1000*1024*2 = 2,048,000; KV write 4*1024*2 = 8,192; act 32,768
  // total = 39,837,696
  EXPECT_EQ(c.bytes, 39'837'696.0);
}

TEST(OperatorCosts, ChunkedPrefillWithPriorContext) {
  const std::vector<SequenceChunk> batch{{256, 1024}};
  // attended: sum_{i=1..256} (1024+i) = 256*1024 + 256*257/2 = 262,144 + 32,896 = 295,040
  const OpCost q = attention_cost(qwen3_30b_a3b(), 0, batch, kBf16);
  // projections 2*256*18,874,368 = 9,663,676,416; attention 16,384*295,040 = 4,833,935,360
  // total = 14,497,611,776
  EXPECT_EQ(q.flops, 14'497'611'776.0);
  // weights 37,748,736; KV read 1024*1024*2 = 2,097,152; write 256*1024*2 = 524,288;
  // activations 2*256*2048*2 = 2,097,152; total = 42,467,328
  EXPECT_EQ(q.bytes, 42'467'328.0);

  const OpCost d = attention_cost(deepseek_v2_lite(), 0, batch, kBf16);
  // projections 2*256*13,762,560 = 7,046,430,720; attention 10,240*295,040 = 3,021,209,600;
  // up-projection of the 1024 cached latents by kv_b: 2*1024*512*16*256 = 4,294,967,296
  // total = 14,362,607,616
  EXPECT_EQ(d.flops, 14'362'607'616.0);
  // weights 27,525,120; KV read 1024*576*2 = 1,179,648; write 256*576*2 = 294,912;
  // activations 2,097,152; total = 31,096,832
  EXPECT_EQ(d.bytes, 31'096'832.0);
}

TEST(OperatorCosts, SlidingWindowLayers) {
  const MoeModel m = gpt_oss_like();
  const std::vector<SequenceChunk> prefill{{512, 0}};
  // projections 2*512*26,542,080 = 27,179,089,920; per attended token 2*64*(64+64) = 16,384
  // layer 0 (windowed, W = 128): sum min(i,128) = 128*129/2 + 384*128 = 8,256 + 49,152 = 57,408
  //   attention 57,408*16,384 = 940,572,672; total 28,119,662,592
  const OpCost w = attention_cost(m, 0, prefill, kBf16);
  EXPECT_EQ(w.flops, 28'119'662'592.0);
  // weights 26,542,080*2 = 53,084,160; KV write 512*1024*2 = 1,048,576; act 2*512*2880*2 = 5,898,240
  // total = 60,030,976
  EXPECT_EQ(w.bytes, 60'030'976.0);
  // layer 1 (full): 131,328*16,384 = 2,151,677,952; total 29,330,767,872
  EXPECT_EQ(attention_cost(m, 1, prefill, kBf16).flops, 29'330'767'872.0);
  // layer 2 is windowed again
  EXPECT_EQ(attention_cost(m, 2, prefill, kBf16).flops, 28'119'662'592.0);

  const std::vector<SequenceChunk> decode{{1, 1000}};
  // windowed: attends min(1001,128) = 128 tokens; reads min(1000, 127) = 127 cached tokens
  //   flops 2*26,542,080 + 16,384*128 = 53,084,160 + 2,097,152 = 55,181,312
  //   bytes 53,084,160 + (127+1)*1024*2 + 2*2880*2 = 53,084,160 + 262,144 + 11,520 = 53,357,824
  const OpCost wd = attention_cost(m, 0, decode, kBf16);
  EXPECT_EQ(wd.flops, 55'181'312.0);
  EXPECT_EQ(wd.bytes, 53'357'824.0);
  // full: 53,084,160 + 16,384*1001 = 69,484,544; bytes 53,084,160 + 1001*1024*2 + 11,520 = 55,145,728
  const OpCost fd = attention_cost(m, 1, decode, kBf16);
  EXPECT_EQ(fd.flops, 69'484'544.0);
  EXPECT_EQ(fd.bytes, 55'145'728.0);

  // A chunk straddling the window: p = 100, n = 50 on a windowed layer.
  //   i = 1..28 attend 101..128: (101+128)*28/2 = 3,206; i = 29..50 attend 128 each: 22*128 = 2,816
  //   attended 6,022 -> 6,022*16,384 = 98,664,448; projections 2*50*26,542,080 = 2,654,208,000
  //   total 2,752,872,448; bytes 53,084,160 + (100+50)*1024*2 + 2*50*2880*2 = 53,967,360
  const std::vector<SequenceChunk> straddle{{50, 100}};
  const OpCost s = attention_cost(m, 0, straddle, kBf16);
  EXPECT_EQ(s.flops, 2'752'872'448.0);
  EXPECT_EQ(s.bytes, 53'967'360.0);
}

TEST(OperatorCosts, MixedBatchReadsWeightsOnce) {
  const MoeModel m = deepseek_v2_lite();
  const std::vector<SequenceChunk> prefill{{512, 0}};
  const std::vector<SequenceChunk> decode{{1, 100}};
  const std::vector<SequenceChunk> both{{512, 0}, {0, 5000}, {1, 100}};  // empty chunk costs nothing
  const OpCost a = attention_cost(m, 3, prefill, kBf16);
  const OpCost b = attention_cost(m, 3, decode, kBf16);
  const OpCost ab = attention_cost(m, 3, both, kBf16);
  EXPECT_EQ(ab.flops, a.flops + b.flops);
  EXPECT_EQ(ab.bytes, a.bytes + b.bytes - 27'525'120.0);  // one weight read (13,762,560*2) fewer
  EXPECT_EQ(attention_cost(m, 3, std::vector<SequenceChunk>{}, kBf16).bytes, 0.0);
}

TEST(OperatorCosts, Gate) {
  // DeepSeek-V2-Lite, 100 tokens: 2*100*2048*64 = 26,214,400 FLOPs
  // bytes: weights 131,072*2 = 262,144; activations 100*(2048+64)*2 = 422,400; total 684,544
  const OpCost d = gate_cost(deepseek_v2_lite(), 100, kBf16);
  EXPECT_EQ(d.flops, 26'214'400.0);
  EXPECT_EQ(d.bytes, 684'544.0);
  // Qwen3, 100 tokens: 2*100*2048*128 = 52,428,800; bytes 524,288 + 100*(2048+128)*2 = 959,488
  const OpCost q = gate_cost(qwen3_30b_a3b(), 100, kBf16);
  EXPECT_EQ(q.flops, 52'428'800.0);
  EXPECT_EQ(q.bytes, 959'488.0);
  EXPECT_EQ(gate_cost(qwen3_30b_a3b(), 0, kBf16).bytes, 0.0);
}

TEST(OperatorCosts, RoutedExpertsSkipIdleExperts) {
  const std::vector<int> hist{0, 3, 0, 10, 1, 0};  // 14 tokens on 3 active experts
  // DeepSeek-V2-Lite: FLOPs 2*14*(3*2048*1408 = 8,650,752) = 242,221,056
  // bytes: 3 experts' weights 3*8,650,752*2 = 51,904,512; activations 14*2*(2048+1408)*2 = 193,536
  // total = 52,098,048
  const OpCost d = routed_experts_cost(deepseek_v2_lite(), hist, kBf16);
  EXPECT_EQ(d.flops, 242'221'056.0);
  EXPECT_EQ(d.bytes, 52'098'048.0);
  // Qwen3: {5, 0, 2}: FLOPs 2*7*4,718,592 = 66,060,288; bytes 2*4,718,592*2 + 7*2*(2048+768)*2
  //   = 18,874,368 + 78,848 = 18,953,216
  const std::vector<int> qhist{5, 0, 2};
  const OpCost q = routed_experts_cost(qwen3_30b_a3b(), qhist, kBf16);
  EXPECT_EQ(q.flops, 66'060'288.0);
  EXPECT_EQ(q.bytes, 18'953'216.0);
  const std::vector<int> idle(64, 0);
  EXPECT_EQ(routed_experts_cost(deepseek_v2_lite(), idle, kBf16).bytes, 0.0);
}

// Block-scaled FP4 stores its scales beside the 4-bit values: NVFP4 8 bits per 16 elements (4.5 bits),
// MXFP4 8 bits per 32 (4.25 bits). The routed experts take their own format; FLOPs do not change.
TEST(OperatorCosts, WeightFormatsMoveTheirBytes) {
  EXPECT_EQ(weight_format_bytes(WeightFormat::kBf16), 2.0);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kFp8), 1.0);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kNvfp4), 0.5625);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kMxfp4), 0.53125);
  Precision fp4_experts;
  fp4_experts.weights = WeightFormat::kFp8;
  fp4_experts.experts = WeightFormat::kNvfp4;
  // DeepSeek-V2-Lite, {0, 3, 0, 10, 1, 0}: 3 experts' weights 3*8,650,752*0.5625 = 14,598,144;
  // activations 14*2*(2048+1408)*2 = 193,536 (BF16 as before); total 14,791,680
  const std::vector<int> hist{0, 3, 0, 10, 1, 0};
  const OpCost nv = routed_experts_cost(deepseek_v2_lite(), hist, fp4_experts);
  EXPECT_EQ(nv.flops, 242'221'056.0);
  EXPECT_EQ(nv.bytes, 14'791'680.0);
  fp4_experts.experts = WeightFormat::kMxfp4;  // 3*8,650,752*0.53125 = 13,787,136 + 193,536
  EXPECT_EQ(routed_experts_cost(deepseek_v2_lite(), hist, fp4_experts).bytes, 13'980'672.0);
  // The shared experts keep the weights' FP8: half of BF16's weight bytes, the same activations.
  const OpCost shared_fp8 = shared_experts_cost(deepseek_v2_lite(), 10, fp4_experts);
  const OpCost shared_bf16 = shared_experts_cost(deepseek_v2_lite(), 10, kBf16);
  const double shared_weights = 2.0 * 3 * 2048 * 1408;  // two shared experts of 1408
  EXPECT_EQ(shared_bf16.bytes - shared_fp8.bytes, shared_weights);
}

// DeepSeek-V3 as Blackwell deployments serve it: FP8 everywhere but NVFP4 (or MXFP4) routed experts.
TEST(OperatorCosts, DeepSeekV3MemoryWithFp4Experts) {
  Precision p;
  p.weights = WeightFormat::kFp8;
  p.experts = WeightFormat::kNvfp4;
  // all but the routed experts 671,025,397,760 - 653,908,770,816 = 17,116,626,944 at 1 B;
  // routed 653,908,770,816 * 9/16 = 367,823,683,584; total 384,940,310,528
  EXPECT_EQ(weight_bytes_per_device(deepseek_v3(), 58 * 256, p), 384'940'310'528.0);
  // EP8: 58*32 = 1,856 slots * 44,040,192 = 81,738,596,352 * 9/16 = 45,977,960,448 + 17,116,626,944
  EXPECT_EQ(weight_bytes_per_device(deepseek_v3(), 58 * 32, p), 63'094'587'392.0);
  p.experts = WeightFormat::kMxfp4;  // 81,738,596,352 * 17/32 = 43,423,629,312 + 17,116,626,944
  EXPECT_EQ(weight_bytes_per_device(deepseek_v3(), 58 * 32, p), 60'540'256'256.0);
}

TEST(OperatorCosts, SharedExperts) {
  // DeepSeek-V2-Lite, 10 tokens, 2 shared experts of 1408:
  //   FLOPs 2 * 2*10*8,650,752 = 346,030,080
  //   bytes 2 * (8,650,752*2 + 10*2*(2048+1408)*2) = 2 * (17,301,504 + 138,240) = 34,879,488
  const OpCost d = shared_experts_cost(deepseek_v2_lite(), 10, kBf16);
  EXPECT_EQ(d.flops, 346'030'080.0);
  EXPECT_EQ(d.bytes, 34'879'488.0);
  const OpCost q = shared_experts_cost(qwen3_30b_a3b(), 10, kBf16);  // no shared experts
  EXPECT_EQ(q.flops, 0.0);
  EXPECT_EQ(q.bytes, 0.0);
}

TEST(OperatorCosts, DenseFfn) {
  // DeepSeek-V2-Lite, 10 tokens: 2*10*(3*2048*10944 = 67,239,936) = 1,344,798,720 FLOPs
  // bytes 67,239,936*2 + 10*2*(2048+10944)*2 = 134,479,872 + 519,680 = 134,999,552
  const OpCost d = dense_ffn_cost(deepseek_v2_lite(), 10, kBf16);
  EXPECT_EQ(d.flops, 1'344'798'720.0);
  EXPECT_EQ(d.bytes, 134'999'552.0);
}

TEST(OperatorCosts, LmHead) {
  // DeepSeek-V2-Lite, 4 tokens: 2*4*2048*102400 = 1,677,721,600 FLOPs
  // bytes 2048*102400*2 + 4*(2048+102400)*2 = 419,430,400 + 835,584 = 420,265,984
  const OpCost d = lm_head_cost(deepseek_v2_lite(), 4, kBf16);
  EXPECT_EQ(d.flops, 1'677'721'600.0);
  EXPECT_EQ(d.bytes, 420'265'984.0);
}

TEST(OperatorCosts, ElementwiseKernelsAroundAttention) {
  // Qwen3-30B-A3B (GQA 32/4, head 128), 10 tokens: two residual-add RMSNorms 2*4*2048*10 = 163,840
  // elements, RoPE on q and k in place 2*(32+4)*128*10 = 92,160; 256,000 * 2 B, three kernels.
  const ElementwiseWork gqa = attention_elementwise(qwen3_30b_a3b(), 10, kBf16);
  EXPECT_EQ(gqa.kernels, 3);
  EXPECT_EQ(gqa.bytes, 512'000.0);
  // DeepSeek-V2-Lite (MLA, full-rank query), 10 tokens: norms 163,840; RoPE on q_pe and k_pe
  // 2*(16+1)*64*10 = 21,760; the kv latent's RMSNorm 2*512*10 = 10,240; 195,840 * 2 B, four kernels.
  const ElementwiseWork mla = attention_elementwise(deepseek_v2_lite(), 10, kBf16);
  EXPECT_EQ(mla.kernels, 4);
  EXPECT_EQ(mla.bytes, 391'680.0);
  // DeepSeek-V3 (q_lora 1536), 1 token: norms 2*4*7168 = 57,344; RoPE 2*129*64 = 16,512; latents
  // 2*(1536+512) = 4,096; 77,952 * 2 B, five kernels.
  const ElementwiseWork v3 = attention_elementwise(deepseek_v3(), 1, kBf16);
  EXPECT_EQ(v3.kernels, 5);
  EXPECT_EQ(v3.bytes, 155'904.0);
  EXPECT_EQ(attention_elementwise(deepseek_v3(), 0, kBf16).kernels, 0);
}

TEST(OperatorCosts, ElementwiseKernelsOfFfnsAndHead) {
  // SiLU(gate) x up over V2-Lite's dense FFN, 10 tokens: 3*10*10944*2 B = 656,640, one kernel.
  const ElementwiseWork dense = swiglu_activation(10, 10944, kBf16);
  EXPECT_EQ(dense.kernels, 1);
  EXPECT_EQ(dense.bytes, 656'640.0);
  // Its two shared experts as one FFN of 2*1408 = 2,816: 3*10*2816*2 = 168,960.
  const ElementwiseWork shared = shared_experts_activation(deepseek_v2_lite(), 10, kBf16);
  EXPECT_EQ(shared.kernels, 1);
  EXPECT_EQ(shared.bytes, 168'960.0);
  EXPECT_EQ(shared_experts_activation(qwen3_30b_a3b(), 10, kBf16).kernels, 0);  // no shared expert
  // The final residual-add RMSNorm over 4 rows: 4*4*2048*2 = 65,536.
  const ElementwiseWork norm = final_norm(deepseek_v2_lite(), 4, kBf16);
  EXPECT_EQ(norm.kernels, 1);
  EXPECT_EQ(norm.bytes, 65'536.0);
  EXPECT_EQ(swiglu_activation(0, 10944, kBf16).bytes, 0.0);
}

TEST(OperatorCosts, KvBytesPerToken) {
  EXPECT_EQ(kv_bytes_per_token(deepseek_v2_lite(), kBf16), 31'104.0);  // 27 * (512+64) * 2
  EXPECT_EQ(kv_bytes_per_token(qwen3_30b_a3b(), kBf16), 98'304.0);     // 48 * (2*4*128) * 2
  EXPECT_EQ(kv_bytes_per_token(gpt_oss_like(), kBf16), 73'728.0);      // 36 * (2*8*64) * 2, windows in full
  Precision fp8_kv;
  fp8_kv.kv_bytes = 1.0;
  EXPECT_EQ(kv_bytes_per_token(deepseek_v2_lite(), fp8_kv), 15'552.0);  // 27 * 576 * 1
}

TEST(OperatorCosts, TotalParamsDeepSeekV2Lite) {
  Precision one_byte;
  one_byte.weights = one_byte.experts = WeightFormat::kFp8;
  // embedding + LM head   102400*2048*2                        =    419,430,400
  // attention             27 * 13,762,560                      =    371,589,120
  // dense FFN (layer 0)   3*2048*10944                         =     67,239,936
  // MoE layers (26)       26 * (gate 131,072 + 2*8,650,752)    =    453,246,976
  // routed experts        26*64 * 8,650,752                    = 14,394,851,328
  // total                                                      = 15,706,357,760
  const double total = weight_bytes_per_device(deepseek_v2_lite(), 26 * 64, one_byte);
  EXPECT_EQ(total, 15'706'357'760.0);
  EXPECT_LT(std::abs(total - 15.7e9) / 15.7e9, 0.03);
  EXPECT_EQ(weight_bytes_per_device(deepseek_v2_lite(), 26 * 64, kBf16), 2 * 15'706'357'760.0);
  // EP over 8 devices: 26*8 = 208 slots; replicated 419,430,400 + 371,589,120 + 67,239,936 +
  // 453,246,976 = 1,311,506,432, plus 208*8,650,752 = 1,799,356,416, total 3,110,862,848
  EXPECT_EQ(weight_bytes_per_device(deepseek_v2_lite(), 26 * 8, one_byte), 3'110'862'848.0);
}

TEST(OperatorCosts, TotalParamsQwen3) {
  Precision one_byte;
  one_byte.weights = one_byte.experts = WeightFormat::kFp8;
  // embedding + LM head   151936*2048*2          =    622,329,856
  // attention             48 * 18,874,368        =    905,969,664
  // gates                 48 * 262,144           =     12,582,912
  // routed experts        48*128 * 4,718,592     = 28,991,029,248
  // total                                        = 30,531,911,680 (published: 30.5B)
  const double total = weight_bytes_per_device(qwen3_30b_a3b(), 48 * 128, one_byte);
  EXPECT_EQ(total, 30'531'911'680.0);
  EXPECT_LT(std::abs(total - 30.5e9) / 30.5e9, 0.03);
}

TEST(OperatorCosts, TotalParamsDeepSeekV3) {
  Precision one_byte;
  one_byte.weights = one_byte.experts = WeightFormat::kFp8;
  // embedding + LM head   129280*7168*2                               =   1,853,358,080
  // attention             61 * 187,105,280                            =  11,413,422,080
  // dense FFN (3 layers)  3 * 3*7168*18432                            =   1,189,085,184
  // MoE layers (58)       58 * (7168*256 + 3*7168*2048) = 58*45,875,200 =  2,660,761,600
  // routed experts        58*256 * 3*7168*2048 = 14,848 * 44,040,192  = 653,908,770,816
  // total                                                             = 671,025,397,760 (published 671B)
  const double total = weight_bytes_per_device(deepseek_v3(), 58 * 256, one_byte);
  EXPECT_EQ(total, 671'025'397'760.0);
}

TEST(OperatorCosts, ShippedDeepSeekV2LitePresetMatchesTheseCounts) {
  const MoeModel preset = MoeModel::from_yaml(
      YamlInput::load_file(SEMSIM_SOURCE_DIR "/models/presets/models/deepseek-v2-lite.yaml"));
  Precision one_byte;
  one_byte.weights = one_byte.experts = WeightFormat::kFp8;
  EXPECT_EQ(attention_params_per_layer(preset), 13'762'560);
  EXPECT_EQ(kv_bytes_per_token(preset, kBf16), 31'104.0);
  EXPECT_EQ(weight_bytes_per_device(preset, 26 * 64, one_byte), 15'706'357'760.0);
}

TEST(OperatorCosts, RejectsBadArguments) {
  const MoeModel m = qwen3_30b_a3b();
  const std::vector<SequenceChunk> ok{{1, 10}};
  const std::vector<SequenceChunk> negative{{1, -1}};
  EXPECT_THROW(attention_cost(m, 48, ok, kBf16), std::invalid_argument);
  EXPECT_THROW(attention_cost(m, -1, ok, kBf16), std::invalid_argument);
  EXPECT_THROW(attention_cost(m, 0, negative, kBf16), std::invalid_argument);
  EXPECT_THROW(gate_cost(m, -1, kBf16), std::invalid_argument);
  const std::vector<int> bad_hist{1, -2};
  EXPECT_THROW(routed_experts_cost(m, bad_hist, kBf16), std::invalid_argument);
  EXPECT_THROW(weight_bytes_per_device(m, -1, kBf16), std::invalid_argument);
}

}  // namespace
}  // namespace semsim
