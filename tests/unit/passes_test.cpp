// Execution-provider lowering (passes/passes.h): which patterns each pass rewrites, the node
// signatures it emits (contrib op schemas of onnxruntime 1.31: GroupQueryAttention,
// SkipSimplifiedLayerNormalization), and the packed weights' bytes at write time.
#include <cmath>
#include <cstring>

#include "blocks/decoder.h"
#include "blocks/moe.h"
#include "builder/ops.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"
#include "test_util.h"
#include "util/float16.h"
#include "weights/quantize.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

using test::op_counts;

DecoderSpec llama_spec(const std::string& rope_type = "default") {
  DecoderSpec s;
  s.vocab_size = 64;
  s.hidden_size = 64;
  s.num_hidden_layers = 2;
  s.layer_types = {"full_attention", "full_attention"};
  s.attention.hidden_size = 64;
  s.attention.num_attention_heads = 4;
  s.attention.num_key_value_heads = 2;
  s.attention.head_dim = 16;
  s.mlp = {.hidden_size = 64, .intermediate_size = 48};
  s.rope.head_dim = 16;
  s.rope.max_position_embeddings = 128;
  s.rope.rope_type = rope_type;
  s.rope.factor = 2.0;
  return s;
}

Model lowered(const DecoderSpec& s, ExecutionProvider ep, std::vector<PassReport>* report = nullptr) {
  Model m = DecoderCausalLM(s).build_model();
  const PassContext ctx{.ep = ep, .max_sequence_length = 96};
  auto r = Pipeline::for_context(ctx).run(m, ctx);
  if (report) *report = r;
  return m;
}

const Node& only(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes)
    if (n.op_type == op) found = &n;
  EXPECT_NE(found, nullptr) << op;
  return *found;
}

std::map<std::string, Attribute> attrs(const Node& n) {
  std::map<std::string, Attribute> out;
  for (const Attribute& a : n.attributes) out.emplace(a.name, a);
  return out;
}

std::vector<std::string> input_names(const Graph& g) {
  std::vector<std::string> out;
  for (const Value* v : g.inputs) out.push_back(v->name);
  return out;
}

std::vector<float> floats_of(const Initializer& init) {
  std::vector<float> v(init.data.size() / 4);
  std::memcpy(v.data(), init.data.data(), init.data.size());
  return v;
}

TEST(ExecutionProvider, ParsesTheCliNames) {
  for (const char* n : {"default", "onnx-standard", "cpu", "cuda", "dml", "webgpu"})
    EXPECT_EQ(to_string(parse_execution_provider(n)), n);
  test::expect_error([] { parse_execution_provider("tensorrt"); }, {"'tensorrt'", "onnx-standard"});
}

TEST(CpuLowering, LlamaBecomesGroupQueryAttentionAndSkipNorms) {
  std::vector<PassReport> report;
  Model m = lowered(llama_spec(), ExecutionProvider::cpu, &report);
  const Graph& g = m.graph;
  auto c = op_counts(g);
  EXPECT_EQ(c["GroupQueryAttention"], 2);
  EXPECT_EQ(c["Attention"], 0);
  EXPECT_EQ(c["RotaryEmbedding"], 0);
  EXPECT_EQ(c["Cos"], 0);  // the in-graph table is gone with position_ids
  // layer 0's input norm reads the embeddings (no residual add); the other 4 follow an Add
  EXPECT_EQ(c["SkipSimplifiedLayerNormalization"], 4);
  EXPECT_EQ(c["RMSNormalization"], 1);
  EXPECT_EQ(c["MatMul"], 4 * 2 + 1);  // qkv, o, gate_up, down per layer; lm_head
  EXPECT_EQ(c["Split"], 2);  // gate/up; GroupQueryAttention reads the packed q/k/v whole
  ASSERT_EQ(report.size(), 5u);
  EXPECT_EQ(report[0].pass, "pack_matmuls");
  EXPECT_EQ(report[0].rewrites, 4);
  EXPECT_EQ(report[1].rewrites, 2);
  EXPECT_EQ(report[2].rewrites, 4);
  EXPECT_EQ(report[3].pass, "mixture_of_experts");
  EXPECT_EQ(report[3].rewrites, 0);  // no experts
  EXPECT_EQ(report[4].pass, "tied_lm_head");
  EXPECT_EQ(report[4].rewrites, 0);  // an untied lm_head is a plain MatMul already
  EXPECT_EQ(input_names(g), (std::vector<std::string>{"input_ids", "attention_mask", "past_key_values.0.key",
                                                      "past_key_values.0.value", "past_key_values.1.key",
                                                      "past_key_values.1.value"}));
  bool imported = false;
  for (const auto& o : m.opsets) imported |= o.domain == "com.microsoft" && o.version == 1;
  EXPECT_TRUE(imported);
  EXPECT_TRUE(caches_only_in_group_query_attention(g));
  EXPECT_FALSE(caches_only_in_group_query_attention(DecoderCausalLM(llama_spec()).build_model().graph));
}

