// The state model (tasks/layer_state.h, tasks/text_generation.h): a layer's state tensors become
// the graph's past_key_values.{i}.{name} inputs and present.{i}.{name} outputs, appended or
// replaced; a decoder layer holds self-attention or a state mixer (blocks/decoder.h make_mixer);
// the Mamba mixer (blocks/mamba.h) declares {conv_state, recurrent_state} and scans in
// one Scan node whose body is serialized as a graph attribute.
#include <gtest/gtest.h>

#include <set>

#include "archs/mamba.h"
#include "block_fixture.h"
#include "blocks/decoder.h"
#include "blocks/mamba2.h"
#include "blocks/short_conv.h"
#include "blocks/spec_check.h"
#include "ir/serialize.h"
#include "test_util.h"

namespace mobius {
namespace {

MambaOptions tiny_mixer() {
  return {.hidden_size = 8, .intermediate_size = 16, .state_size = 4, .conv_kernel = 4, .time_step_rank = 2,
          .dt_b_c_rms_eps = std::nullopt};
}

MambaSpec tiny_mamba(MambaOptions m = tiny_mixer()) {
  MambaSpec s{.vocab_size = 32, .hidden_size = 8, .num_hidden_layers = 2};
  s.make_mixer = [m](int64_t) { return std::make_unique<MambaMixer>(m); };
  return s;
}

TEST(StateModel, KVStateTensorsAppendAlongTheSequence) {
  const LayerState kv{.kind = StateKind::self_kv, .num_heads = 2, .head_dim = 8, .value_head_dim = 6};
  const std::vector<StateTensor> t = state_tensors(kv);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "key");
  EXPECT_EQ(shape_str(t[0].shape), "[batch_size, 2, past_sequence_length, 8]");
  EXPECT_EQ(t[1].name, "value");
  EXPECT_EQ(shape_str(t[1].shape), "[batch_size, 2, past_sequence_length, 6]");
  EXPECT_EQ(t[1].update, StateUpdate::append);
  EXPECT_EQ(t[1].axis, 2);
}

TEST(StateModel, GraphInputsAndOutputsFollowTheDeclarations) {
  Model model;
  GraphBuilder b(model.graph);
  const std::vector<LayerStates> states = {
      {{.kind = StateKind::self_kv, .num_heads = 2, .head_dim = 4}},
      {{.kind = StateKind::recurrent,
        .tensors = {{.name = "conv_state", .shape = {"batch_size", 6, 3}},
                    {.name = "recurrent_state", .shape = {"batch_size", 6, 5}, .dtype = DataType::FLOAT}}}}};
  const LayerStateValues past = past_inputs(b, DataType::FLOAT16, states);
  ASSERT_EQ(past.size(), 2u);
  ASSERT_EQ(past[1].size(), 2u);
  EXPECT_EQ(past[0][1]->name, "past_key_values.0.value");
  EXPECT_EQ(past[1][0]->name, "past_key_values.1.conv_state");
  EXPECT_EQ(past[1][0]->dtype, DataType::FLOAT16);  // the model dtype
  EXPECT_EQ(past[1][1]->dtype, DataType::FLOAT);    // its own
  Ops op(b);
  LayerStateValues present;
  for (const auto& layer : past) {
    present.emplace_back();
    for (Value* v : layer) present.back().push_back(op.Identity(v));
  }
  present_outputs(b, present, states);
  const Graph& g = model.graph;
  ASSERT_EQ(g.outputs.size(), 4u);
  EXPECT_EQ(g.outputs[0]->name, "present.0.key");
  EXPECT_EQ(shape_str(*g.outputs[0]->shape), "[batch_size, 2, total_sequence_length, 4]");
  EXPECT_EQ(g.outputs[3]->name, "present.1.recurrent_state");
  EXPECT_EQ(shape_str(*g.outputs[3]->shape), "[batch_size, 6, 5]");  // replaced: the past's shape
}

TEST(StateModel, MambaPackageIO) {
  MambaCausalLM m(tiny_mamba());
  const CacheLayout c = m.cache_layout();  // no key/value cache: onnxruntime-genai's head_size 0
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(c.num_key_value_heads, 0);
  EXPECT_EQ(c.head_dim, 0);
  Model model = m.build_model();
  const Graph& g = model.graph;
  std::vector<std::string> in, out;
  for (const Value* v : g.inputs) in.push_back(v->name + " " + shape_str(*v->shape));
  for (const Value* v : g.outputs) out.push_back(v->name + " " + shape_str(*v->shape));
  EXPECT_EQ(in, (std::vector<std::string>{
                    "input_ids [batch_size, sequence_length]", "attention_mask [batch_size, total_sequence_length]",
                    "position_ids [batch_size, sequence_length]",
                    "past_key_values.0.conv_state [batch_size, 16, 3]",
                    "past_key_values.0.recurrent_state [batch_size, 16, 4]",
                    "past_key_values.1.conv_state [batch_size, 16, 3]",
                    "past_key_values.1.recurrent_state [batch_size, 16, 4]"}));
  EXPECT_EQ(out, (std::vector<std::string>{"logits [batch_size, sequence_length, 32]",
                                           "present.0.conv_state [batch_size, 16, 3]",
                                           "present.0.recurrent_state [batch_size, 16, 4]",
                                           "present.1.conv_state [batch_size, 16, 3]",
                                           "present.1.recurrent_state [batch_size, 16, 4]"}));
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[n.op_type];
  EXPECT_EQ(ops["Scan"], 2);  // one per layer: the whole prompt in one run
  EXPECT_EQ(ops["Conv"], 2);
}

TEST(StateModel, ScanBodyIsSerializedAsAGraphAttribute) {
  MambaCausalLM m(tiny_mamba());
  Model model = m.build_model();
  std::map<std::string, ExternalLocation> ext;
  uint64_t offset = 0;
  for (const Initializer& i : model.graph.initializers)
    if (i.weight) ext[i.value->name] = {"model.onnx.data", offset++, 1};
  const onnx::ModelProto p = to_model_proto(model, ext);
  const onnx::NodeProto* scan = nullptr;
  for (const auto& n : p.graph().node())
    if (n.op_type() == "Scan" && !scan) scan = &n;  // layer 0's
  ASSERT_NE(scan, nullptr);
  EXPECT_EQ(scan->name(), "backbone.layers.0.mixer/Scan_0");
  const onnx::AttributeProto* body = nullptr;
  for (const auto& a : scan->attribute())
    if (a.name() == "body") body = &a;
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->type(), onnx::AttributeProto::GRAPH);
  EXPECT_EQ(body->g().input_size(), 4);   // h, dA_t, dBu_t, C_t
  EXPECT_EQ(body->g().output_size(), 2);  // h, y_t
  EXPECT_EQ(body->g().input(0).name(), "backbone.layers.0.mixer.scan/h");
  EXPECT_EQ(body->g().node_size(), 3);  // Mul, Add, MatMul
}

