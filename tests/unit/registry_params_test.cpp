// Every registry row (registry/registry.h) builds from its tiny config, checked in as
// tests/data/configs/<model_type>.json, with no weights (graph construction only, as
// build_package reads a config: the class defaults filled in), and its graphs read exactly the
// checkpoint keys that transformers' save_pretrained writes for that config: the list in
// tests/data/param_keys/<model_type>.txt, made once by scripts/gen_param_keys.py. A key the
// graphs read that transformers does not write (the build would fail on a real checkpoint) or a
// key transformers writes that no graph reads (a weight silently dropped) fails with its name.
// Keys a row leaves unread by contract (unread_by_contract) are the only exception. A row without its
// config or key list fails with how to add them.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "package/writer.h"
#include "registry/config_defaults.h"
#include "registry/registry.h"
#include "test_util.h"
#include "weights/weight_plan.h"

namespace mobius {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(__FILE__).parent_path().parent_path() / "data";

// The checkpoint keys a graph's weight initializers read (WeightRef source_key and the parts of its Concat).
void read_keys(const Graph& g, std::set<std::string>& out) {
  for (const Initializer& init : g.initializers) {
    if (!init.weight) continue;
    out.insert(init.weight->source_key);
    if (const Concat* c = concat_of(init.weight->transforms)) out.insert(c->keys.begin(), c->keys.end());
  }
}

// Checkpoint keys a row's graphs leave unread by contract (`read`: the keys its graphs do read):
//   - feature-extraction: AutoModel's pooler (BertPooler: dense + tanh of the first token; SigLIP's
//     and SigLIP 2's text head(last[:, -1])); the contract's output is last_hidden_state (docs/design.md);
//   - led: Longformer's global-attention projections (query_global, key_global, value_global),
//     used only with a global_attention_mask, which the encoder graph has no input for
//     (archs/bart.cpp);
//   - the training-only tensors the architecture names (Architecture::training_only: the wav2vec2
//     family's masked_spec_embed, DINOv2/v3's embeddings.mask_token, BatchNorm's num_batches_tracked);
//   - esm's contact_head: contact prediction from the attention maps, not from last_hidden_state;
//   - wav2vec2-conformer's encoder.pos_conv_embed: built but never called by
//     Wav2Vec2ConformerEncoder.forward (modeling_wav2vec2_conformer.py);
//   - llava, vipllava, llava_next: the tower runs up to the deepest vision_feature_layer (archs/llava.h), so its later
//     layers, post_layernorm and SigLIP's head never reach the image features.
//   - phi4_multimodal: the same for its vision tower (up to vision_config.feature_layer).
//   - xmod: the language adapters of the languages other than default_language (archs/xmod.cpp:
//     the graph runs that language's).
//   - markuplm: XPathEmbeddings.xpath_unitseq2_embeddings, built but never called (archs/markuplm.cpp).
//   - luke: the entity path (entity_embeddings, the entity-aware queries w2e_query / e2w_query /
//     e2e_query): the graph is LukeModel's word-only path, without entity inputs (archs/luke.cpp).
//   - layoutlmv3: the visual part (patch_embed, cls_token, pos_embed, LayerNorm, norm), read only with
//     pixel_values, which the text side's graph has no input for (archs/layoutlmv3.cpp).
//   - longcat_flash: the gate / up projections of the zero-computation experts (those without a
//     down_proj): LongcatFlashExperts allocates gate_up_proj for every expert and never reads the
//     identity experts' rows (archs/longcat_flash.cpp).
//   - clap_text_model: ClapTextEmbeddings' persistent buffers position_ids (0..max-1, unread: the
//     positions come from input_ids) and token_type_ids (zeros, read only when forward is given no
//     token_type_ids, which the graph takes as an input) (archs/contrastive_text_towers.cpp).
//   - qwen4_exp_text: Qwen4ExpTextNGramEmbedding's persistent buffers layer_multipliers,
//     ngram_heads_vocab_sizes and ngram_heads_offsets, functions of the config that _init_weights
//     recomputes and the graph holds as constants (archs/qwen4_exp.cpp).
bool unread_by_contract(const RegistryEntry& e, const Architecture& arch, const std::string& key,
                        const std::set<std::string>& read) {
  if (arch.training_only(key)) return true;
  const std::string type = e.model_type;
  if (type == "qwen4_exp_text")
    for (const char* buffer : {".layer_multipliers", ".ngram_heads_vocab_sizes", ".ngram_heads_offsets"})
      if (key.ends_with(std::string(".ple.ple_embedding") + buffer)) return true;
  if (type == "esm" && key.starts_with("contact_head.")) return true;  // reads attention maps (archs/esm.cpp)
  // BrosTextEmbeddings' persistent position_ids buffer: 0..max_position_embeddings - 1, never trained; the
  // graph counts the positions itself (archs/bros.cpp)
  if (type == "bros" && key == "embeddings.position_ids") return true;
  if (type == "xmod" && key.find(".output.adapter_modules.") != std::string::npos) return true;
  if (type == "markuplm" && key.find("xpath_embeddings.xpath_unitseq2_embeddings.") != std::string::npos) return true;
  if (type == "luke") {
    if (key.starts_with("entity_embeddings.")) return true;
    for (const char* part : {".w2e_query.", ".e2w_query.", ".e2e_query."})
      if (key.find(part) != std::string::npos) return true;
  }
  if (type == "longcat_flash" && key.find(".mlp.experts.") != std::string::npos)
    for (const char* part : {".gate_proj.weight", ".up_proj.weight"})
      if (key.ends_with(part) && !read.count(key.substr(0, key.size() - std::string(part).size()) + ".down_proj.weight"))
        return true;
  if (type == "clap_text_model" && (key == "embeddings.position_ids" || key == "embeddings.token_type_ids"))
    return true;
  if (type == "layoutlmv3")
    for (const char* part : {"patch_embed.", "cls_token", "pos_embed", "LayerNorm.", "norm."})
      if (key.starts_with(part)) return true;
  if (std::string(e.task) == "feature-extraction")
    return key.starts_with("pooler.") ||
           ((type == "siglip_text_model" || type == "siglip2_text_model") && key.starts_with("head."));
  if (type == "led")
    for (const char* part : {".query_global.", ".key_global.", ".value_global."})
      if (key.find(part) != std::string::npos) return true;
  if (type == "wav2vec2-conformer") return key.find(".encoder.pos_conv_embed.") != std::string::npos;
  if (type == "llava" || type == "vipllava" || type == "llava_next" || type == "phi4_multimodal") {
    const std::string tower =
        type == "phi4_multimodal" ? "model.embed_tokens_extend.image_embed.img_processor." : "vision_tower.";
    const std::string layers = tower + "encoder.layers.";
    if (key.starts_with(tower + "post_layernorm.") || key.starts_with(tower + "head.")) return true;
    auto layer = [&](const std::string& k) { return k.starts_with(layers) ? std::stoi(k.substr(layers.size())) : -1; };
    int deepest = -1;
    for (const std::string& k : read) deepest = std::max(deepest, layer(k));
    return layer(key) > deepest;
  }
  return false;
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += "\n    " + n;
  return s;
}

class RegistryParams : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistryParams, GraphsReadTheCheckpointKeysOfTransformers) {
  const std::string type = GetParam();
  const fs::path config = kData / "configs" / (type + ".json"), keys = kData / "param_keys" / (type + ".txt");
  const std::string how = "add a tiny config.json (model_type, architectures) as tests/data/configs/" + type +
                          ".json and run `.venv/bin/python scripts/gen_param_keys.py " + type +
                          "` (which writes the config itself for a type with a parity row)";
  if (!fs::is_regular_file(config) || !fs::is_regular_file(keys))
    FAIL() << "registry row '" << type << "' has no " << (fs::is_regular_file(config) ? keys : config) << ": " << how;

