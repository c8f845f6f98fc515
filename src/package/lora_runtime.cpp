#include "package/lora_runtime.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "package/writer.h"
#include "util/error.h"
#include "weights/convert.h"

namespace mobius {

namespace {

constexpr const char* kRank = "lora_r";  // the symbolic rank of every LoRA input (Olive's)

// The module as the ORT GenAI builder names it: transformers' path with self_attn written attn
// (builders/base.py: /model/layers.{i}/attn/q_proj/MatMul, /model/layers.{i}/mlp/gate_proj/MatMul).
std::string builder_module(const std::string& module) {
  const size_t at = module.find(".self_attn.");
  return at == std::string::npos ? module : module.substr(0, at) + ".attn." + module.substr(at + 11);
}
std::string a_name(const std::string& module) { return builder_module(module) + ".lora_A.weight"; }
std::string b_name(const std::string& module) { return builder_module(module) + ".lora_B.weight"; }

// An optional graph input [rows, cols] with one symbolic dim (`symbolic_axis`) whose default is
// the empty tensor (that dim 0).
Value* optional_input(Graph& g, const std::string& name, DataType dtype, int64_t rows, int64_t cols, int symbolic_axis) {
  Shape shape{rows, cols}, empty{rows, cols};
  shape[symbolic_axis] = Dim(kRank);
  empty[symbolic_axis] = Dim(int64_t{0});
  return g.add_optional_input(name, dtype, shape, empty);
}

// The FlatBuffer of onnxruntime's adapter format (adapter_schema.fbs), laid out front to back:
// every offset (uoffset_t, unsigned) points forward, each table's vtable just before it.
class AdapterBuffer {
 public:
  struct Parameter {
    std::string name;
    std::vector<int64_t> dims;
    DataType dtype;
    std::vector<uint8_t> data;
  };

  std::string build(const std::vector<Parameter>& params) {
    put<uint32_t>(0);            // root offset, patched
    bytes_.insert(bytes_.end(), {'T', 'O', 'R', 'T'});
    // table Adapter { format_version:int; adapter_version:int; model_version:int; parameters:[Parameter]; }
    const size_t table = table_start({4, 8, 12, 16}, 20);
    patch(0, static_cast<uint32_t>(table));
    put<int32_t>(1);  // format_version: onnxruntime's kAdapterFormatVersion
    put<int32_t>(1);  // adapter_version
    put<int32_t>(1);  // model_version
    const size_t params_field = put<uint32_t>(0);
    patch(params_field, static_cast<uint32_t>(bytes_.size() - params_field));
    put<uint32_t>(static_cast<uint32_t>(params.size()));
    std::vector<size_t> slots;
    for (size_t i = 0; i < params.size(); ++i) slots.push_back(put<uint32_t>(0));
    for (size_t i = 0; i < params.size(); ++i) {
      // table Parameter { name:string; dims:[int64]; data_type:TensorDataType (int32); raw_data:[uint8] (force_align: 8); }
      const Parameter& p = params[i];
      const size_t t = table_start({4, 8, 12, 16}, 20);
      patch(slots[i], static_cast<uint32_t>(t - slots[i]));
      const size_t name_field = put<uint32_t>(0), dims_field = put<uint32_t>(0);
      put<int32_t>(static_cast<int32_t>(p.dtype));  // TensorDataType numbers are ONNX's
      const size_t raw_field = put<uint32_t>(0);
      align(4);
      patch(name_field, static_cast<uint32_t>(bytes_.size() - name_field));
      put<uint32_t>(static_cast<uint32_t>(p.name.size()));
      bytes_.insert(bytes_.end(), p.name.begin(), p.name.end());
      bytes_.push_back(0);
      vector_start(dims_field, p.dims.size());
      for (int64_t d : p.dims) put<int64_t>(d);
      vector_start(raw_field, p.data.size());
      bytes_.insert(bytes_.end(), p.data.begin(), p.data.end());
    }
    align(8);
    return {bytes_.begin(), bytes_.end()};
  }

