// A float32 reference evaluator for the ONNX graphs mobius writes: loads a written model.onnx
// (ModelProto) and maps its external data file, then runs the graph node by node on the CPU.
//
// It exists for `mobius build --try-generic`'s self-check (eval/self_check.h): no ONNX Runtime
// C/C++ API is a dependency. It implements exactly the default-domain ops (opset 24) that the
// generic decoders emit (archs/llama.cpp, and the Mixtral / Qwen3-MoE sparse MoE of
// blocks/moe.h, driver/generic.h), each as specified in onnx/docs/Operators.md and
// onnx/reference/ops (Attention, RotaryEmbedding, RMSNormalization: the opset 23/24 pages), with
// numpy-style broadcasting. Tensors are FLOAT, INT64 or BOOL; any other element type, or an op
// not in the table, is a mobius::Error naming it. Not built for speed: MatMul is a blocked loop
// on one core, which suits the self-check's few tokens at batch 1.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace mobius::eval {

// A dense row-major tensor. FLOAT elements live in `f` (or, for a weight, in the mapped
// external-data file: `view`); INT64 and BOOL (0/1) elements in `i`.
struct Tensor {
  DataType dtype = DataType::FLOAT;
  std::vector<int64_t> shape;
  std::vector<float> f;
  std::vector<int64_t> i;
  const float* view = nullptr;

  int64_t numel() const;
  const float* floats() const { return view ? view : f.data(); }
  // Element `k` as a double (any dtype).
  double at(int64_t k) const { return dtype == DataType::FLOAT ? floats()[k] : static_cast<double>(i[k]); }

  static Tensor zeros(DataType dtype, std::vector<int64_t> shape);
  static Tensor of_floats(std::vector<int64_t> shape, std::vector<float> values);
  static Tensor of_ints(std::vector<int64_t> shape, std::vector<int64_t> values);
};

class Evaluator {
 public:
  // Loads `model_path` (an ONNX ModelProto with every weight as external data next to it, as
  // package/writer.h writes it). Throws mobius::Error naming the file on a read or parse error,
  // or an initializer of an element type other than FLOAT / INT64 / BOOL.
  explicit Evaluator(const std::string& model_path);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Runs the graph on `inputs` (every graph input, by name) and returns every graph output by
  // name. Throws mobius::Error naming the node and op on a missing input, a shape the op cannot
  // take, or an op the evaluator does not implement.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;

  // The op types the evaluator implements, sorted.
  static std::vector<std::string> supported_ops();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mobius::eval