DecoderSpec moe_spec(const std::string& act, bool norm_topk_prob = true) {
  DecoderSpec s = llama_spec();
  MoEOptions m{.hidden_size = 64, .intermediate_size = 32, .hidden_act = act};
  m.router.num_experts = 4;
  m.router.top_k = 2;
  m.router.norm_topk_prob = norm_topk_prob;
  s.make_feed_forward = sparse_moe(m, s.mlp);
  return s;
}

Model lowered_quantized(const DecoderSpec& s, const QuantizeOptions& q) {
  Model m = DecoderCausalLM(s).build_model();
  const PassContext ctx{.ep = ExecutionProvider::cpu, .max_sequence_length = 96, .quantize = q};
  Pipeline::for_context(ctx).run(m, ctx);
  return m;
}

const Initializer& initializer(const Graph& g, const std::string& name) {
  for (const Initializer& i : g.initializers)
    if (i.value->name == name) return i;
  ADD_FAILURE() << name;
  return g.initializers.front();
}

// The dense sparse-MoE (blocks/moe.h) of a softmax top-k router and SiLU-gated per-expert weights
// becomes com.microsoft MoE under --ep cpu, its fc1 the gate / up rows interleaved from the stacked
// weights; experts with another activation stay canonical, and so does every ep but cpu.
TEST(CpuLowering, SparseMoEBecomesTheMoEOp) {
  std::vector<PassReport> report;
  const Model m = lowered(moe_spec("silu"), ExecutionProvider::cpu, &report);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["MoE"], 2);
  EXPECT_EQ(c["TopK"], 0);
  EXPECT_EQ(c["ScatterElements"], 0);
  EXPECT_EQ(report[3].pass, "mixture_of_experts");
  EXPECT_EQ(report[3].rewrites, 2);
  const Node& moe = only(m.graph, "MoE");
  EXPECT_EQ(moe.domain, "com.microsoft");
  ASSERT_EQ(moe.inputs.size(), 5u);
  EXPECT_EQ(moe.inputs[3], nullptr);  // no fc1 bias
  auto a = attrs(moe);
  EXPECT_EQ(std::get<int64_t>(a.at("k").value), 2);
  EXPECT_EQ(std::get<int64_t>(a.at("normalize_routing_weights").value), 1);
  EXPECT_EQ(std::get<std::string>(a.at("activation_type").value), "swiglu");
  EXPECT_EQ(std::get<int64_t>(a.at("swiglu_fusion").value), 1);
  EXPECT_EQ(std::get<float>(a.at("activation_alpha").value), 1.0f);
  EXPECT_EQ(std::get<float>(a.at("activation_beta").value), 0.0f);
  EXPECT_EQ(op_counts(lowered(moe_spec("gelu"), ExecutionProvider::cpu).graph)["MoE"], 0);
  for (ExecutionProvider ep : {ExecutionProvider::cuda, ExecutionProvider::onnx_standard, ExecutionProvider::default_})
    EXPECT_EQ(op_counts(lowered(moe_spec("silu"), ep).graph)["MoE"], 0);
}

std::vector<int64_t> dims(const Initializer& i) {
  std::vector<int64_t> out;
  for (const Dim& d : *i.value->shape) out.push_back(d.value);
  return out;
}

