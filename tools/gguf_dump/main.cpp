// mobius-gguf-dump: exposes the GGUF reader to the tests (tests/gguf); not part of the CLI.
//   info FILE                  JSON: version, alignment, data_offset, metadata, tensor infos
//   tensor FILE NAME OUT       GGUF tensor NAME dequantized to float32 (raw little-endian) in OUT
//   config FILE                the config.json synthesized from the metadata
//   hf-tensor FILE NAME OUT    Hugging Face tensor NAME as the build binds it, float32, in OUT
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "util/error.h"
#include "weights/gguf.h"
#include "weights/convert.h"
#include "weights/gguf_checkpoint.h"
#include "weights/gguf_quants.h"

namespace {

using mobius::Error;
using nlohmann::json;

json info(const mobius::GgufFile& f) {
  json out = {{"version", f.version()}, {"alignment", f.alignment()}, {"data_offset", f.data_offset()}};
  json meta = json::array();
  for (const auto& [key, v] : f.metadata()) {
    json m = {{"key", key}, {"type", mobius::gguf_value_type_name(v.type())}, {"value", v.to_json()}};
    if (v.type() == mobius::GgufValueType::ARRAY) m["element_type"] = mobius::gguf_value_type_name(v.element_type());
    meta.push_back(m);
  }
  json tensors = json::array();
  for (const auto& t : f.tensors())
    tensors.push_back({{"name", t.name},
                       {"type", mobius::ggml_type_traits(static_cast<uint32_t>(t.type))->name},
                       {"ne", t.ne},
                       {"offset", t.offset}});
  out["metadata"] = meta;
  out["tensors"] = tensors;
  return out;
}

void write_file(const std::string& path, const std::vector<float>& v) {
  std::ofstream o(path, std::ios::binary);
  o.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  if (!o) throw Error(path + ": cannot write");
}

int run(const std::vector<std::string>& a) {
  const std::string cmd = a.empty() ? "" : a[0];
  if (cmd == "info" && a.size() == 2) {
    std::cout << info(mobius::GgufFile(a[1])).dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  } else if (cmd == "config" && a.size() == 2) {
    std::cout << mobius::GgufCheckpoint(a[1]).config().json().dump(1) << "\n";
  } else if (cmd == "tensor" && a.size() == 4) {
    mobius::GgufFile f(a[1]);
    const mobius::GgufTensor* t = f.find_tensor(a[2]);
    if (!t) throw Error(a[1] + ": no tensor '" + a[2] + "'");
    if (!mobius::can_dequantize(t->type))
      throw Error(a[1] + ": tensor '" + a[2] + "': type " +
                  mobius::ggml_type_traits(static_cast<uint32_t>(t->type))->name + " cannot be dequantized");
    std::vector<float> v(static_cast<size_t>(t->num_elements()));
    mobius::dequantize(t->type, t->data, v);
    write_file(a[3], v);
  } else if (cmd == "hf-tensor" && a.size() == 4) {
    mobius::GgufCheckpoint c(a[1]);
    const mobius::TensorInfo* t = c.find(a[2]);
    if (!t) throw Error(a[1] + ": no Hugging Face tensor '" + a[2] + "'");
    size_t n = 1;
    for (int64_t d : t->shape) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    c.produce(*t, mobius::DataType::FLOAT, false, 0, mobius::output_rows(t->shape, false),
              {reinterpret_cast<uint8_t*>(v.data()), n * 4});
    write_file(a[3], v);
  } else {
    std::cerr << "usage: mobius-gguf-dump info FILE | config FILE | tensor FILE NAME OUT | "
                 "hf-tensor FILE NAME OUT\n";
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "mobius-gguf-dump: error: " << e.what() << "\n";
  }
  return 1;
}