 private:
  template <typename T>
  size_t put(T v) {
    align(sizeof(T));
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return at;
  }
  void patch(size_t at, uint32_t v) { std::memcpy(bytes_.data() + at, &v, sizeof(v)); }
  void align(size_t n) {
    while (bytes_.size() % n) bytes_.push_back(0);
  }
  // A vtable (its size, the table's size, each field's offset in the table), then the table's
  // soffset to it; returns the table's position.
  size_t table_start(const std::vector<uint16_t>& fields, uint16_t table_size) {
    const size_t vtable = put<uint16_t>(static_cast<uint16_t>(4 + 2 * fields.size()));
    put<uint16_t>(table_size);
    for (uint16_t f : fields) put<uint16_t>(f);
    const size_t table = put<int32_t>(0);
    const int32_t soffset = static_cast<int32_t>(table - vtable);
    std::memcpy(bytes_.data() + table, &soffset, sizeof(soffset));
    return table;
  }
  // The length of a vector whose elements start 8-aligned, pointed to by `field`.
  void vector_start(size_t field, size_t length) {
    while (bytes_.size() % 8 != 4) bytes_.push_back(0);
    patch(field, static_cast<uint32_t>(bytes_.size() - field));
    put<uint32_t>(static_cast<uint32_t>(length));
  }
  std::vector<uint8_t> bytes_;
};

// `t` (a float matrix) converted to float32, transposed: [cols, rows].
std::vector<float> transposed(const TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.shape[0] * t.shape[1]));
  convert_tensor(t, DataType::FLOAT, true, {reinterpret_cast<uint8_t*>(out.data()), out.size() * sizeof(float)});
  return out;
}

std::vector<uint8_t> as_dtype(const std::vector<float>& v, DataType dtype) {
  std::vector<uint8_t> out(v.size() * dtype_size(dtype));
  convert_kernel(DataType::FLOAT, dtype, best_isa())(reinterpret_cast<const uint8_t*>(v.data()), out.data(), v.size());
  return out;
}

}  // namespace

namespace {

// The integer attribute `name` of `n`, or -1.
int64_t int_attribute(const Node& n, const std::string& name) {
  for (const Attribute& a : n.attributes)
    if (a.name == name && std::holds_alternative<int64_t>(a.value)) return std::get<int64_t>(a.value);
  return -1;
}

}  // namespace

