#include "tasks/sentence_embedding.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "blocks/activation.h"
#include "blocks/linear.h"
#include "tasks/feature_extraction.h"
#include "util/error.h"
#include "util/input_files.h"
#include "weights/safetensors.h"

namespace mobius {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPoolingModes[] = {"cls", "mean", "mean_sqrt_len_tokens", "max", "weightedmean", "lasttoken"};

// The module kind of a modules.json type: its last dotted component
// (sentence_transformers.models.Pooling, sentence_transformers.base.modules.Dense, ...).
std::string st_module_kind(const std::string& type) {
  const size_t dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

nlohmann::json st_module_config(const fs::path& dir, const std::string& path) {
  const fs::path file = checkpoint_file(dir, path + "/config.json", (dir / "modules.json").string());
  return read_json_file(file.string(), kMaxConfigBytes);
}

// Pooling's modes from its config.json: pooling_mode (a name or a list), else the legacy
// pooling_mode_*_token(s) flags (Pooling's _LEGACY_POOLING_MODE_KWARGS), mean when none is set.
std::vector<std::string> pooling_modes(const nlohmann::json& j, const std::string& file) {
  std::vector<std::string> modes;
  if (j.contains("pooling_mode")) {
    const nlohmann::json& m = j["pooling_mode"];
    for (const nlohmann::json& v : m.is_array() ? m : nlohmann::json::array({m})) {
      if (!v.is_string()) throw Error(file + ": field 'pooling_mode': expected a mode name or a list of them");
      modes.push_back(v.get<std::string>());
    }
  } else {
    static const std::pair<const char*, const char*> legacy[] = {
        {"pooling_mode_cls_token", "cls"},       {"pooling_mode_max_tokens", "max"},
        {"pooling_mode_mean_tokens", "mean"},    {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"},
        {"pooling_mode_weightedmean_tokens", "weightedmean"}, {"pooling_mode_lasttoken", "lasttoken"}};
    for (const auto& [key, mode] : legacy)
      if (j.contains(key) && j[key].is_boolean() && j[key].get<bool>()) modes.push_back(mode);
    if (modes.empty()) modes.push_back("mean");
  }
  if (modes.empty()) throw Error(file + ": field 'pooling_mode': no mode");
  for (const std::string& m : modes)
    if (std::find(std::begin(kPoolingModes), std::end(kPoolingModes), m) == std::end(kPoolingModes))
      throw Error(file + ": field 'pooling_mode': unknown mode '" + escaped(m) +
                  "' (cls, mean, mean_sqrt_len_tokens, max, weightedmean, lasttoken)");
  return modes;
}

// A Dense activation_function (the torch class's full name) as an activation name.
std::string dense_activation(const nlohmann::json& j, const std::string& file) {
  if (!j.contains("activation_function")) return "tanh";  // Dense's default, nn.Tanh()
  if (!j["activation_function"].is_string()) throw Error(file + ": field 'activation_function': expected a class name");
  const std::string cls = st_module_kind(j["activation_function"].get<std::string>());
  static const std::pair<const char*, const char*> known[] = {
      {"Identity", ""}, {"Tanh", "tanh"}, {"ReLU", "relu"}, {"GELU", "gelu"}, {"Sigmoid", "sigmoid"}, {"SiLU", "silu"}};
  for (const auto& [name, act] : known)
    if (cls == name) return act;
  throw Error(file + ": field 'activation_function': unsupported '" + escaped(j["activation_function"].get<std::string>()) +
              "' (torch.nn Identity, Tanh, ReLU, GELU, Sigmoid, SiLU)");
}

int64_t dense_size(const nlohmann::json& j, const char* key, const std::string& file) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<int64_t>() <= 0 || j[key].get<int64_t>() > (int64_t{1} << 20))
    throw Error(file + ": field '" + key + "': expected a positive size");
  return j[key].get<int64_t>();
}

class SentenceEmbedder : public Architecture {
 public:
  SentenceEmbedder(std::unique_ptr<Encoder> encoder, const SentenceModules& m) : modules_(m) {
    const std::string at = encoder->path();  // a head checkpoint's base_model_prefix (tasks/text_heads.h)
    encoder_ = adopt(at, std::move(encoder));
    int64_t width = encoder_->hidden_size() * static_cast<int64_t>(m.pooling.size());
    for (const SentenceDense& d : m.dense) {
      if (d.in_features != width)
        throw Error(d.path + "/config.json: field 'in_features': " + std::to_string(d.in_features) +
                    ", but the embedding before it has " + std::to_string(width));
      dense_.push_back(child<Linear>(d.path + ".linear", LinearOptions{d.in_features, d.out_features, d.bias,
                                                                       encoder_->dtype()}));
      width = d.out_features;
    }
    width_ = width;
  }
  std::string task() const override { return "sentence-embedding"; }
  bool training_only(const std::string& key) const override { return encoder_->training_only(key); }