// Under 4-bit quantization the sparse MoE becomes com.microsoft QMoE (passes/mixture_of_experts.cpp):
// inputs fc1, fc1_scales, fc2, fc2_scales (asymmetric: and zero points as inputs 11, 12; without
// renormalization the router's softmax as router_weights, input 14) stacked
// from each expert's block-quantized matrices; attributes as the float MoE's plus the scheme and
// MatMulNBits' accuracy level. What QMoE cannot take keeps the float MoE: a block size not dividing
// the intermediate size, 8 bits, --precision keep.
TEST(CpuLowering, QuantizedSparseMoEBecomesQMoE) {
  QuantizeOptions q;
  q.scheme = {4, 32, true};
  q.accuracy_level = 4;
  const Model m = lowered_quantized(moe_spec("silu"), q);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["QMoE"], 2);
  EXPECT_EQ(c["MoE"], 0);
  EXPECT_EQ(c["TopK"], 0);
  const Node& qmoe = only(m.graph, "QMoE");
  EXPECT_EQ(qmoe.domain, "com.microsoft");
  ASSERT_EQ(qmoe.inputs.size(), 7u);
  EXPECT_EQ(qmoe.inputs[4], nullptr);  // no fc1 bias
  EXPECT_EQ(qmoe.inputs[2]->dtype, DataType::UINT8);
  EXPECT_EQ(qmoe.inputs[3]->dtype, DataType::FLOAT);
  auto a = attrs(qmoe);
  EXPECT_EQ(std::get<int64_t>(a.at("expert_weight_bits").value), 4);
  EXPECT_EQ(std::get<int64_t>(a.at("block_size").value), 32);
  EXPECT_EQ(std::get<int64_t>(a.at("accuracy_level").value), 4);
  EXPECT_EQ(std::get<int64_t>(a.at("k").value), 2);
  EXPECT_EQ(std::get<std::string>(a.at("activation_type").value), "swiglu");
  EXPECT_EQ(std::get<int64_t>(a.at("swiglu_fusion").value), 1);
  for (const Initializer& i : m.graph.initializers)  // no float expert left
    if (i.value->name.find(".experts.") != std::string::npos) EXPECT_EQ(quantize_of(i.weight->transforms) != nullptr, true) << i.value->name;
  // expert 0 of the last layer: gate over up [2I, H] in blocks of 32 along H
  const std::string e0 = GraphEditor::scope_of(qmoe) + ".experts.0";
  EXPECT_EQ(dims(initializer(m.graph, e0 + ".gate_up_Q4")), (std::vector<int64_t>{64, 2, 16}));
  EXPECT_EQ(dims(initializer(m.graph, e0 + ".gate_up_scales")), (std::vector<int64_t>{64, 2}));
  EXPECT_EQ(dims(initializer(m.graph, e0 + ".down_Q4")), (std::vector<int64_t>{64, 1, 16}));

  q.scheme.symmetric = false;
  q.accuracy_level = 0;
  const Model asym = lowered_quantized(moe_spec("silu"), q);
  const Node& qa = only(asym.graph, "QMoE");
  ASSERT_EQ(qa.inputs.size(), 13u);
  for (size_t i : {4, 7, 8, 9, 10}) EXPECT_EQ(qa.inputs[i], nullptr) << i;
  EXPECT_EQ(qa.inputs[11]->dtype, DataType::UINT8);
  EXPECT_EQ(qa.inputs[12]->dtype, DataType::UINT8);
  EXPECT_EQ(attrs(qa).count("accuracy_level"), 0u);
  EXPECT_EQ(dims(initializer(asym.graph, e0 + ".gate_up_zero_points")), (std::vector<int64_t>{64, 1}));

  // without renormalization: router_weights (input 14) = the router's Softmax, which the kernel
  // weighs the experts with as they are
  const Model plain = lowered_quantized(moe_spec("silu", false), q);
  const Node& qp = only(plain.graph, "QMoE");
  ASSERT_EQ(qp.inputs.size(), 15u);
  EXPECT_EQ(qp.inputs[13], nullptr);
  EXPECT_EQ(std::get<int64_t>(attrs(qp).at("normalize_routing_weights").value), 0);
  const Node* softmax = nullptr;
  for (const Node& n : plain.graph.nodes)
    if (n.outputs[0] == qp.inputs[14]) softmax = &n;
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->op_type, "Softmax");
  EXPECT_EQ(softmax->inputs[0], qp.inputs[1]);

  QuantizeOptions block64 = q, bits8 = q, keep = q;
  block64.scheme.block_size = 64;  // does not divide I = 32
  bits8.scheme.bits = 8;
  keep.stored = [](const WeightRef&) { return std::optional<BlockQuantization>{BlockQuantization{4, 32, true}}; };
  for (const QuantizeOptions& o : {block64, bits8, keep}) {
    auto n = op_counts(lowered_quantized(moe_spec("silu"), o).graph);
    EXPECT_EQ(n["MoE"], 2);
    EXPECT_EQ(n["QMoE"], 0);
  }
}