TEST(StateModel, MambaSizesAreChecked) {
  MambaOptions m = tiny_mixer();
  m.conv_kernel = 1;  // no window to carry
  EXPECT_THROW(MambaCausalLM{tiny_mamba(m)}, FieldError);
  m = tiny_mixer();
  m.state_size = 0;
  EXPECT_THROW(MambaCausalLM{tiny_mamba(m)}, FieldError);
}

// Mamba-2: the conv window spans x, B and C; the SSM state is per head; no Scan (SSD's chunked
// form: a CumSum within the chunks and one over them).
TEST(StateModel, Mamba2StatesAndOps) {
  const Mamba2Options o{.hidden_size = 8, .num_heads = 4, .head_dim = 4, .n_groups = 2, .state_size = 3,
                        .conv_kernel = 3};
  MambaSpec s{.vocab_size = 32, .hidden_size = 8, .num_hidden_layers = 1};
  s.make_mixer = [o](int64_t) { return std::make_unique<Mamba2Mixer>(o); };
  MambaCausalLM m(s);
  Model model = m.build_model();
  const Graph& g = model.graph;
  EXPECT_EQ(shape_str(*g.inputs[3]->shape), "[batch_size, 28, 2]");    // 16 + 2 * 2 * 3 channels, kernel - 1
  EXPECT_EQ(shape_str(*g.inputs[4]->shape), "[batch_size, 4, 4, 3]");  // heads, head_dim, state_size
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes) ++ops[n.op_type];
  EXPECT_EQ(ops["Scan"], 0);
  EXPECT_EQ(ops["CumSum"], 2);
  EXPECT_EQ(ops["Gather"], 3);  // the embedding, B and C to heads (2 groups of 4 heads)
  Mamba2Options bad = o;
  bad.n_groups = 3;  // does not divide num_heads
  s.make_mixer = [bad](int64_t) { return std::make_unique<Mamba2Mixer>(bad); };
  EXPECT_THROW(MambaCausalLM{s}, FieldError);
}