  std::set<std::string> want;
  std::ifstream in(keys);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) want.insert(line);

  const RegistryEntry& entry = find_architecture(type, config.string());
  const HfConfig cfg = with_class_defaults(HfConfig::load(config.string()), type);
  std::unique_ptr<Architecture> arch = entry.create(cfg, DataType::FLOAT);
  std::set<std::string> got, names, files;
  for (const NamedGraph& g : arch->build_graphs()) {
    read_keys(g.model.graph, got);
    // each graph its own files in both layouts (package/layout.h): a plain role, a relative hf path
    EXPECT_TRUE(names.insert(g.path.name).second) << type << ": two graphs named '" << g.path.name << "'";
    EXPECT_TRUE(files.insert(g.path.hf).second) << type << ": two graphs at '" << g.path.hf << "'";
    EXPECT_EQ(g.path.name.find('/'), std::string::npos) << type << ": graph '" << g.path.name << "'";
    EXPECT_FALSE(g.path.hf.empty() || g.path.hf.front() == '/' || g.path.hf.find("..") != std::string::npos)
        << type << ": graph '" << g.path.name << "' at '" << g.path.hf << "'";
  }

  // a key the checkpoint holds under another name (weights/weight_plan.h legacy_keys: ESM's inv_freq)
  std::set<std::string> read;
  for (const std::string& k : got) {
    std::string as_saved = k;
    if (!want.contains(k))
      for (const std::string& old : legacy_keys(k))
        if (want.contains(old)) {
          as_saved = old;
          break;
        }
    read.insert(as_saved);
  }
  got = read;
  std::vector<std::string> extra, missing;
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::erase_if(missing, [&](const std::string& k) { return unread_by_contract(entry, *arch, k, got); });
  EXPECT_TRUE(extra.empty()) << type << ": the graphs read keys transformers does not write:" << join(extra);
  EXPECT_TRUE(missing.empty()) << type << ": transformers writes keys no graph reads:" << join(missing);
}

std::vector<std::string> registered_types() {
  std::vector<std::string> out;
  for (const RegistryEntry& e : registry()) out.emplace_back(e.model_type);
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryRow, RegistryParams, ::testing::ValuesIn(registered_types()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string name = p.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace mobius