// QMoE's fc1 bytes of one expert, as the writer produces them from the checkpoint and the graph
// interleaves them (Transpose [0, 2, 1, 3] of [E, 2, I, ·]): the block quantization
// (weights/quantize.h) of the interleaved [2I, H] (row 2j gate_proj's row j, row 2j + 1 up_proj's),
// row by row, for each part; fc2's that of down_proj [H, I].
TEST(CpuLowering, QMoEExpertBytesAreTheInterleavedMatrixQuantized) {
  QuantizeOptions q;
  q.scheme = {4, 32, false};
  const Model m = lowered_quantized(moe_spec("silu"), q);
  const Node& qmoe = only(m.graph, "QMoE");
  const std::string e0 = GraphEditor::scope_of(qmoe) + ".experts.0";
  for (size_t input : {2, 3, 11}) {  // fc1, fc1_scales, fc1_zero_points: Reshape(Transpose(Concat))
    const Node* reshape = nullptr;
    const Node* transpose = nullptr;
    for (const Node& n : m.graph.nodes)
      if (n.outputs[0] == qmoe.inputs[input]) reshape = &n;
    ASSERT_NE(reshape, nullptr);
    for (const Node& n : m.graph.nodes)
      if (n.outputs[0] == reshape->inputs[0]) transpose = &n;
    ASSERT_NE(transpose, nullptr);
    EXPECT_EQ(transpose->op_type, "Transpose");
    EXPECT_EQ(std::get<std::vector<int64_t>>(attrs(*transpose).at("perm").value), (std::vector<int64_t>{0, 2, 1, 3}));
  }
  const WeightRef& ref = *initializer(m.graph, e0 + ".gate_up_Q4").weight;
  ASSERT_FALSE(ref.transforms.empty());
  const Concat* cat = std::get_if<Concat>(&ref.transforms[0]);
  ASSERT_NE(cat, nullptr);
  const std::string gate_key = ref.source_key, up_key = cat->keys.at(0);
  const std::string down_key = initializer(m.graph, e0 + ".down_Q4").weight->source_key;
  const int64_t H = 64, I = 32;
  std::vector<float> gate(I * H), up(I * H), down(H * I);
  for (size_t i = 0; i < gate.size(); ++i) {
    gate[i] = std::cos(0.37f * i) * 0.5f + 0.1f;
    up[i] = std::sin(0.11f * i) - 0.2f;
    down[i] = std::cos(0.07f * i + 1.0f);
  }
  test::TempDir dir;
  test::SafetensorsWriter().f32(gate_key, {I, H}, gate).f32(up_key, {I, H}, up).f32(down_key, {H, I}, down)
      .write(dir.path / "model.safetensors");
  SafetensorsCheckpoint ckpt(dir.str());
  std::vector<float> interleaved;
  for (int64_t j = 0; j < I; ++j) {
    interleaved.insert(interleaved.end(), gate.begin() + j * H, gate.begin() + (j + 1) * H);
    interleaved.insert(interleaved.end(), up.begin() + j * H, up.begin() + (j + 1) * H);
  }
  for (const char* part : {"_Q4", "_scales", "_zero_points"})
    for (const auto& [name, src, rows, k] : {std::tuple{".gate_up", &interleaved, 2 * I, H}, std::tuple{".down", &down, H, I}}) {
      const Initializer& init = initializer(m.graph, e0 + name + part);
      Graph g;
      GraphBuilder b(g);
      b.weight(init.value->name, init.value->dtype, *init.value->shape, *init.weight);
      WeightPlan plan = WeightPlan::bind(g, ckpt);
      ASSERT_EQ(plan.bindings().size(), 1u);
      const WeightBinding& wb = plan.bindings()[0];
      ASSERT_EQ(wb.rows(), rows);
      std::vector<uint8_t> written(init.nbytes()), got(init.nbytes()), want(init.nbytes());
      wb.produce(0, wb.rows(), written);
      const size_t row_bytes = init.nbytes() / static_cast<size_t>(rows);
      for (int64_t r = 0; r < rows; ++r) {  // fc1: the graph's row 2j + h is the written row h * I + j
        const int64_t from = name == std::string(".gate_up") ? (r % 2) * I + r / 2 : r;
        std::copy_n(written.begin() + static_cast<std::ptrdiff_t>(from * row_bytes), row_bytes,
                    got.begin() + static_cast<std::ptrdiff_t>(r * row_bytes));
      }
      const std::string p = part;
      block_quantize_rows(src->data(), rows, k, q.scheme, DataType::FLOAT, p == "_Q4" ? want.data() : nullptr,
                          p == "_scales" ? want.data() : nullptr, p == "_zero_points" ? want.data() : nullptr);
      EXPECT_EQ(got, want) << name << part;
    }
}