// A hybrid decoder: layer 1's token mixer is a Mamba-2 mixer under the name make_mixer gives it
// (Bamba's "mamba"); layer 0 stays self-attention with its KV cache and mask, layer 1 carries
// {conv_state, recurrent_state} and reads the token mask.
TEST(StateModel, DecoderLayerHoldsAnyTokenMixer) {
  DecoderSpec s;
  s.vocab_size = 32;
  s.hidden_size = 8;
  s.num_hidden_layers = 2;
  s.layer_types = {"full_attention", "mamba"};
  s.attention.hidden_size = 8;
  s.attention.num_attention_heads = 2;
  s.attention.num_key_value_heads = 1;
  s.attention.head_dim = 4;
  s.mlp = {.hidden_size = 8, .intermediate_size = 12};
  s.rope.head_dim = 4;
  s.rope.max_position_embeddings = 64;
  const Mamba2Options o{.hidden_size = 8, .num_heads = 4, .head_dim = 4, .n_groups = 1, .state_size = 3,
                        .conv_kernel = 3};
  s.make_mixer = [o](int64_t layer) {
    return layer == 1 ? LayerMixer{"mamba", std::make_unique<Mamba2Mixer>(o)} : LayerMixer{};
  };
  DecoderCausalLM m(s);
  std::set<std::string> names;
  for (const auto& [name, shape] : test::params(m)) names.insert(name);
  EXPECT_TRUE(names.count("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_TRUE(names.count("model.layers.1.mamba.in_proj.weight"));
  EXPECT_FALSE(names.count("model.layers.1.self_attn.q_proj.weight"));
  Model model = m.build_model();
  std::vector<std::string> in, out;
  for (const Value* v : model.graph.inputs) in.push_back(v->name + " " + shape_str(*v->shape));
  for (const Value* v : model.graph.outputs) out.push_back(v->name + " " + shape_str(*v->shape));
  EXPECT_EQ(in, (std::vector<std::string>{
                    "input_ids [batch_size, sequence_length]", "attention_mask [batch_size, total_sequence_length]",
                    "position_ids [batch_size, sequence_length]",
                    "past_key_values.0.key [batch_size, 1, past_sequence_length, 4]",
                    "past_key_values.0.value [batch_size, 1, past_sequence_length, 4]",
                    "past_key_values.1.conv_state [batch_size, 22, 2]",  // 16 + 2 * 1 * 3, kernel - 1
                    "past_key_values.1.recurrent_state [batch_size, 4, 4, 3]"}));
  EXPECT_EQ(out, (std::vector<std::string>{"logits [batch_size, sequence_length, 32]",
                                           "present.0.key [batch_size, 1, total_sequence_length, 4]",
                                           "present.0.value [batch_size, 1, total_sequence_length, 4]",
                                           "present.1.conv_state [batch_size, 22, 2]",
                                           "present.1.recurrent_state [batch_size, 4, 4, 3]"}));
}

// LFM2's short convolution (blocks/short_conv.h) as a layer's token mixer: one replaced state,
// {conv_state [batch, hidden, kernel - 1]}, and its module names under "conv".
TEST(StateModel, ShortConvCarriesItsConvWindowOnly) {
  DecoderSpec s;
  s.vocab_size = 32;
  s.hidden_size = 8;
  s.num_hidden_layers = 2;
  s.layer_types = {"conv", "full_attention"};
  s.attention.hidden_size = 8;
  s.attention.num_attention_heads = 2;
  s.attention.num_key_value_heads = 1;
  s.attention.head_dim = 4;
  s.mlp = {.hidden_size = 8, .intermediate_size = 12};
  s.rope.head_dim = 4;
  s.rope.max_position_embeddings = 64;
  const ShortConvOptions o{.hidden_size = 8, .kernel = 3, .bias = true};
  s.make_mixer = [o](int64_t layer) {
    return layer == 0 ? LayerMixer{"conv", std::make_unique<ShortConvMixer>(o)} : LayerMixer{};
  };
  DecoderCausalLM m(s);
  std::set<std::string> names;
  for (const auto& [name, shape] : test::params(m)) names.insert(name);
  for (const char* n : {"model.layers.0.conv.in_proj.weight", "model.layers.0.conv.in_proj.bias",
                        "model.layers.0.conv.conv.weight", "model.layers.0.conv.conv.bias",
                        "model.layers.0.conv.out_proj.bias"})
    EXPECT_TRUE(names.count(n)) << n;
  const std::vector<LayerStates> states = m.layer_states();
  EXPECT_TRUE(is_genai_conv(states[0]));
  EXPECT_FALSE(is_genai_recurrent(states[0]));
  EXPECT_FALSE(is_genai_conv(states[1]));
  const CacheLayout c = m.cache_layout();  // the attention layer's cache only
  EXPECT_EQ(c.num_key_value_heads, 1);
  EXPECT_EQ(c.head_dim, 4);
  Model model = m.build_model();
  std::vector<std::string> in;
  for (const Value* v : model.graph.inputs) in.push_back(v->name + " " + shape_str(*v->shape));
  EXPECT_EQ(in[3], "past_key_values.0.conv_state [batch_size, 8, 2]");
  EXPECT_EQ(in[4], "past_key_values.1.key [batch_size, 1, past_sequence_length, 4]");
  EXPECT_THROW(ShortConvMixer(ShortConvOptions{.hidden_size = 8, .kernel = 1}), FieldError);
}

}  // namespace
}  // namespace mobius
