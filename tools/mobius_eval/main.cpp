// mobius-eval: exposes the float32 reference evaluator (eval/evaluator.h) and the --try-generic
// self-check (eval/self_check.h) to the tests (tests/eval); not part of the CLI.
//   run MODEL.onnx            inputs as JSON on stdin, outputs as JSON on stdout:
//                             {"NAME": {"dtype": "float32"|"int64"|"bool", "shape": [..], "data": [..]}}
//   self-check MODEL.onnx LAYERS KV_HEADS HEAD_DIM VOCAB
//                             the prefill/decode self-check; its figures as JSON on stdout
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "eval/self_check.h"
#include "util/error.h"

namespace {

using mobius::DataType;
using mobius::Error;
using mobius::eval::Tensor;
using nlohmann::json;

Tensor from_json(const std::string& name, const json& j) {
  const std::string dtype = j.at("dtype");
  Tensor t;
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  if (dtype == "float32") {
    t.f = j.at("data").get<std::vector<float>>();
  } else if (dtype == "int64" || dtype == "bool") {
    t.dtype = dtype == "bool" ? DataType::BOOL : DataType::INT64;
    t.i = j.at("data").get<std::vector<int64_t>>();
  } else {
    throw Error("input '" + name + "': dtype '" + dtype + "' (float32, int64, bool)");
  }
  if (static_cast<int64_t>(t.dtype == DataType::FLOAT ? t.f.size() : t.i.size()) != t.numel())
    throw Error("input '" + name + "': data does not match its shape");
  return t;
}

json to_json(const Tensor& t) {
  json j = {{"shape", t.shape}};
  if (t.dtype == DataType::FLOAT) {
    j["dtype"] = "float32";
    j["data"] = std::vector<double>(t.floats(), t.floats() + t.numel());
  } else {
    j["dtype"] = t.dtype == DataType::BOOL ? "bool" : "int64";
    j["data"] = t.i;
  }
  return j;
}

int run(const std::string& model) {
  const json in = json::parse(std::cin);
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, v] : in.items()) feeds[name] = from_json(name, v);
  const mobius::eval::Evaluator ev(model);
  json out = json::object();
  for (const auto& [name, t] : ev.run(feeds)) out[name] = to_json(t);
  std::cout << out.dump() << "\n";
  return 0;
}

int self_check(const std::string& model, char** args) {
  const mobius::CacheLayout cache{std::stoll(args[0]), std::stoll(args[1]), std::stoll(args[2])};
  const auto r = mobius::eval::prefill_decode_check(model, cache, std::stoll(args[3]));
  std::cout << json{{"tokens", r.tokens}, {"max_abs_delta", r.max_abs_delta}, {"logit_scale", r.logit_scale},
                    {"tolerance", r.tolerance}, {"finite", r.finite}, {"passed", r.passed()}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "run" && argc == 3) return run(argv[2]);
    if (cmd == "self-check" && argc == 7) return self_check(argv[2], argv + 3);
    std::cerr << "usage: mobius-eval run MODEL.onnx < inputs.json | self-check MODEL.onnx LAYERS KV_HEADS HEAD_DIM VOCAB\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mobius-eval: error: " << e.what() << "\n";
    return 1;
  }
}
