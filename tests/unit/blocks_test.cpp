// blocks/: parameter names and shapes (HF state-dict keys; Linear weights stored transposed),
// the ops each block emits, and output dtypes. The parameter layouts follow
// transformers/models/llama/modeling_llama.py and qwen3/modeling_qwen3.py.
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/decoder.h"
#include "blocks/mlp.h"
#include "blocks/norms.h"
#include "block_fixture.h"
#include "test_util.h"
#include "util/float16.h"

namespace mobius {
namespace {

using test::BlockTest;
using test::Counts;
using test::op_counts;
using test::params;
using test::ParamTable;

TEST_F(BlockTest, LinearWithBias) {
  Linear lin(LinearOptions{.in_features = 6, .out_features = 10, .bias = true, .dtype = DataType::FLOAT16});
  lin.set_name("q_proj", "model.layers.0.self_attn");
  EXPECT_EQ(params(lin), (ParamTable{{"model.layers.0.self_attn.q_proj.weight", "[6, 10]"},
                                     {"model.layers.0.self_attn.q_proj.bias", "[10]"}}));
  EXPECT_TRUE(lin.weight->transpose);  // checkpoint [out, in] -> initializer [in, out]
  EXPECT_FALSE(lin.bias->transpose);
  Value* y = lin.forward(op, input(6, DataType::FLOAT16));
  EXPECT_EQ(counts(), (Counts{{"MatMul", 1}, {"Add", 1}}));
  EXPECT_EQ(node("MatMul").name, "q_proj/MatMul_0");
  EXPECT_EQ(node("MatMul").inputs[1]->name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(node("Add").inputs[1]->name, "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(y->dtype, DataType::FLOAT16);
}

TEST_F(BlockTest, LinearWithoutBias) {
  Linear lin(LinearOptions{.in_features = 6, .out_features = 10});
  lin.set_name("lm_head", "");
  EXPECT_EQ(params(lin), (ParamTable{{"lm_head.weight", "[6, 10]"}}));
  lin.forward(op, input(6));
  EXPECT_EQ(counts(), (Counts{{"MatMul", 1}}));
}

TEST_F(BlockTest, EmbeddingGatherAndTiedAttend) {
  Embedding e(50, 8, DataType::BFLOAT16);
  e.set_name("embed_tokens", "model");
  EXPECT_EQ(params(e), (ParamTable{{"model.embed_tokens.weight", "[50, 8]"}}));
  EXPECT_FALSE(e.weight->transpose);
  Value* ids = b.input("ids", DataType::INT64, {"batch", "seq"});
  EXPECT_EQ(e.forward(op, ids)->dtype, DataType::BFLOAT16);
  Value* logits = e.attend(op, input(8, DataType::BFLOAT16));
  EXPECT_EQ(logits->dtype, DataType::BFLOAT16);
  EXPECT_EQ(counts()["Gather"], 1);
  EXPECT_EQ(counts()["Gemm"], 1);
  EXPECT_EQ(attr<int64_t>(node("Gemm"), "transB"), 1);
  EXPECT_EQ(weight_count(), 1);  // one weight for both uses
}

TEST_F(BlockTest, RMSNorm) {
  RMSNorm n(NormOptions{.dim = 16, .eps = 1e-5f});
  n.set_name("input_layernorm", "model.layers.3");
  EXPECT_EQ(params(n), (ParamTable{{"model.layers.3.input_layernorm.weight", "[16]"}}));
  EXPECT_EQ(n.forward(op, input(16))->dtype, DataType::FLOAT);
  EXPECT_EQ(counts(), (Counts{{"RMSNormalization", 1}}));
  EXPECT_EQ(attr<float>(node("RMSNormalization"), "epsilon"), 1e-5f);
  EXPECT_EQ(attr<int64_t>(node("RMSNormalization"), "axis"), -1);
}

// GemmaRMSNorm: norm(x.float()) * (1 + weight.float()), cast back: in float32 no casts, the 1 a
// float32 constant.
TEST_F(BlockTest, RMSNormOffsetOne) {
  RMSNorm n(NormOptions{.dim = 16, .weight_offset_one = true});
  n.set_name("norm", "model");
  EXPECT_EQ(n.forward(op, input(16))->dtype, DataType::FLOAT);
  EXPECT_EQ(counts(), (Counts{{"Add", 1}, {"RMSNormalization", 1}}));
  const Node& add = node("Add");
  EXPECT_EQ(add.inputs[0]->name, "model.norm.weight");
  const Initializer* one = model.graph.find_initializer(add.inputs[1]->name);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->value->dtype, DataType::FLOAT);
  ASSERT_EQ(one->data.size(), 4u);
  float v;
  std::memcpy(&v, one->data.data(), 4);
  EXPECT_EQ(v, 1.0f);
  EXPECT_EQ(node("RMSNormalization").inputs[1], add.outputs[0]);
}

// In float16 the input and the weight are cast to float32 first, the result back to float16
// (GemmaRMSNorm computes in float32, then type_as(x)).
TEST_F(BlockTest, RMSNormOffsetOneFloat16ComputesInFloat32) {
  RMSNorm n(NormOptions{.dim = 16, .dtype = DataType::FLOAT16, .weight_offset_one = true});
  n.set_name("norm", "model");
  Value* y = n.forward(op, input(16, DataType::FLOAT16));
  EXPECT_EQ(y->dtype, DataType::FLOAT16);
  EXPECT_EQ(counts(), (Counts{{"Cast", 3}, {"Add", 1}, {"RMSNormalization", 1}}));
  const Node& norm = node("RMSNormalization");
  EXPECT_EQ(norm.inputs[0]->dtype, DataType::FLOAT);
  EXPECT_EQ(norm.inputs[1]->dtype, DataType::FLOAT);
  EXPECT_EQ(node("Add").outputs[0], norm.inputs[1]);
}

TEST_F(BlockTest, LayerNormWithAndWithoutBias) {
  LayerNorm with(NormOptions{.dim = 16});
  with.set_name("ln", "");
  LayerNorm without(NormOptions{.dim = 16, .bias = false});
  without.set_name("ln2", "");
  EXPECT_EQ(params(with), (ParamTable{{"ln.weight", "[16]"}, {"ln.bias", "[16]"}}));
  EXPECT_EQ(params(without), (ParamTable{{"ln2.weight", "[16]"}}));
  Value* x = input(16);
  with.forward(op, x);
  without.forward(op, x);
  EXPECT_EQ(counts(), (Counts{{"LayerNormalization", 2}}));
  EXPECT_EQ(model.graph.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(model.graph.nodes[1].inputs.size(), 2u);
}

TEST_F(BlockTest, GatedMLP) {
  GatedMLP mlp(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .hidden_act = "silu"});
  mlp.set_name("mlp", "model.layers.0");
  EXPECT_EQ(params(mlp), (ParamTable{{"model.layers.0.mlp.gate_proj.weight", "[8, 20]"},
                                     {"model.layers.0.mlp.up_proj.weight", "[8, 20]"},
                                     {"model.layers.0.mlp.down_proj.weight", "[20, 8]"}}));
  EXPECT_EQ(mlp.forward(op, input(8))->dtype, DataType::FLOAT);
  // silu(x) = x * sigmoid(x); then gate * up.
  EXPECT_EQ(counts(), (Counts{{"MatMul", 3}, {"Sigmoid", 1}, {"Mul", 2}}));
  EXPECT_EQ(model.graph.nodes.back().name, "mlp.down_proj/MatMul_0");
}

TEST_F(BlockTest, GatedMLPWithBiasAndTanhGelu) {
  GatedMLP mlp(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .hidden_act = "gelu_pytorch_tanh", .bias = true});
  Value* x = input(8);
  mlp.forward(op, x);
  EXPECT_EQ(params(mlp).size(), 6u);
  EXPECT_EQ(counts(), (Counts{{"MatMul", 3}, {"Add", 3}, {"Gelu", 1}, {"Mul", 1}}));
  EXPECT_EQ(attr<std::string>(node("Gelu"), "approximate"), "tanh");
  test::expect_error([&] { activation(op, "swiglu_oai", x); }, {"hidden_act", "swiglu_oai"});
}

AttentionOptions attention_options(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim, DataType dtype) {
  AttentionOptions o;
  o.hidden_size = hidden;
  o.num_attention_heads = heads;
  o.num_key_value_heads = kv_heads;
  o.head_dim = head_dim;
  o.dtype = dtype;
  return o;
}

struct AttentionCase {
  const char* name;
  bool qkv_bias, o_bias, qk_norm;
  int64_t heads, kv_heads;
};

class AttentionTest : public BlockTest, public ::testing::WithParamInterface<AttentionCase> {};

TEST_P(AttentionTest, ParametersOpsAndDtypes) {
  const AttentionCase c = GetParam();
  const int64_t hidden = 32, head_dim = 16;  // head_dim * heads != hidden: head_dim is explicit
  AttentionOptions o = attention_options(hidden, c.heads, c.kv_heads, head_dim, DataType::FLOAT16);
  o.qkv_bias = c.qkv_bias;
  o.o_bias = c.o_bias;
  if (c.qk_norm) o.qk_norm = QKNorm{};
  Attention attn(o);
  attn.set_name("self_attn", "model.layers.0");
  const std::string q = std::to_string(c.heads * head_dim), kv = std::to_string(c.kv_heads * head_dim);
  ParamTable want;
  using Proj = std::tuple<std::string, std::string, std::string, bool>;  // name, in, out, bias
  for (auto [proj, in, out, bias] : std::vector<Proj>{{"q_proj", "32", q, c.qkv_bias}, {"k_proj", "32", kv, c.qkv_bias},
                                                      {"v_proj", "32", kv, c.qkv_bias}, {"o_proj", q, "32", c.o_bias}}) {
    const std::string p = "model.layers.0.self_attn." + proj;
    want.emplace_back(p + ".weight", "[" + in + ", " + out + "]");
    if (bias) want.emplace_back(p + ".bias", "[" + out + "]");
  }
  if (c.qk_norm) {
    want.emplace_back("model.layers.0.self_attn.q_norm.weight", "[16]");
    want.emplace_back("model.layers.0.self_attn.k_norm.weight", "[16]");
  }
  EXPECT_EQ(params(attn), want);

  const DataType dt = DataType::FLOAT16;
  AttentionContext ctx{b.input("mask", dt, {"batch", 1, "seq", "total"}),
                       {b.input("cos", dt, {"batch", "seq", 8}), b.input("sin", dt, {"batch", "seq", 8}), 0}};
  Shape cache{"batch", c.kv_heads, "past", head_dim};
  AttentionResult r = attn.forward(op, input(hidden, dt), ctx, b.input("pk", dt, cache), b.input("pv", dt, cache));
  EXPECT_EQ(r.hidden->dtype, dt);
  EXPECT_EQ(r.present_key->dtype, dt);
  EXPECT_EQ(r.present_value->dtype, dt);

  const int biases = 3 * c.qkv_bias + c.o_bias;
  Counts want_ops{{"MatMul", 4}, {"Reshape", 4}, {"Transpose", 4}, {"RotaryEmbedding", 2}, {"Attention", 1}};
  if (biases) want_ops["Add"] = biases;
  if (c.qk_norm) want_ops["RMSNormalization"] = 2;
  EXPECT_EQ(counts(), want_ops);
  const Node& a = node("Attention");
  EXPECT_EQ(a.name, "self_attn/Attention_0");
  EXPECT_EQ(attr<float>(a, "scale"), 1.0f / std::sqrt(16.0f));
  EXPECT_EQ(attr<int64_t>(a, "is_causal"), 0);
  EXPECT_EQ(a.inputs[3], ctx.mask);
  EXPECT_EQ(a.outputs[1], r.present_key);
  EXPECT_EQ(attr<int64_t>(node("RotaryEmbedding"), "interleaved"), 0);
  // q_norm runs on [batch, seq, heads, head_dim], before RoPE (Qwen3Attention).
  if (c.qk_norm) {
    EXPECT_EQ(node("RMSNormalization").name, "self_attn.q_norm/RMSNormalization_0");
  }
}

INSTANTIATE_TEST_SUITE_P(Blocks, AttentionTest,
                         ::testing::Values(AttentionCase{"MHA", false, false, false, 4, 4},
                                           AttentionCase{"GQA", false, false, false, 4, 2},
                                           AttentionCase{"MQA", false, false, false, 4, 1},
                                           AttentionCase{"Qwen2Bias", true, false, false, 4, 2},
                                           AttentionCase{"QkNormAllBias", true, true, true, 4, 2}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(BlockTest, PartialRotaryPassesRotaryDim) {
  Value* x = b.input("q", DataType::FLOAT, {1, 2, 3, 16});
  apply_rope(op, x, RopeTables{x, x, 8});
  EXPECT_EQ(attr<int64_t>(node("RotaryEmbedding"), "rotary_embedding_dim"), 8);
}

DecoderSpec tiny_spec(DataType dtype = DataType::FLOAT) {
  DecoderSpec s;
  s.vocab_size = 64;
  s.hidden_size = 32;
  s.num_hidden_layers = 2;
  s.layer_types = {"full_attention", "full_attention"};
  s.attention = attention_options(32, 4, 2, 8, dtype);
  s.mlp = {.hidden_size = 32, .intermediate_size = 48, .dtype = dtype};
  s.rope.head_dim = 8;
  s.rope.max_position_embeddings = 128;
  s.dtype = dtype;
  return s;
}

TEST(DecoderCausalLM, ParametersAreLlamaStateDictKeys) {
  DecoderCausalLM m(tiny_spec());
  ParamTable want{{"model.embed_tokens.weight", "[64, 32]"}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    ParamTable layer{{l + "input_layernorm.weight", "[32]"},
                     {l + "self_attn.q_proj.weight", "[32, 32]"},
                     {l + "self_attn.k_proj.weight", "[32, 16]"},
                     {l + "self_attn.v_proj.weight", "[32, 16]"},
                     {l + "self_attn.o_proj.weight", "[32, 32]"},
                     {l + "post_attention_layernorm.weight", "[32]"},
                     {l + "mlp.gate_proj.weight", "[32, 48]"},
                     {l + "mlp.up_proj.weight", "[32, 48]"},
                     {l + "mlp.down_proj.weight", "[48, 32]"}};
    want.insert(want.end(), layer.begin(), layer.end());
  }
  want.emplace_back("model.norm.weight", "[32]");
  want.emplace_back("lm_head.weight", "[32, 64]");
  EXPECT_EQ(params(m), want);
}

// Every parameter is used exactly once, as a weight initializer bound to its own key.
void expect_weights_match_parameters(const Model& model, const Module& m) {
  std::set<std::string> weights;
  for (const Initializer& i : model.graph.initializers)
    if (i.weight) {
      weights.insert(i.value->name);
      EXPECT_EQ(i.weight->source_key, i.value->name);
    }
  std::set<std::string> names;
  for (const auto& [name, shape] : params(m)) names.insert(name);
  EXPECT_EQ(weights, names);
}

TEST(DecoderCausalLM, BuildsTheTextGenerationGraph) {
  DecoderCausalLM m(tiny_spec());
  Model model = m.build_model();
  const Graph& g = model.graph;
  const int L = 2;
  Counts c = op_counts(g);
  EXPECT_EQ(c["MatMul"], 7 * L + 1);  // q k v o, gate up down, lm_head
  EXPECT_EQ(c["Attention"], L);
  EXPECT_EQ(c["RotaryEmbedding"], 2 * L);
  EXPECT_EQ(c["RMSNormalization"], 2 * L + 1);
  EXPECT_EQ(c["Gather"], 1);
  EXPECT_EQ(c["Gemm"], 0);
  EXPECT_EQ(c["Cos"], 1);  // one RoPE table for all layers
  EXPECT_EQ(c["Where"], 1);  // one mask for all layers
  expect_weights_match_parameters(model, m);

  std::vector<std::string> in, out;
  for (const Value* v : g.inputs) in.push_back(v->name);
  for (const Value* v : g.outputs) out.push_back(v->name);
  EXPECT_EQ(in, (std::vector<std::string>{"input_ids", "attention_mask", "position_ids",
                                          "past_key_values.0.key", "past_key_values.0.value",
                                          "past_key_values.1.key", "past_key_values.1.value"}));
  EXPECT_EQ(out, (std::vector<std::string>{"logits", "present.0.key", "present.0.value", "present.1.key",
                                           "present.1.value"}));
  EXPECT_EQ(shape_str(*g.outputs[0]->shape), "[batch_size, sequence_length, 64]");
  EXPECT_EQ(shape_str(*g.outputs[1]->shape), "[batch_size, 2, total_sequence_length, 8]");
  EXPECT_EQ(shape_str(*g.inputs[3]->shape), "[batch_size, 2, past_sequence_length, 8]");
  for (const Value* v : g.outputs) EXPECT_EQ(v->dtype, DataType::FLOAT) << v->name;
  bool found = false;
  for (const Node& n : g.nodes) found |= n.name == "model.layers.1.self_attn.q_proj/MatMul_0";
  EXPECT_TRUE(found);
}

TEST(DecoderCausalLM, Float16TiedSlidingWindow) {
  DecoderSpec s = tiny_spec(DataType::FLOAT16);
  s.tie_word_embeddings = true;
  s.sliding_window = 4;
  s.layer_types = {"sliding_attention", "full_attention"};
  DecoderCausalLM m(s);
  EXPECT_EQ(params(m).back().first, "model.norm.weight");  // no lm_head
  // the sliding layer's attention reports its window (tasks/layer_state.h sliding_kv), the cache
  // inputs and outputs are those of a self_kv layer
  const std::vector<LayerStates> states = m.layer_states();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].at(0).kind, StateKind::sliding_kv);
  EXPECT_EQ(states[0].at(0).window, 4);
  EXPECT_EQ(states[1].at(0).kind, StateKind::self_kv);
  EXPECT_EQ(states[1].at(0).window, 0);
  EXPECT_EQ(m.cache_layout().num_layers, 2);
  Model model = m.build_model();
  Counts c = op_counts(model.graph);
  EXPECT_EQ(c["MatMul"], 7 * 2);
  EXPECT_EQ(c["Gemm"], 1);  // logits against model.embed_tokens.weight
  EXPECT_EQ(c["Where"], 2);  // one mask per window (4 and none)
  expect_weights_match_parameters(model, m);
  for (const Value* v : model.graph.outputs) EXPECT_EQ(v->dtype, DataType::FLOAT16) << v->name;
  for (const Value* v : model.graph.inputs)
    EXPECT_EQ(v->dtype, v->name.starts_with("past") ? DataType::FLOAT16 : DataType::INT64);
  for (const Initializer& i : model.graph.initializers) {
    if (i.weight) {
      EXPECT_EQ(i.value->dtype, DataType::FLOAT16) << i.value->name;
    }
  }
  // Masks are in the model dtype, their fill value f16's lowest finite number -(2 - 2^-10) * 2^15.
  const double lowest = -std::ldexp(2.0 - std::ldexp(1.0, -10), 15);
  for (const Node& n : model.graph.nodes) {
    if (n.op_type != "Where") continue;
    EXPECT_EQ(n.outputs[0]->dtype, DataType::FLOAT16);
    const Initializer* fill = model.graph.find_initializer(n.inputs[2]->name);
    ASSERT_NE(fill, nullptr);
    EXPECT_EQ(f16_to_f32(static_cast<uint16_t>(fill->data[0] | fill->data[1] << 8)), lowest);
  }
}

// --- options of the decoder relatives (phi, phi3, gpt_neox, stablelm, persimmon, gptj, codegen,
// glm, glm4, cohere, cohere2): transformers/models/<type>/modeling_<type>.py -----------------------

// The int64 values of a constant input (e.g. Split's sizes).
std::vector<int64_t> ints_of(const Model& model, const Value* v) {
  const Initializer* init = model.graph.find_initializer(v->name);
  if (!init) {
    ADD_FAILURE() << v->name << " is not a constant";
    return {};
  }
  std::vector<int64_t> out(init->data.size() / sizeof(int64_t));
  std::memcpy(out.data(), init->data.data(), init->data.size());
  return out;
}

const Node* producer(const Model& model, const Value* v) {
  for (const Node& n : model.graph.nodes)
    for (const Value* o : n.outputs)
      if (o == v) return &n;
  return nullptr;
}

AttentionContext test_context(GraphBuilder& b, int64_t rotary_half) {
  return {b.input("mask", DataType::FLOAT, {"batch", 1, "seq", "total"}),
          {b.input("cos", DataType::FLOAT, {"batch", "seq", rotary_half}),
           b.input("sin", DataType::FLOAT, {"batch", "seq", rotary_half}), 0}};
}

// Phi3Attention.qkv_proj = [q | k | v] with GQA: one MatMul, Split sizes [q_dim, kv_dim, kv_dim].
TEST_F(BlockTest, FusedQkvConcatenated) {
  AttentionOptions o = attention_options(32, 4, 2, 16, DataType::FLOAT);
  o.fused_qkv = FusedQKV{.name = "qkv_proj"};
  Attention attn(o);
  attn.set_name("self_attn", "model.layers.0");
  EXPECT_EQ(params(attn), (ParamTable{{"model.layers.0.self_attn.qkv_proj.weight", "[32, 128]"},
                                      {"model.layers.0.self_attn.o_proj.weight", "[64, 32]"}}));
  Shape cache{"batch", 2, "past", 16};
  attn.forward(op, input(32), test_context(b, 8), b.input("pk", DataType::FLOAT, cache),
               b.input("pv", DataType::FLOAT, cache));
  EXPECT_EQ(counts(), (Counts{{"MatMul", 2}, {"Split", 1}, {"Reshape", 5}, {"Transpose", 4},
                              {"RotaryEmbedding", 2}, {"Attention", 1}}));
  EXPECT_EQ(ints_of(model, node("Split").inputs[1]), (std::vector<int64_t>{64, 32, 32}));
  EXPECT_EQ(attr<int64_t>(node("Split"), "axis"), -1);
  EXPECT_EQ(ints_of(model, producer(model, node("Split").inputs[0])->inputs[1]),
            (std::vector<int64_t>{0, 0, 1, -1}));  // one group
}

// CodeGenAttention: qkv_proj viewed as [mp_num 4, (q, v, k) of 2 heads each]; the second part of a
// group is v, and feeds the Attention op's value input (after Reshape and Transpose).
TEST_F(BlockTest, FusedQkvGroupedQvk) {
  AttentionOptions o = attention_options(64, 8, 8, 8, DataType::FLOAT);
  o.fused_qkv = FusedQKV{.name = "qkv_proj", .groups = 4, .order = "qvk"};
  o.names.o_proj = "out_proj";
  o.rope_interleaved = true;
  Attention attn(o);
  attn.set_name("attn", "transformer.h.0");
  EXPECT_EQ(params(attn), (ParamTable{{"transformer.h.0.attn.qkv_proj.weight", "[64, 192]"},
                                      {"transformer.h.0.attn.out_proj.weight", "[64, 64]"}}));
  Shape cache{"batch", 8, "past", 8};
  attn.forward(op, input(64), test_context(b, 2), b.input("pk", DataType::FLOAT, cache),
               b.input("pv", DataType::FLOAT, cache));
  const Node& split = node("Split");
  EXPECT_EQ(ints_of(model, split.inputs[1]), (std::vector<int64_t>{16, 16, 16}));
  EXPECT_EQ(ints_of(model, producer(model, split.inputs[0])->inputs[1]), (std::vector<int64_t>{0, 0, 4, -1}));
  const Node* v_heads = producer(model, producer(model, node("Attention").inputs[2])->inputs[0]);
  ASSERT_NE(v_heads, nullptr);
  EXPECT_EQ(v_heads->op_type, "Reshape");
  EXPECT_EQ(v_heads->inputs[0], split.outputs[1]);
  EXPECT_EQ(ints_of(model, v_heads->inputs[1]), (std::vector<int64_t>{0, 0, 8, 8}));
  EXPECT_EQ(attr<int64_t>(node("RotaryEmbedding"), "interleaved"), 1);
}

// Cohere q_norm: one [heads, head_dim] weight; StableLM q_layernorm: one LayerNorm per head,
// concatenated in the graph. Both normalize with a unit scale, then multiply per head.
TEST_F(BlockTest, PerHeadQkNorms) {
  AttentionOptions o = attention_options(32, 4, 2, 8, DataType::FLOAT);
  o.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .layout = QKNormLayout::weight_per_head};
  Attention cohere(o);
  cohere.set_name("self_attn", "l");
  ParamTable p = params(cohere);
  EXPECT_EQ(p[4], (std::pair<std::string, std::string>{"l.self_attn.q_norm.weight", "[4, 8]"}));
  EXPECT_EQ(p[5], (std::pair<std::string, std::string>{"l.self_attn.k_norm.weight", "[2, 8]"}));
  o.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .layout = QKNormLayout::norm_per_head,
                     .q_name = "q_layernorm", .k_name = "k_layernorm"};
  Attention stablelm(o);
  stablelm.set_name("self_attn", "l");
  p = params(stablelm);
  ASSERT_EQ(p.size(), 4u + 4 + 2);
  EXPECT_EQ(p[4], (std::pair<std::string, std::string>{"l.self_attn.q_layernorm.norms.0.weight", "[8]"}));
  EXPECT_EQ(p[9], (std::pair<std::string, std::string>{"l.self_attn.k_layernorm.norms.1.weight", "[8]"}));
  Shape cache{"batch", 2, "past", 8};
  stablelm.forward(op, input(32), test_context(b, 4), b.input("pk", DataType::FLOAT, cache),
                   b.input("pv", DataType::FLOAT, cache));
  Counts c = counts();
  EXPECT_EQ(c["LayerNormalization"], 2);
  EXPECT_EQ(c["Concat"], 2);     // [4, 8] and [2, 8] weights
  EXPECT_EQ(c["Unsqueeze"], 6);  // one per head
  EXPECT_EQ(c["Mul"], 2);
  EXPECT_EQ(weight_count(), 4 + 6);
}