int add_lora_inputs(Graph& graph, const std::vector<const LoraAdapter*>& adapters, const Checkpoint& checkpoint) {
  std::map<std::string, const LoraModule*> modules;  // weight key -> one adapter's module (shapes)
  for (const LoraAdapter* a : adapters)
    for (const LoraModule& m : a->modules()) modules.emplace(m.module + ".weight", &m);
  // a MatMul's B or a MatMulNBits' quantized B, by value (copies: optional_input grows the
  // initializers below, which moves them)
  std::map<const Value*, WeightRef> weights;
  for (const Initializer& init : graph.initializers) {
    if (!init.weight) continue;
    const BlockQuantize* q = quantize_of(init.weight->transforms);
    if (!q || q->part == BlockQuantize::Part::data) weights.emplace(init.value, *init.weight);
  }
  std::set<std::string> done;
  std::vector<Node> nodes;
  for (Node& n : graph.nodes) {
    nodes.push_back(std::move(n));
    const Node& mm = nodes.back();
    const bool plain = mm.op_type == "MatMul" && mm.domain.empty() && mm.inputs.size() == 2;
    const bool nbits = mm.op_type == "MatMulNBits" && mm.domain == "com.microsoft" && mm.inputs.size() >= 2;
    if (!plain && !nbits) continue;
    auto w = weights.find(mm.inputs[1]);
    if (w == weights.end() || plain == static_cast<bool>(quantize_of(w->second.transforms))) continue;
    // The checkpoint matrices the weight is made of: one, or the parts packed side by side (--ep).
    std::vector<std::string> keys = {w->second.source_key};
    if (const Concat* c = concat_of(w->second.transforms)) keys.insert(keys.end(), c->keys.begin(), c->keys.end());
    if (std::none_of(keys.begin(), keys.end(), [&](const std::string& k) { return modules.count(k) > 0; })) continue;
    // Its [in, out] as the node computes it: the MatMul's B, or MatMulNBits' K and N.
    const Shape& shape = *w->first->shape;
    const int64_t in = plain ? (shape.size() == 2 ? shape[0].value : -1) : int_attribute(mm, "K");
    const int64_t out = plain ? (shape.size() == 2 ? shape[1].value : -1) : int_attribute(mm, "N");
    const DataType dt = mm.inputs[0]->dtype;  // the activations': LoRA stays float beside a quantized B
    Value* x = mm.inputs[0];
    Value* y = mm.outputs[0];
    const std::string stem = mm.name;
    const size_t adapted = nodes.size() - 1;  // `mm` dangles once nodes grow
    std::vector<Value*> deltas;
    int64_t outs = 0;
    for (const std::string& key : keys) {
      // a part no adapter adapts gets inputs too, empty by default: its slice of the sum is zero
      const TensorInfo* t = checkpoint.find(key);
      const auto m = modules.find(key);
      const std::string module = key.substr(0, key.size() - (key.ends_with(".weight") ? 7 : 0));
      const int64_t part_in = m != modules.end() ? m->second->a->shape[1] : t && t->shape.size() == 2 ? t->shape[1] : -1;
      const int64_t part_out = m != modules.end() ? m->second->b->shape[0] : t && t->shape.size() == 2 ? t->shape[0] : -1;
      if (part_in != in || part_out <= 0 || !done.insert(module).second)
        throw Error("--lora-runtime: the weight of module '" + module + "' is " + shape_str(shape) + " in the graph, "
                    "not one MatMul by [" + std::to_string(part_in) + ", " + std::to_string(part_out) + "]");
      outs += part_out;
      Value* a = optional_input(graph, a_name(module), dt, in, 0, 1);
      Value* b = optional_input(graph, b_name(module), dt, 0, part_out, 0);
      Value* xa = graph.new_value(module + "/lora_A/MatMul_output", dt);
      Value* delta = graph.new_value(module + "/lora_B/MatMul_output", dt, keys.size() == 1 ? y->shape : std::nullopt);
      nodes.push_back(Node{"MatMul", "", module + "/lora_A/MatMul", {x, a}, {xa}, {}, {}});
      nodes.push_back(Node{"MatMul", "", module + "/lora_B/MatMul", {xa, b}, {delta}, {}, {}});
      deltas.push_back(delta);
    }
    if (outs != out)
      throw Error("--lora-runtime: the weight of '" + stem + "' has " + std::to_string(out) + " outputs in the graph, "
                  "not the " + std::to_string(outs) + " of its modules");
    Value* delta = deltas.front();
    if (deltas.size() > 1) {  // packed: the parts' deltas side by side, as the weights are
      delta = graph.new_value(stem + "/lora/Concat_output", dt, y->shape);
      nodes.push_back(Node{"Concat", "", stem + "/lora/Concat", deltas, {delta}, {{"axis", int64_t{-1}}}, {}});
    }
    Value* base = graph.new_value(stem + "/base_output", dt, y->shape);
    nodes[adapted].outputs[0] = base;
    nodes.push_back(Node{"Add", "", stem + "/lora/Add", {base, delta}, {y}, {}, {}});
  }
  graph.nodes = std::move(nodes);
  for (const auto& [key, m] : modules)
    if (!done.count(m->module))
      throw Error("--lora-runtime: module '" + m->module + "' is not a MatMul by its weight in the graph (its "
                  "weight '" + key + "' is read by another node): runtime adapters need each adapted Linear as a "
                  "MatMul or MatMulNBits");
  return static_cast<int>(done.size());
}

void write_onnx_adapter(const std::string& path, const LoraAdapter& adapter, DataType dtype) {
  std::vector<AdapterBuffer::Parameter> params;
  for (const LoraModule& m : adapter.modules()) {
    const int64_t rank = m.a->shape[0], in = m.a->shape[1], out = m.b->shape[0];
    params.push_back({a_name(m.module), {in, rank}, dtype, as_dtype(transposed(*m.a), dtype)});
    std::vector<float> b = transposed(*m.b);  // [rank, out]
    for (float& x : b) x *= m.scale;
    params.push_back({b_name(m.module), {rank, out}, dtype, as_dtype(b, dtype)});
  }
  write_file_synced(path, AdapterBuffer().build(params));
}

}  // namespace mobius
