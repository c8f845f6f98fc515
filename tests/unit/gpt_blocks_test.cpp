// Blocks and decoder options of the GPT-style decoders (gpt2, gpt_bigcode, gpt_neo, opt, bloom,
// mpt, falcon): Conv1D projections, clip_qkv, learned positions, ALiBi, post-norm layers, the
// embedding norm and OPT's projections. Parameter names are the HF state-dict keys
// (transformers/models/{gpt2,opt,falcon}/modeling_*.py); the numbers are checked against
// transformers by the parity rows, here the structure.
#include <algorithm>
#include <cmath>

#include "archs/gpt2.h"
#include "blocks/alibi.h"
#include "blocks/attention.h"
#include "blocks/decoder.h"
#include "blocks/mlp.h"
#include "blocks/position_embedding.h"
#include "block_fixture.h"
#include "test_util.h"

namespace mobius {
namespace {

using test::Counts;
using test::params;
using test::ParamTable;
using GptBlockTest = test::BlockTest;

TEST_F(GptBlockTest, Conv1DWeightIsStoredAsIs) {
  Linear lin(LinearOptions{.in_features = 6, .out_features = 10, .bias = true, .conv1d = true});
  lin.set_name("c_fc", "transformer.h.0.mlp");
  EXPECT_EQ(params(lin), (ParamTable{{"transformer.h.0.mlp.c_fc.weight", "[6, 10]"},
                                     {"transformer.h.0.mlp.c_fc.bias", "[10]"}}));
  EXPECT_FALSE(lin.weight->transpose);  // Conv1D keeps [in, out]
}

// GPT-2's attention: one Conv1D c_attn [q | k | v] (weight [in, out], stored as is) and c_proj.
TEST_F(GptBlockTest, FusedConv1DAttention) {
  AttentionOptions o;
  o.hidden_size = 32;
  o.num_attention_heads = o.num_key_value_heads = 4;
  o.head_dim = 8;
  o.qkv_bias = o.o_bias = true;
  o.fused_qkv = FusedQKV{.name = "c_attn"};
  o.names.o_proj = "c_proj";
  o.conv1d = true;
  Attention attn(o);
  attn.set_name("attn", "transformer.h.0");
  EXPECT_EQ(params(attn), (ParamTable{{"transformer.h.0.attn.c_attn.weight", "[32, 96]"},
                                      {"transformer.h.0.attn.c_attn.bias", "[96]"},
                                      {"transformer.h.0.attn.c_proj.weight", "[32, 32]"},
                                      {"transformer.h.0.attn.c_proj.bias", "[32]"}}));
  for (const Parameter* p : attn.named_parameters()) EXPECT_FALSE(p->transpose) << p->name;
}

// MPT's clip_qkv clamps the fused projection's output before the split.
TEST_F(GptBlockTest, FusedQKVClip) {
  AttentionOptions o;
  o.hidden_size = 32;
  o.num_attention_heads = o.num_key_value_heads = 4;
  o.head_dim = 8;
  o.fused_qkv = FusedQKV{.name = "Wqkv", .clip = 0.5f};
  Attention attn(o);
  attn.set_name("attn", "transformer.blocks.0");
  Value* mask = b.input("mask", DataType::FLOAT, {"batch", 1, "seq", "total"});
  Shape cache{"batch", 4, "past", 8};
  attn.forward(op, input(32), AttentionContext{mask}, b.input("pk", DataType::FLOAT, cache),
               b.input("pv", DataType::FLOAT, cache));
  Counts c = counts();
  EXPECT_EQ(c["Min"], 1);
  EXPECT_EQ(c["Max"], 1);
  EXPECT_EQ(c["Split"], 1);
  EXPECT_EQ(c["RotaryEmbedding"], 0);
}

TEST_F(GptBlockTest, PlainMLPWithCheckpointNames) {
  MLP mlp(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .hidden_act = "gelu_new", .bias = true,
                     .gated = false, .up_name = "c_fc", .down_name = "c_proj", .conv1d = true});
  mlp.set_name("mlp", "transformer.h.1");
  EXPECT_EQ(params(mlp), (ParamTable{{"transformer.h.1.mlp.c_fc.weight", "[8, 20]"},
                                     {"transformer.h.1.mlp.c_fc.bias", "[20]"},
                                     {"transformer.h.1.mlp.c_proj.weight", "[20, 8]"},
                                     {"transformer.h.1.mlp.c_proj.bias", "[8]"}}));
  mlp.forward(op, input(8));
  EXPECT_EQ(counts(), (Counts{{"MatMul", 2}, {"Add", 2}, {"Gelu", 1}}));
}

TEST_F(GptBlockTest, LearnedPositionsWithOffset) {
  LearnedPositionEmbedding opt(514, 8, 2, DataType::FLOAT);  // OPT: max_position_embeddings + 2
  opt.set_name("embed_positions", "model.decoder");
  EXPECT_EQ(params(opt), (ParamTable{{"model.decoder.embed_positions.weight", "[514, 8]"}}));
  Value* pos = b.input("position_ids", DataType::INT64, {"batch", "seq"});
  opt.forward(op, pos);
  EXPECT_EQ(counts(), (Counts{{"Add", 1}, {"Gather", 1}}));
  LearnedPositionEmbedding wpe(512, 8, 0, DataType::FLOAT);  // GPT-2: position_ids as they are
  wpe.set_name("wpe", "transformer");
  wpe.forward(op, pos);
  EXPECT_EQ(counts(), (Counts{{"Add", 1}, {"Gather", 2}}));
}

// Press et al. (arXiv:2108.12409): for n a power of two the slopes are the geometric sequence
// 2^(-8/n), 2^(-16/n), ...; otherwise the first c = 2^floor(log2 n) of it, then every other
// slope of the 2c sequence (odd powers of 2^(-8/(2c))).
TEST(Alibi, BloomSlopesFollowThePaper) {
  for (int64_t n : {4, 8, 12, 16, 20}) {
    std::vector<float> s = alibi_slopes(n);
    ASSERT_EQ(static_cast<int64_t>(s.size()), n);
    int64_t c = 1;
    while (c * 2 <= n) c *= 2;
    for (int64_t k = 0; k < n; ++k) {
      double want = k < c ? std::pow(2.0, -8.0 * (k + 1) / c)
                          : std::pow(2.0, -8.0 * (2 * (k - c) + 1) / (2 * c));
      EXPECT_NEAR(s[k], want, 1e-6 * want) << "n " << n << " head " << k;
    }
  }
}

// build_mpt_alibi_tensor: 1 / 2^(k * 8 / p), k = 1..p, p the next power of two; for n < p the
// odd-indexed (k = 2, 4, ..) slopes first, then the even-indexed, the first n of them.
TEST(Alibi, MptSlopes) {
  std::vector<float> s4 = mpt_alibi_slopes(4, 8);
  for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(s4[k], std::pow(2.0f, -2.0f * (k + 1)));
  std::vector<float> s6 = mpt_alibi_slopes(6, 8);  // p = 8: k = 2, 4, 6, 8, then 1, 3
  const int order[] = {2, 4, 6, 8, 1, 3};
  ASSERT_EQ(s6.size(), 6u);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(s6[i], std::pow(2.0f, -static_cast<float>(order[i])));
}

TEST_F(GptBlockTest, AlibiBiasShapesAndRounding) {
  Value* mask = b.input("attention_mask", DataType::INT64, {"batch", "total"});
  AlibiOptions bloom{.slopes = alibi_slopes(4), .positions = AlibiPositions::MaskCumsum};
  Value* bias = alibi_bias(op, bloom, mask, DataType::FLOAT16);
  EXPECT_EQ(bias->dtype, DataType::FLOAT16);
  Counts c = counts();
  EXPECT_EQ(c["CumSum"], 1);
  EXPECT_EQ(c["Cast"], 2);  // positions to float, bias to float16
  // Falcon: positions, slopes and products rounded to bfloat16 (two Cast pairs).
  AlibiOptions falcon = bloom;
  falcon.bfloat16_product = true;
  falcon.scale = 0.5f;
  alibi_bias(op, falcon, mask, DataType::FLOAT);
  EXPECT_EQ(counts()["Cast"], 2 + 1 + 4);
  // MPT: the key index, no cumulative sum.
  alibi_bias(op, AlibiOptions{.slopes = mpt_alibi_slopes(4, 8), .positions = AlibiPositions::KeyIndex},
             mask, DataType::FLOAT);
  EXPECT_EQ(counts()["CumSum"], 2);
  EXPECT_EQ(counts()["Range"], 1);
}

// A GPT-2-shaped spec: transformer.wte/wpe/h/ln_f names, fused Conv1D c_attn, LayerNorm, MLP.
GptSpec gpt2_spec() {
  GptSpec g{.positions = PositionEmbeddingSpec{"wpe", 128}};
  DecoderSpec& s = g.decoder;
  s.vocab_size = 64;
  s.hidden_size = 32;
  s.num_hidden_layers = 1;
  s.layer_types = {"full_attention"};
  s.layer_uses_rope = {false};
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = 1e-5f;
  s.tie_word_embeddings = true;
  s.names = {.model = "transformer", .embed_tokens = "wte", .layers = "h", .norm = "ln_f",
             .self_attn = "attn", .input_layernorm = "ln_1", .post_attention_layernorm = "ln_2"};
  AttentionOptions& a = s.attention;
  a.hidden_size = 32;
  a.num_attention_heads = a.num_key_value_heads = 4;
  a.head_dim = 8;
  a.qkv_bias = a.o_bias = true;
  a.conv1d = true;
  a.fused_qkv = FusedQKV{.name = "c_attn"};
  a.names.o_proj = "c_proj";
  s.mlp = {.hidden_size = 32, .intermediate_size = 48, .hidden_act = "gelu_new", .bias = true,
           .gated = false, .up_name = "c_fc", .down_name = "c_proj", .conv1d = true};
  return g;
}

TEST(GptDecoder, ParametersAreGpt2StateDictKeys) {
  GptCausalLM m(gpt2_spec());
  const std::string l = "transformer.h.0.";
  EXPECT_EQ(params(m), (ParamTable{{"transformer.wte.weight", "[64, 32]"},
                                   {l + "ln_1.weight", "[32]"}, {l + "ln_1.bias", "[32]"},
                                   {l + "attn.c_attn.weight", "[32, 96]"}, {l + "attn.c_attn.bias", "[96]"},
                                   {l + "attn.c_proj.weight", "[32, 32]"}, {l + "attn.c_proj.bias", "[32]"},
                                   {l + "ln_2.weight", "[32]"}, {l + "ln_2.bias", "[32]"},
                                   {l + "mlp.c_fc.weight", "[32, 48]"}, {l + "mlp.c_fc.bias", "[48]"},
                                   {l + "mlp.c_proj.weight", "[48, 32]"}, {l + "mlp.c_proj.bias", "[32]"},
                                   {"transformer.ln_f.weight", "[32]"}, {"transformer.ln_f.bias", "[32]"},
                                   {"transformer.wpe.weight", "[128, 32]"}}));
  Counts c = test::op_counts(m.build_model().graph);
  EXPECT_EQ(c["LayerNormalization"], 3);
  EXPECT_EQ(c["RotaryEmbedding"], 0);
  EXPECT_EQ(c["Gather"], 2);  // wte and wpe
  EXPECT_EQ(c["Gemm"], 1);    // tied lm_head
}

// ALiBi is computed once and added to each layer type's mask; no RoPE, no position table.
TEST(GptDecoder, AlibiOnceForAllLayers) {
  GptSpec g = gpt2_spec();
  DecoderSpec& s = g.decoder;
  s.num_hidden_layers = 2;
  s.layer_types = {"full_attention", "sliding_attention"};
  s.layer_uses_rope = {false, false};
  s.sliding_window = 4;
  g.positions.reset();
  g.alibi = AlibiOptions{.slopes = alibi_slopes(4), .positions = AlibiPositions::MaskCumsum};
  GptCausalLM m(g);
  Counts c = test::op_counts(m.build_model().graph);
  EXPECT_EQ(c["CumSum"], 1);
  EXPECT_EQ(c["Where"], 2);  // two masks, each with the bias added
  EXPECT_EQ(c["Gather"], 1);
  EXPECT_EQ(c["Cos"], 0);
}

// Bloom: a norm on the embeddings; each residual taken after its norm (one Add per residual).
TEST(GptDecoder, EmbedLayernormAndResidualFromNorm) {
  GptSpec g = gpt2_spec();
  g.positions.reset();
  g.embed_layernorm = "word_embeddings_layernorm";
  g.decoder.topology = LayerTopology::residual_from_norm;
  GptCausalLM m(g);
  ParamTable p = params(m);
  EXPECT_TRUE(std::count(p.begin(), p.end(),
                         std::pair<std::string, std::string>{"transformer.word_embeddings_layernorm.weight", "[32]"}));
  Counts c = test::op_counts(m.build_model().graph);
  EXPECT_EQ(c["LayerNormalization"], 4);  // embeddings, ln_1, ln_2, ln_f
}

// OPT post-norm: no final norm; project_in / project_out around the layers when the embeddings
// are narrower than hidden_size; MLP projections directly in the layer.
TEST(GptDecoder, PostNormProjections) {
  GptSpec g = gpt2_spec();
  DecoderSpec& s = g.decoder;
  s.topology = LayerTopology::norm_after_residual;
  s.names.norm = "";
  s.names.mlp = "";
  s.mlp.up_name = "fc1";
  s.mlp.down_name = "fc2";
  s.embedding_dim = 16;
  GptCausalLM m(g);
  ParamTable p = params(m);
  EXPECT_EQ(p[0], (std::pair<std::string, std::string>{"transformer.wte.weight", "[64, 16]"}));
  bool in = false, out = false, fc1 = false;
  for (const auto& [name, shape] : p) {
    in |= name == "transformer.project_in.weight" && shape == "[16, 32]";
    out |= name == "transformer.project_out.weight" && shape == "[32, 16]";
    fc1 |= name == "transformer.h.0.fc1.weight";
    EXPECT_NE(name, "transformer.ln_f.weight");
  }
  EXPECT_TRUE(in && out && fc1);
  EXPECT_EQ(test::op_counts(m.build_model().graph)["LayerNormalization"], 2);
}

}  // namespace
}  // namespace mobius