// Passes read what blocks know (ir.h NodeTags): the LM head block tags its product, the attention
// block its head counts; a node without the tags is left alone however it looks.
TEST(CpuLowering, PassesReadTheBlocksTags) {
  const Model canonical = DecoderCausalLM(llama_spec()).build_model();
  int heads = 0, attention = 0;
  for (const Node& n : canonical.graph.nodes) {
    heads += n.tags.lm_head;
    if (n.op_type == "Attention") {
      ++attention;
      EXPECT_EQ(n.tags.num_heads, 4);
      EXPECT_EQ(n.tags.kv_num_heads, 2);
      EXPECT_EQ(n.tags.head_size, 16);
    }
  }
  EXPECT_EQ(heads, 1);
  EXPECT_EQ(attention, 2);

  Model untagged = DecoderCausalLM(llama_spec()).build_model();
  for (Node& n : untagged.graph.nodes) n.tags = {};
  const PassContext ctx{.ep = ExecutionProvider::cpu, .max_sequence_length = 96};
  Pipeline::for_context(ctx).run(untagged, ctx);
  EXPECT_EQ(op_counts(untagged.graph)["GroupQueryAttention"], 0);
  EXPECT_EQ(op_counts(untagged.graph)["Attention"], 2);

  // int4 without the LM head: the tagged product stays a float MatMul, the untagged one is quantized
  const PassContext q{.ep = ExecutionProvider::cpu, .max_sequence_length = 96,
                      .quantize = QuantizeOptions{.scheme = {.bits = 4, .block_size = 32}}};
  Model tagged = DecoderCausalLM(llama_spec()).build_model();
  Pipeline::for_context(q).run(tagged, q);
  Model plain = DecoderCausalLM(llama_spec()).build_model();
  for (Node& n : plain.graph.nodes) n.tags.lm_head = false;
  Pipeline::for_context(q).run(plain, q);
  EXPECT_EQ(op_counts(tagged.graph)["MatMul"], 1);
  EXPECT_EQ(op_counts(plain.graph)["MatMul"], 0);
}

TEST(CpuLowering, TiedLmHeadBecomesMatMulByTheTransposedEmbedding) {
  DecoderSpec s = llama_spec();
  s.tie_word_embeddings = true;
  const Model canonical = DecoderCausalLM(s).build_model();
  ASSERT_EQ(op_counts(canonical.graph)["Gemm"], 1);
  Model m = lowered(s, ExecutionProvider::cpu);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["Gemm"], 0);
  EXPECT_EQ(c["Reshape"], 0);  // neither the flattening nor the copy into the logits output
  const Node& t = only(m.graph, "Transpose");
  EXPECT_EQ(t.inputs[0]->name, "model.embed_tokens.weight");  // still the embedding's matrix
  EXPECT_EQ(std::get<std::vector<int64_t>>(attrs(t).at("perm").value), (std::vector<int64_t>{1, 0}));
  const Node* head = nullptr;
  for (const Node& n : m.graph.nodes)
    if (n.outputs[0]->name == "logits") head = &n;
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->op_type, "MatMul");
  EXPECT_EQ(head->domain, "");
  EXPECT_EQ(head->inputs[1], t.outputs[0]);
  EXPECT_EQ(head->inputs[0]->name, "model.norm/RMSNormalization_0/output_0");  // [batch, seq, hidden]
  // other providers keep the Gemm
  EXPECT_EQ(op_counts(lowered(s, ExecutionProvider::cuda).graph)["Gemm"], 1);
}

TEST(CpuLowering, QuantizedTiedLmHeadReadsTheActivationsAsTheyAre) {
  DecoderSpec s = llama_spec();
  s.tie_word_embeddings = true;
  Model m = DecoderCausalLM(s).build_model();
  const PassContext ctx{.ep = ExecutionProvider::cpu, .max_sequence_length = 96,
                        .quantize = QuantizeOptions{.lm_head = true}};
  auto report = Pipeline::for_context(ctx).run(m, ctx);
  ASSERT_EQ(report.back().pass, "tied_lm_head");  // after matmul_nbits, which quantized the Gemm
  EXPECT_EQ(report.back().rewrites, 1);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["Gemm"], 0);
  EXPECT_EQ(c["Transpose"], 0);  // the quantized W is [N, K] already
  EXPECT_EQ(c["Reshape"], 0);
  const Node* head = nullptr;
  for (const Node& n : m.graph.nodes)
    if (n.op_type == "MatMulNBits" && n.outputs[0]->name == "logits") head = &n;
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->inputs[0]->name, "model.norm/RMSNormalization_0/output_0");  // [batch, seq, hidden]
  EXPECT_EQ(std::get<int64_t>(attrs(*head).at("N").value), 64);  // vocab
}