  std::vector<NamedGraph> build_graphs() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const EncoderInputs in = encoder_->token_inputs(b);
    Value* x = encoder_->forward(op, in);
    std::vector<Value*> pooled;
    for (const std::string& mode : modules_.pooling) pooled.push_back(sentence_pool(op, mode, x, in.attention_mask));
    Value* e = pooled.size() == 1 ? pooled[0] : op.Concat(pooled, {.axis = -1});
    for (size_t i = 0; i < dense_.size(); ++i) {
      e = dense_[i]->forward(op, e);
      if (!modules_.dense[i].activation.empty()) e = activation(op, modules_.dense[i].activation, e);
    }
    if (modules_.normalize)  // F.normalize: x / max(|x|, 1e-12)
      e = op.Div(e, op.Max(op.Sqrt(op.ReduceSum(op.Mul(e, e), {-1})), 1e-12));
    b.output(x, "token_embeddings", {"batch_size", "sequence_length", encoder_->hidden_size()});
    b.output(e, "sentence_embedding", {"batch_size", width_});
    return single_graph(std::move(model), GraphLowering::attention);
  }

 private:
  SentenceModules modules_;
  Encoder* encoder_;
  std::vector<Linear*> dense_;
  int64_t width_;
};

// The model's checkpoint and, under "<path>.", each Dense directory's.
class ModuleWeights : public Checkpoint {
 public:
  ModuleWeights(std::unique_ptr<Checkpoint> main, std::vector<std::pair<std::string, std::unique_ptr<Checkpoint>>> parts)
      : main_(std::move(main)), parts_(std::move(parts)) {}
  const TensorInfo* find(const std::string& name) const override {
    for (const auto& [prefix, c] : parts_)
      if (name.starts_with(prefix)) return c->find(name.substr(prefix.size()));
    return main_->find(name);
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out = main_->names();
    for (const auto& [prefix, c] : parts_)
      for (const std::string& n : c->names()) out.push_back(prefix + n);
    std::sort(out.begin(), out.end());
    return out;
  }
  void produce(const TensorInfo& t, DataType dst, bool transpose, int64_t row_begin, int64_t row_end,
               std::span<uint8_t> out) const override {
    owner(t).produce(t, dst, transpose, row_begin, row_end, out);
  }
  bool streams(const TensorInfo& t) const override { return owner(t).streams(t); }
  void release(const TensorInfo& t, bool transpose, int64_t row_begin, int64_t row_end) const override {
    owner(t).release(t, transpose, row_begin, row_end);
  }

 private:
  const Checkpoint& owner(const TensorInfo& t) const {
    for (const auto& [prefix, c] : parts_)
      if (c->find(t.name) == &t) return *c;
    return *main_;
  }
  std::unique_ptr<Checkpoint> main_;
  std::vector<std::pair<std::string, std::unique_ptr<Checkpoint>>> parts_;
};

}  // namespace

Value* sentence_pool(Ops& op, const std::string& mode, Value* x, Value* mask_i64) {
  GraphBuilder& b = op.builder();
  const DataType dt = x->dtype;
  Value* mask = op.Unsqueeze(op.Cast(mask_i64, {.to = dt}), {2});  // [batch, seq, 1]
  Value* kept = op.CumSum(mask_i64, b.scalar_i64(1));                // kept tokens so far, [batch, seq]
  auto sum_over_tokens = [&](Value* weights) { return op.ReduceSum(op.Mul(x, weights), {1}, {.keepdims = 0}); };
  auto weights_of = [&](Value* select) { return op.Unsqueeze(op.Cast(select, {.to = dt}), {2}); };
  if (mode == "cls")  // the first kept token: its running count is 1 and it is kept
    return sum_over_tokens(op.Mul(mask, weights_of(op.Equal(kept, 1.0))));
  if (mode == "lasttoken") {  // the last kept token, 0 for a row without one
    Value* after = op.CumSum(mask_i64, b.scalar_i64(1), {.reverse = 1});
    return sum_over_tokens(op.Mul(mask, weights_of(op.Equal(after, 1.0))));
  }
  if (mode == "max")
    return op.ReduceMax(op.Where(op.Equal(mask, 0.0), -std::numeric_limits<double>::infinity(), x), {1}, {.keepdims = 0});
  Value* weights = mask;
  if (mode == "weightedmean") {  // position + 1 - (padding before the first kept token), on kept tokens
    Value* seq = op.Squeeze(op.Shape(mask_i64, {.start = 1, .end = 2}), {0});
    Value* position = op.Range(b.scalar_i64(1), op.Add(seq, b.scalar_i64(1)), b.scalar_i64(1));
    Value* lead = op.ReduceSum(op.Cast(op.Equal(kept, 0.0), {.to = DataType::INT64}), {1});  // [batch, 1]
    weights = op.Mul(mask, op.Unsqueeze(op.Cast(op.Sub(position, lead), {.to = dt}), {2}));
  }
  Value* count = op.Max(op.ReduceSum(weights, {1}, {.keepdims = 0}), 1e-9);
  if (mode == "mean_sqrt_len_tokens") count = op.Sqrt(count);
  return op.Div(sum_over_tokens(weights), count);
}