TEST_F(BlockTest, FusedGateUpAndPlainMLP) {
  GatedMLP gated(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .fused_gate_up = true});
  gated.set_name("mlp", "l");
  EXPECT_EQ(params(gated), (ParamTable{{"l.mlp.gate_up_proj.weight", "[8, 40]"}, {"l.mlp.down_proj.weight", "[20, 8]"}}));
  gated.forward(op, input(8));
  EXPECT_EQ(ints_of(model, node("Split").inputs[1]), (std::vector<int64_t>{20, 20}));
  const Node& sigmoid = node("Sigmoid");  // silu(gate): gate is the first half (torch chunk)
  EXPECT_EQ(sigmoid.inputs[0], node("Split").outputs[0]);

  MLP plain(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .hidden_act = "gelu_new", .bias = true,
                       .gated = false, .up_name = "fc_in", .down_name = "fc_out"});
  plain.set_name("mlp", "l");
  EXPECT_EQ(params(plain), (ParamTable{{"l.mlp.fc_in.weight", "[8, 20]"}, {"l.mlp.fc_in.bias", "[20]"},
                                       {"l.mlp.fc_out.weight", "[20, 8]"}, {"l.mlp.fc_out.bias", "[8]"}}));
}

TEST_F(BlockTest, TiedLMHeadKeepsItsBias) {
  Embedding e(50, 8, DataType::FLOAT);
  e.set_name("wte", "transformer");
  LMHead head(LMHeadOptions{.hidden_size = 8, .vocab_size = 50, .bias = true}, &e);
  head.set_name("lm_head", "");
  EXPECT_EQ(params(head), (ParamTable{{"lm_head.bias", "[50]"}}));
  head.forward(op, input(8));
  const Node& gemm = node("Gemm");
  ASSERT_EQ(gemm.inputs.size(), 3u);
  EXPECT_EQ(gemm.inputs[1]->name, "transformer.wte.weight");
  EXPECT_EQ(gemm.inputs[2]->name, "lm_head.bias");
}