TEST(CpuLowering, GroupQueryAttentionSignature) {
  Model m = lowered(llama_spec(), ExecutionProvider::cpu);
  const Graph& g = m.graph;
  const Node& gqa = only(g, "GroupQueryAttention");
  EXPECT_EQ(gqa.domain, "com.microsoft");
  ASSERT_EQ(gqa.inputs.size(), 11u);  // query key value past_key past_value seqlens_k
                                      // total_sequence_length cos_cache sin_cache position_ids attention_bias
  // the packed q/k/v projection as the query, key and value omitted
  const Node* mm = nullptr;
  for (const Node& n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == gqa.inputs[0]) mm = &n;
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->op_type, "MatMul");
  EXPECT_EQ(mm->inputs[1]->name, "model.layers.1.self_attn.q_proj_k_proj_v_proj.weight");
  EXPECT_EQ(gqa.inputs[1], nullptr);
  EXPECT_EQ(gqa.inputs[2], nullptr);
  EXPECT_EQ(gqa.inputs[3]->name, "past_key_values.1.key");
  EXPECT_EQ(gqa.inputs[4]->name, "past_key_values.1.value");
  EXPECT_EQ(gqa.inputs[5]->name, "seqlens_k");
  EXPECT_EQ(gqa.inputs[5]->dtype, DataType::INT32);
  EXPECT_EQ(gqa.inputs[6]->name, "total_sequence_length");
  EXPECT_EQ(gqa.inputs[6]->dtype, DataType::INT32);
  EXPECT_EQ(gqa.inputs[9], nullptr);
  EXPECT_NE(gqa.inputs[10], nullptr);  // the causal + padding mask
  ASSERT_EQ(gqa.outputs.size(), 3u);
  EXPECT_EQ(gqa.outputs[1]->name, "present.1.key");
  EXPECT_EQ(gqa.outputs[2]->name, "present.1.value");
  auto a = attrs(gqa);
  EXPECT_EQ(std::get<int64_t>(a.at("num_heads").value), 4);
  EXPECT_EQ(std::get<int64_t>(a.at("kv_num_heads").value), 2);
  EXPECT_EQ(std::get<int64_t>(a.at("do_rotary").value), 1);
  EXPECT_FLOAT_EQ(std::get<float>(a.at("scale").value), 0.25f);  // 1 / sqrt(head_dim)
  EXPECT_EQ(a.count("causal"), 0u);  // default 1: the mask is the decoder's causal mask
  EXPECT_EQ(a.count("rotary_interleaved"), 0u);

  // cos/sin caches [max_sequence_length, head_dim / 2]: cos(p * theta^(-2i / d)), RoFormer eq. 34
  const Initializer* cos = g.find_initializer(gqa.inputs[7]->name);
  const Initializer* sin = g.find_initializer(gqa.inputs[8]->name);
  ASSERT_TRUE(cos && sin);
  EXPECT_EQ(shape_str(*cos->value->shape), "[96, 8]");
  std::vector<float> cv = floats_of(*cos), sv = floats_of(*sin);
  for (int p : {0, 1, 17, 95})
    for (int i = 0; i < 8; ++i) {
      const double angle = p * std::pow(10000.0, -2.0 * i / 16.0);
      EXPECT_NEAR(cv[p * 8 + i], std::cos(angle), 2e-5) << p << "," << i;
      EXPECT_NEAR(sv[p * 8 + i], std::sin(angle), 2e-5) << p << "," << i;
    }
  // one table for every layer
  for (const Node& n : g.nodes) {
    if (n.op_type == "GroupQueryAttention") {
      EXPECT_EQ(n.inputs[7], gqa.inputs[7]);
    }
  }
}