bool has_sentence_modules(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "modules.json", ec);
}

SentenceModules read_sentence_modules(const std::string& dir) {
  const fs::path root(dir);
  const std::string file = (root / "modules.json").string();
  const nlohmann::json j = read_json_file(file, kMaxConfigBytes);
  if (!j.is_array()) throw Error(file + ": expected a list of modules");
  SentenceModules m;
  enum { transformer, pooling, dense, normalize } expect = transformer;  // the order encode runs them in
  for (const nlohmann::json& entry : j) {
    if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_string())
      throw Error(file + ": each module needs a 'type'");
    const std::string type = entry["type"].get<std::string>();
    const std::string kind = st_module_kind(type);
    const std::string path = entry.contains("path") && entry["path"].is_string() ? entry["path"].get<std::string>() : "";
    if (kind == "Transformer" && expect == transformer) {
      if (!path.empty())
        throw Error(file + ": the Transformer module is at '" + escaped(path) + "': mobius builds the model of the "
                    "directory's own config.json (path \"\")");
      expect = pooling;
    } else if (kind == "Pooling" && expect == pooling) {
      m.pooling = pooling_modes(st_module_config(root, path), (root / path / "config.json").string());
      expect = dense;
    } else if (kind == "Dense" && expect == dense) {
      const std::string cfg = (root / path / "config.json").string();
      const nlohmann::json c = st_module_config(root, path);
      if (c.contains("use_residual") && c["use_residual"].is_boolean() && c["use_residual"].get<bool>())
        throw Error(cfg + ": field 'use_residual': a residual Dense is not supported");
      for (const char* key : {"module_input_name", "module_output_name"})
        if (c.contains(key) && c[key] != "sentence_embedding")
          throw Error(cfg + ": field '" + key + "': only a Dense over the sentence_embedding is supported");
      if (path.empty() || path.find('.') != std::string::npos || path.find('/') != std::string::npos)
        throw Error(file + ": Dense path '" + escaped(path) + "': expected a directory name without dots");
      m.dense.push_back({path, dense_size(c, "in_features", cfg), dense_size(c, "out_features", cfg),
                         !c.contains("bias") || !c["bias"].is_boolean() || c["bias"].get<bool>(),
                         dense_activation(c, cfg)});
    } else if (kind == "Normalize" && expect == dense) {
      m.normalize = true;
      expect = normalize;
    } else {
      throw Error(file + ": module '" + escaped(type) + "'" +
                  (expect == transformer ? " before the Transformer" : expect == normalize ? " after Normalize" : "") +
                  ": mobius builds Transformer, Pooling, Dense and Normalize, in that order");
    }
  }
  if (m.pooling.empty()) throw Error(file + ": no Pooling module (mobius builds Transformer, Pooling, Dense, Normalize)");
  return m;
}

std::unique_ptr<Architecture> with_sentence_embedding(std::unique_ptr<Architecture> arch, const SentenceModules& m) {
  if (!dynamic_cast<Encoder*>(arch.get()) || arch->task() != "feature-extraction")
    throw Error("--task sentence-embedding: the model is not a text encoder (its task: " + arch->task() + ")");
  std::unique_ptr<Encoder> encoder(static_cast<Encoder*>(arch.release()));
  return std::make_unique<SentenceEmbedder>(std::move(encoder), m);
}

std::unique_ptr<Checkpoint> with_module_weights(std::unique_ptr<Checkpoint> checkpoint, const std::string& dir,
                                                const SentenceModules& m) {
  if (m.dense.empty()) return checkpoint;
  std::vector<std::pair<std::string, std::unique_ptr<Checkpoint>>> parts;
  for (const SentenceDense& d : m.dense)
    parts.emplace_back(d.path + ".", std::make_unique<SafetensorsCheckpoint>((fs::path(dir) / d.path).string()));
  return std::make_unique<ModuleWeights>(std::move(checkpoint), std::move(parts));
}

}  // namespace mobius