// Phi / GPT-J / Cohere layer: LayerNorm, one norm shared by attention and MLP, parallel residual;
// Cohere2: RoPE on the sliding layer only; logit_scale.
TEST(DecoderCausalLM, ParallelSharedLayerNormNoRopeLayerLogitScale) {
  DecoderSpec s = tiny_spec();
  s.norm_kind = NormKind::LayerNorm;
  s.norm_bias = false;
  s.topology = LayerTopology::parallel_shared_norm;
  s.logit_scale = 0.0625f;
  s.sliding_window = 4;
  s.layer_types = {"sliding_attention", "full_attention"};
  s.layer_uses_rope = {true, false};
  DecoderCausalLM m(s);
  ParamTable p = params(m);
  EXPECT_EQ(p[1], (std::pair<std::string, std::string>{"model.layers.0.input_layernorm.weight", "[32]"}));
  EXPECT_EQ(p[6], (std::pair<std::string, std::string>{"model.layers.0.mlp.gate_proj.weight", "[32, 48]"}));
  EXPECT_EQ(p.size(), 1u + 2 * 8 + 1 + 1);  // no post_attention_layernorm, no norm biases
  Model model = m.build_model();
  Counts c = op_counts(model.graph);
  EXPECT_EQ(c["LayerNormalization"], 2 + 1);
  EXPECT_EQ(c["RMSNormalization"], 0);
  EXPECT_EQ(c["RotaryEmbedding"], 2);  // q and k of layer 0
  EXPECT_EQ(c["Add"], 2 * 2);          // x + attn, + mlp per layer
  expect_weights_match_parameters(model, m);
  const Node* last = producer(model, model.graph.outputs[0]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op_type, "Mul");
}