TEST(CpuLowering, PackedProjectionWeights) {
  Model m = lowered(llama_spec(), ExecutionProvider::cpu);
  const Initializer* qkv = m.graph.find_initializer("model.layers.0.self_attn.q_proj_k_proj_v_proj.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(shape_str(*qkv->value->shape), "[64, 128]");  // [hidden, q 64 + k 32 + v 32]
  ASSERT_TRUE(qkv->weight);
  EXPECT_EQ(qkv->weight->source_key, "model.layers.0.self_attn.q_proj.weight");
  // the projections' own transforms, the packed parts appended along the outputs
  EXPECT_EQ(to_string(qkv->weight->transforms),
            "transpose, concat(model.layers.0.self_attn.k_proj.weight, model.layers.0.self_attn.v_proj.weight; axis -1), "
            "cast(" + dtype_name(qkv->value->dtype) + ")");
  EXPECT_EQ(m.graph.find_initializer("model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_NE(m.graph.find_initializer("model.layers.1.mlp.gate_proj_up_proj.weight"), nullptr);
}

TEST(DmlLowering, RotaryStaysOutsideAttention) {
  Model m = lowered(llama_spec(), ExecutionProvider::dml);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["GroupQueryAttention"], 2);
  EXPECT_EQ(c["RotaryEmbedding"], 4);
  auto a = attrs(only(m.graph, "GroupQueryAttention"));
  EXPECT_EQ(a.count("do_rotary"), 0u);
  const Node& gqa = only(m.graph, "GroupQueryAttention");
  EXPECT_EQ(gqa.inputs[7], nullptr);
  EXPECT_NE(gqa.inputs[1], nullptr);  // rotated outside: q, k, v separately
  EXPECT_EQ(input_names(m.graph)[2], "position_ids");
}

TEST(CpuLowering, DynamicRopeKeepsRotaryOutside) {
  // dynamic NTK picks its frequencies from max(position_ids): no static cos/sin table
  Model m = lowered(llama_spec("dynamic"), ExecutionProvider::cpu);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["GroupQueryAttention"], 2);
  EXPECT_EQ(c["RotaryEmbedding"], 4);
  EXPECT_EQ(attrs(only(m.graph, "GroupQueryAttention")).count("do_rotary"), 0u);
}

TEST(CpuLowering, LinearRopeTableIsScaled) {
  Model m = lowered(llama_spec("linear"), ExecutionProvider::cpu);
  const Node& gqa = only(m.graph, "GroupQueryAttention");
  std::vector<float> cv = floats_of(*m.graph.find_initializer(gqa.inputs[7]->name));
  const double angle = 50 * std::pow(10000.0, -2.0 * 1 / 16.0) / 2.0;  // factor 2
  EXPECT_NEAR(cv[50 * 8 + 1], std::cos(angle), 2e-5);
}

TEST(CpuLowering, PartialRotaryInsideOnlyFromEightFrequencies) {
  // onnxruntime's kernel wants cos_cache [max, n] with n a multiple of 8 and <= head_size / 2
  DecoderSpec s = llama_spec();
  s.rope.partial_rotary_factor = 0.5;  // 4 frequencies of head_dim 16: rotated outside
  Model m = lowered(s, ExecutionProvider::cpu);
  EXPECT_EQ(op_counts(m.graph)["RotaryEmbedding"], 4);
  EXPECT_EQ(attrs(only(m.graph, "GroupQueryAttention")).count("do_rotary"), 0u);
  s.attention.head_dim = s.rope.head_dim = 32;  // 8 of 16: inside
  s.attention.num_attention_heads = 2;
  s.attention.num_key_value_heads = 1;
  m = lowered(s, ExecutionProvider::cpu);
  EXPECT_EQ(op_counts(m.graph)["RotaryEmbedding"], 0);
  const Node& gqa = only(m.graph, "GroupQueryAttention");
  EXPECT_EQ(std::get<int64_t>(attrs(gqa).at("do_rotary").value), 1);
  EXPECT_EQ(shape_str(*gqa.inputs[7]->shape), "[96, 8]");
}

TEST(StandardLowering, NoCustomDomainOps) {
  for (ExecutionProvider ep : {ExecutionProvider::default_, ExecutionProvider::onnx_standard}) {
    Model m = lowered(llama_spec(), ep);
    for (const Node& n : m.graph.nodes) EXPECT_EQ(n.domain, "") << to_string(ep) << " " << n.op_type;
    EXPECT_EQ(m.opsets.size(), 1u);
  }
  Model canonical = DecoderCausalLM(llama_spec()).build_model();
  Model by_default = lowered(llama_spec(), ExecutionProvider::default_);
  EXPECT_EQ(by_default.graph.nodes.size(), canonical.graph.nodes.size());
  EXPECT_EQ(input_names(by_default.graph), input_names(canonical.graph));  // nothing dropped
  EXPECT_EQ(op_counts(lowered(llama_spec(), ExecutionProvider::onnx_standard).graph)["MatMul"], 9);
}

TEST(CpuLowering, BFloat16AttentionStaysCanonical) {
  // onnxruntime's CPU GroupQueryAttention has float and float16 kernels only
  DecoderSpec s = llama_spec();
  s.dtype = s.attention.dtype = s.mlp.dtype = DataType::BFLOAT16;
  Model m = lowered(s, ExecutionProvider::cpu);
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["GroupQueryAttention"], 0);
  EXPECT_EQ(c["Attention"], 2);
  EXPECT_EQ(c["SkipSimplifiedLayerNormalization"], 4);  // it has a bfloat16 kernel
  EXPECT_FALSE(caches_only_in_group_query_attention(m.graph));
}