// GPT-NeoX: parallel residual with two norms; GLM4: post norms on both branch outputs.
TEST(DecoderCausalLM, ParallelTwoNormsAndPostNormNames) {
  DecoderSpec s = tiny_spec();
  s.topology = LayerTopology::parallel;
  s.names = {.model = "gpt_neox", .embed_tokens = "embed_in", .norm = "final_layer_norm",
             .lm_head = "embed_out", .self_attn = "attention"};
  DecoderCausalLM neox(s);
  ParamTable p = params(neox);
  EXPECT_EQ(p.front().first, "gpt_neox.embed_in.weight");
  EXPECT_EQ(p[2].first, "gpt_neox.layers.0.attention.q_proj.weight");
  EXPECT_EQ(p[6].first, "gpt_neox.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(p.back().first, "embed_out.weight");

  DecoderSpec g = tiny_spec();
  g.topology = LayerTopology::sandwich;
  DecoderCausalLM glm4(g);
  p = params(glm4);
  EXPECT_EQ(p[7].first, "model.layers.0.post_self_attn_layernorm.weight");
  EXPECT_EQ(p[8].first, "model.layers.0.post_mlp_layernorm.weight");
  EXPECT_EQ(op_counts(glm4.build_model().graph)["RMSNormalization"], 4 * 2 + 1);
}

// The Gemma options (transformers/models/gemma2,gemma3/modeling_*.py): four (1 + weight) norms per
// layer under Gemma's names, q/k norms, scaled embeddings, attention and final logit softcapping,
// and one RoPE table per layer type.
TEST(DecoderCausalLM, GemmaOptions) {
  DecoderSpec s = tiny_spec();
  s.tie_word_embeddings = true;
  s.norm_weight_offset_one = true;
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.post_attention_layernorm = "pre_feedforward_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  s.embed_scale = std::sqrt(32.0f);
  s.final_logit_softcapping = 20.0f;
  s.attention.softcap = 1.5f;
  s.attention.qk_norm = QKNorm{.weight_offset_one = true};
  s.sliding_window = 4;
  s.layer_types = {"sliding_attention", "full_attention"};
  s.layer_type_rope["sliding_attention"] = s.rope;
  s.layer_type_rope["sliding_attention"].rope_theta = 100.0;
  DecoderCausalLM m(s);
  std::set<std::string> names;
  for (const auto& [name, shape] : params(m)) names.insert(name);
  for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm", "self_attn.q_norm", "self_attn.k_norm"})
    EXPECT_TRUE(names.count("model.layers.1." + std::string(n) + ".weight")) << n;
  EXPECT_EQ(names.count("lm_head.weight"), 0u);

  Model model = m.build_model();
  Counts c = op_counts(model.graph);
  EXPECT_EQ(c["RMSNormalization"], (4 + 2) * 2 + 1);
  EXPECT_EQ(c["Add"], (4 + 2) * 2 + 1 + 2 * 2);  // every norm's 1 + weight, two residuals a layer
  EXPECT_EQ(c["Cos"], 2);    // one RoPE table per layer type: their thetas differ
  EXPECT_EQ(c["Where"], 2);  // one mask per layer type
  EXPECT_EQ(c["Tanh"], 1);   // the final logit softcapping
  for (const Node& n : model.graph.nodes)
    if (n.op_type == "Attention") {
      bool found = false;
      for (const Attribute& a : n.attributes)
        if (a.name == "softcap") found = std::get<float>(a.value) == 1.5f;
      EXPECT_TRUE(found) << n.name;
    }
  expect_weights_match_parameters(model, m);
}

// Layer types that share a RoPE config share one table.
TEST(DecoderCausalLM, LayerTypesWithoutTheirOwnRopeShareOneTable) {
  DecoderSpec s = tiny_spec();
  s.sliding_window = 4;
  s.layer_types = {"sliding_attention", "full_attention"};
  Model model = DecoderCausalLM(s).build_model();
  Counts c = op_counts(model.graph);
  EXPECT_EQ(c["Cos"], 1);
  EXPECT_EQ(c["Where"], 2);
}

// --- options of the Llama relatives (olmo, olmo2/3, granite, hyperclovax, nemotron, apertus,
// hunyuan_v1_dense, nanochat, ministral3, …): transformers/models/<type>/modeling_<type>.py --------

// OlmoLayerNorm / NanoChat's L2 norm have no parameters: the op's scale is a constant of ones.
// NemotronLayerNorm1P scales by (1 + weight).
TEST_F(BlockTest, ParameterFreeAndOffsetNorms) {
  LayerNorm olmo(NormOptions{.dim = 16, .eps = 1e-5f, .dtype = DataType::FLOAT16, .elementwise_affine = false});
  olmo.set_name("input_layernorm", "l");
  RMSNorm l2(NormOptions{.dim = 16, .elementwise_affine = false});
  l2.set_name("norm", "m");
  LayerNorm nemotron(NormOptions{.dim = 16, .weight_offset_one = true, .kind = NormKind::LayerNorm});
  nemotron.set_name("ln", "");
  EXPECT_EQ(params(olmo), ParamTable{});
  EXPECT_EQ(params(l2), ParamTable{});
  EXPECT_EQ(params(nemotron), (ParamTable{{"ln.weight", "[16]"}, {"ln.bias", "[16]"}}));
  olmo.forward(op, b.input("x16", DataType::FLOAT16, {"batch", "seq", 16}));
  const Node& ln = node("LayerNormalization");
  ASSERT_EQ(ln.inputs.size(), 2u);  // no bias
  const Initializer* ones = model.graph.find_initializer(ln.inputs[1]->name);
  ASSERT_NE(ones, nullptr);
  EXPECT_EQ(ones->value->dtype, DataType::FLOAT16);
  EXPECT_EQ(shape_str(*ones->value->shape), "[16]");
  EXPECT_EQ(f16_to_f32(static_cast<uint16_t>(ones->data[30] | ones->data[31] << 8)), 1.0f);
  Value* x = input(16);
  l2.forward(op, x);
  EXPECT_EQ(weight_count(), 0);
  nemotron.forward(op, x);
  const Node& add = node("Add");
  EXPECT_EQ(add.inputs[0]->name, "ln.weight");
  EXPECT_EQ(model.graph.nodes.back().inputs[1], add.outputs[0]);
}

// ApertusMLP: up_proj -> xIELU (act_fn.alpha_p / alpha_n / beta / eps from the checkpoint) -> down_proj.
TEST_F(BlockTest, NonGatedMLPWithXIELU) {
  MLP mlp(MLPOptions{.hidden_size = 8, .intermediate_size = 20, .hidden_act = "xielu", .gated = false,
                     .up_name = "up_proj", .down_name = "down_proj"});
  mlp.set_name("mlp", "l");
  EXPECT_EQ(params(mlp), (ParamTable{{"l.mlp.act_fn.alpha_p", "[1]"}, {"l.mlp.act_fn.alpha_n", "[1]"},
                                     {"l.mlp.act_fn.beta", "[]"}, {"l.mlp.act_fn.eps", "[]"},
                                     {"l.mlp.up_proj.weight", "[8, 20]"}, {"l.mlp.down_proj.weight", "[20, 8]"}}));
  mlp.forward(op, input(8));
  Counts c = counts();
  EXPECT_EQ(c["Softplus"], 2);
  EXPECT_EQ(c["Exp"], 1);
  EXPECT_EQ(c["Min"], 1);  // expm1(min(x, eps))
  EXPECT_EQ(c["Where"], 1);
  EXPECT_EQ(weight_count(), 6);
  EXPECT_EQ(node("Where").name, "mlp.act_fn/Where_0");
  EXPECT_EQ(model.graph.nodes.back().inputs[0], node("Where").outputs[0]);  // down_proj reads it
}

// HunYuan: per-head norms named query_layernorm / key_layernorm after RoPE; Ministral 3: the
// context's query_scale multiplies the rotated q.
TEST_F(BlockTest, QkNormAfterRopeAndQueryScale) {
  AttentionOptions o = attention_options(32, 4, 2, 8, DataType::FLOAT);
  Shape cache{"batch", 2, "past", 8};
  o.qk_norm = QKNorm{.q_name = "query_layernorm", .k_name = "key_layernorm", .after_rope = true};
  Attention hunyuan(o);
  hunyuan.set_name("self_attn", "l");
  EXPECT_EQ(params(hunyuan)[4].first, "l.self_attn.query_layernorm.weight");
  AttentionContext ctx = test_context(b, 4);
  ctx.query_scale = b.input("scale", DataType::FLOAT, {"batch", 1, "seq", 1});
  hunyuan.forward(op, input(32), ctx, b.input("pk", DataType::FLOAT, cache), b.input("pv", DataType::FLOAT, cache));
  const Node* scaled_q = producer(model, node("Attention").inputs[0]);
  ASSERT_NE(scaled_q, nullptr);
  EXPECT_EQ(scaled_q->op_type, "Mul");
  EXPECT_EQ(scaled_q->inputs[1], ctx.query_scale);
  const Node* q_normed = producer(model, scaled_q->inputs[0]);
  ASSERT_NE(q_normed, nullptr);
  EXPECT_EQ(q_normed->op_type, "RMSNormalization");
  EXPECT_EQ(producer(model, q_normed->inputs[0])->op_type, "RotaryEmbedding");
}

// OLMo 2 / EXAONE 4 layers: no pre-norms, sandwich norms named post_attention_layernorm and
// post_feedforward_layernorm; Granite's multipliers and a final softcap; RoPE per layer type.
TEST(DecoderCausalLM, PostNormOnlyMultipliersSoftcapRopePerLayerType) {
  DecoderSpec s = tiny_spec();
  s.names.input_layernorm = s.names.post_attention_layernorm = "";
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  s.embed_scale = 3.0f;
  s.residual_multiplier = 0.5f;
  s.final_logit_softcapping = 2.0f;
  s.sliding_window = 4;
  s.layer_types = {"sliding_attention", "full_attention"};
  s.layer_type_rope["sliding_attention"] = s.rope;
  s.layer_type_rope["sliding_attention"].rope_theta = 500.0;
  DecoderCausalLM m(s);
  ParamTable p = params(m);
  EXPECT_EQ(p[1].first, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(p[5].first, "model.layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(p[6].first, "model.layers.0.post_feedforward_layernorm.weight");
  EXPECT_EQ(p.size(), 1u + 2 * 9 + 1 + 1);
  Model model = m.build_model();
  Counts c = op_counts(model.graph);
  EXPECT_EQ(c["RMSNormalization"], 2 * 2 + 1);
  EXPECT_EQ(c["Cos"], 2);   // one RoPE table per layer type's config
  EXPECT_EQ(c["Tanh"], 1);  // softcap
  // embed_scale, 2 residuals and 2 in silu(gate) * up per layer, position * inv_freq per RoPE
  // table, softcap
  EXPECT_EQ(c["Mul"], 1 + 2 * (2 + 2) + 2 + 1);
  expect_weights_match_parameters(model, m);
  const Node* last = producer(model, model.graph.outputs[0]);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->op_type, "Mul");
  EXPECT_EQ(producer(model, last->inputs[0])->op_type, "Tanh");
}

}  // namespace
}  // namespace mobius