// SkipSimplifiedLayerNormalization: only an Add of two activations of one shape.
TEST(SkipSimplifiedLayerNorm, FusesActivationAddsOnly) {
  Model m;
  GraphBuilder b(m.graph);
  Ops op(b);
  Value* x = b.input("x", DataType::FLOAT, {"batch", 4, 8});
  Value* y = b.input("y", DataType::FLOAT, {"batch", 4, 8});
  Value* gamma = b.weight("norm.weight", DataType::FLOAT, {8}, {"norm.weight"});
  Value* bias = b.weight("bias", DataType::FLOAT, {8}, {"bias"});
  Value* s = op.Add(x, y);
  b.output(op.RMSNormalization(s, gamma, {.epsilon = 1e-6f}), "n1", {"batch", 4, 8});
  b.output(op.Mul(s, 2.0), "residual", {"batch", 4, 8});  // the sum is read on
  Value* biased = op.Add(x, bias);  // broadcasts: stays
  b.output(op.RMSNormalization(biased, gamma, {}), "n2", {"batch", 4, 8});
  make_skip_simplified_layer_norm()->run(m, {});
  auto c = op_counts(m.graph);
  EXPECT_EQ(c["SkipSimplifiedLayerNormalization"], 1);
  EXPECT_EQ(c["RMSNormalization"], 1);
  EXPECT_EQ(c["Add"], 1);
  const Node& n = only(m.graph, "SkipSimplifiedLayerNormalization");
  EXPECT_EQ(n.inputs[0]->name, "x");
  EXPECT_EQ(n.inputs[1]->name, "y");
  EXPECT_EQ(n.inputs[2]->name, "norm.weight");
  ASSERT_EQ(n.outputs.size(), 4u);  // output, mean, inv_std_var, input_skip_bias_sum
  EXPECT_EQ(n.outputs[0]->name, "n1");
  EXPECT_EQ(n.outputs[1], nullptr);
  EXPECT_EQ(n.outputs[2], nullptr);
  EXPECT_FLOAT_EQ(std::get<float>(attrs(n).at("epsilon").value), 1e-6f);
  const Node& mul = only(m.graph, "Mul");
  EXPECT_EQ(mul.inputs[0], n.outputs[3]);
}

// The packed initializer's bytes: each part converted and transposed, side by side in each row.
TEST(PackedWeights, ConcatenatedAlongTheLastAxisAtWriteTime) {
  test::TempDir dir;
  std::vector<float> q = test::iota_f32(4 * 3), k = test::iota_f32(2 * 3, 100.0f, 1.0f);
  test::SafetensorsWriter().f32("q.weight", {4, 3}, q).f32("k.weight", {2, 3}, k).write(dir.path / "model.safetensors");
  SafetensorsCheckpoint ckpt(dir.str());
  Graph g;
  GraphBuilder b(g);
  b.weight("qk.weight", DataType::FLOAT16, {3, 6}, {"q.weight", {Transpose{}, Concat{{"k.weight"}}, Cast{DataType::FLOAT16}}});
  WeightPlan plan = WeightPlan::bind(g, ckpt);
  ASSERT_EQ(plan.bindings().size(), 1u);
  EXPECT_TRUE(plan.unused().empty());
  const WeightBinding& packed = plan.bindings()[0];
  ASSERT_EQ(packed.rows(), 3);
  std::vector<uint8_t> out(3 * 6 * 2);
  if (packed.streams()) {  // in row ranges, as the writer streams it
    packed.produce(0, 1, {out.data(), 6 * 2});
    packed.produce(1, 3, {out.data() + 6 * 2, 2 * 6 * 2});
  } else {
    packed.produce(0, 3, out);
  }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 6; ++c) {
      uint16_t h;
      std::memcpy(&h, out.data() + 2 * (r * 6 + c), 2);
      // packed[r][c] = q^T[r][c] for c < 4, k^T[r][c - 4] after
      const float want = c < 4 ? q[c * 3 + r] : k[(c - 4) * 3 + r];
      EXPECT_EQ(f16_to_f32(h), static_cast<float>(test::round_f16(want))) << r << "," << c;
    }
  Graph bad;
  GraphBuilder bb(bad);
  bb.weight("qk.weight", DataType::FLOAT, {3, 7}, {"q.weight", {Transpose{}, Concat{{"k.weight"}}, Cast{DataType::FLOAT}}});
  test::expect_error([&] { WeightPlan::bind(bad, ckpt); }, {"'qk.weight'", "6 columns, expected 7"});
}

}  // namespace
}  // namespace mobius
