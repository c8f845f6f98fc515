#include "driver/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "driver/apply_weights.h"
#include "package/copied_files.h"
#include "package/writer.h"
#include "registry/config_defaults.h"
#include "registry/diffusers_registry.h"
#include "registry/registry.h"
#include "util/error.h"
#include "util/input_files.h"
#include "weights/safetensors.h"
#include "weights/weight_plan.h"

namespace fs = std::filesystem;

namespace mobius {
namespace {

// One entry of model_index.json and what the build makes of it.
struct Component {
  std::string key;                      // the entry's name: its subfolder
  std::string class_name;               // its [library, class]'s class
  std::string dir;                      // the subfolder
  std::optional<HfConfig> config;       // its config.json, with its class' defaults
  std::unique_ptr<Architecture> arch;   // built components only
  std::vector<NamedGraph> graphs;       // lowered, at their package paths
  std::unique_ptr<Checkpoint> checkpoint;
  std::vector<WeightPlan> plans;
  nlohmann::json manifest;              // what became of it (pipeline.h)
};

// A subfolder name model_index.json may give: a plain file name (no separator, not "." or "..",
// no control or quoting characters), as DiffusionPipeline.save_pretrained writes its attributes.
bool plain_name(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 128) return false;
  for (unsigned char c : s)
    if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// The component's architecture from the registry of its config: diffusers' _class_name, or a
// registered transformers model_type; `conditioning`: what the pipeline's ControlNetModel or
// T2IAdapter gives, which a class with a create_conditioned factory takes. Sets c.manifest to the
// reason and returns nullptr when neither registry holds it.
std::unique_ptr<Architecture> create_component(Component& c, DataType dtype, const PipelineConditioning& conditioning) {
  const HfConfig raw = HfConfig::load(checkpoint_file(c.dir, "config.json").string());
  std::string model_type;
  ArchFactory create;
  ConditionedFactory create_conditioned = nullptr;
  if (is_diffusers_config(raw)) {
    const std::string cls = raw.get_string("_class_name");
    const auto& rows = diffusers_registry();
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const DiffusersEntry& e) { return cls == e.class_name; });
    if (row == rows.end()) {
      c.manifest = {{"skipped", "diffusers class '" + escaped(cls) + "' is not supported yet"}};
      return nullptr;
    }
    c.config = with_diffusers_defaults(raw, cls);
    create = row->create;
    if (!conditioning.empty()) create_conditioned = row->create_conditioned;
  } else {
    model_type = raw.string_or("model_type", "");
    if (std::none_of(registry().begin(), registry().end(),
                     [&](const RegistryEntry& e) { return model_type == e.model_type; })) {
      c.manifest = {{"skipped", explain_unregistered(model_type)}};
      return nullptr;
    }
    c.config = with_class_defaults(raw, model_type);
    create = find_architecture(model_type, raw.file()).create;
    if (const ArchFactory own = pipeline_transformers_factory(model_type)) create = own;
  }
  try {
    return create_conditioned ? create_conditioned(*c.config, dtype, conditioning) : create(*c.config, dtype);
  } catch (const FieldError& e) {
    throw e.with_context(c.config->file());
  }
}

// Builds component `c` (its graphs lowered as options say, bound to its own weights); a
// single-graph component's graph takes the entry's name and folder.
void build_component(Component& c, const BuildOptions& o, ExecutionProvider ep, const PipelineConditioning& conditioning) {
  c.arch = create_component(c, o.dtype, conditioning);
  if (!c.arch) return;
  try {
    c.graphs = lower_graphs(*c.arch, *c.config, o, ep, nullptr).graphs;
  } catch (const FieldError& e) {
    throw e.with_context(c.config->file());
  }
  if (c.graphs.size() == 1) {
    c.graphs.front().path = {c.key, c.key + "/model"};
  } else if (c.arch->task() != "diffusion-vae") {
    c.manifest = {{"skipped", c.config->string_or("model_type", c.class_name) + " builds " +
                                  std::to_string(c.graphs.size()) + " graphs (" + c.arch->task() +
                                  "); a pipeline takes a single-graph component (an encoder alone) here"}};
    c.arch.reset();
    c.graphs.clear();
    return;
  }
  nlohmann::json roles = nlohmann::json::array();
  for (NamedGraph& g : c.graphs) {
    g.model.metadata["model_type"] = c.class_name;
    g.model.metadata["task"] = c.arch->task();
    roles.push_back(g.path.name);
  }
  c.manifest = {{"built", roles}, {"class", c.class_name}};
  if (!o.weights) return;
  c.checkpoint = std::make_unique<SafetensorsCheckpoint>(c.dir);
  for (const NamedGraph& g : c.graphs) c.plans.push_back(WeightPlan::bind(g.model.graph, *c.checkpoint));
}

// Whether model_index.json's entry `key` is [library, `class_name`].
bool entry_is(const nlohmann::json& index, const std::string& key, const std::string& class_name) {
  const auto it = index.find(key);
  return it != index.end() && it->is_array() && it->size() == 2 && (*it)[1] == class_name;
}

// What the pipeline's other components feed its denoiser: a ControlNet pipeline's
// (StableDiffusion[XL]ControlNetPipeline) residuals, an adapter pipeline's
// (StableDiffusion[XL]AdapterPipeline) T2IAdapter maps, read from its adapter/config.json (whose
// errors name that file). A component whose folder or config.json is missing feeds nothing (it is
// reported as skipped).
PipelineConditioning pipeline_conditioning(const nlohmann::json& index, const std::string& dir) {
  PipelineConditioning p;
  p.controlnet = entry_is(index, "controlnet", "ControlNetModel");
  std::error_code ec;
  const fs::path adapter = fs::path(dir) / "adapter";
  if (entry_is(index, "adapter", "T2IAdapter") && !fs::is_symlink(adapter, ec) &&
      fs::exists(adapter / "config.json", ec)) {
    const HfConfig config =
        with_diffusers_defaults(HfConfig::load(checkpoint_file(adapter.string(), "config.json").string()), "T2IAdapter");
    try {
      p.adapter = t2i_adapter_states(config);
    } catch (const FieldError& e) {
      throw e.with_context(config.file());
    }
  }
  return p;
}

// Copies the package files (package/copied_files.h kTokenizerFiles, kPipelineFiles) of
// `from` into `to` (created); returns their names.
nlohmann::json copy_folder(const std::string& from, const fs::path& to) {
  nlohmann::json names = nlohmann::json::array();
  fs::create_directories(to);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_copied_file(name)) continue;
    const fs::path src = checkpoint_file(from, name);
    write_file_synced((to / name).string(), read_regular_file(src.string(), size_t{1} << 30));
    names.push_back(name);
  }
  if (ec) throw Error(from + ": cannot list: " + ec.message());
  return names;
}

}  // namespace

bool is_pipeline_source(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(fs::path(dir) / "model_index.json", ec) &&
         !fs::exists(fs::path(dir) / "config.json", ec);
}

BuildReport build_pipeline(const BuildOptions& o) {
  const std::string index_file = checkpoint_file(o.config_dir, "model_index.json").string();
  auto refuse = [&](const std::string& option) {
    throw Error(index_file + ": a diffusers pipeline is built without " + option);
  };
  if (o.layout == PackageLayout::flat) refuse("--layout flat (its components lie in their own folders)");
  if (!o.lora_dir.empty() || !o.lora_runtime.empty()) refuse("--lora / --lora-runtime");
  if (o.try_generic) refuse("--try-generic");
  if (!o.task.empty()) refuse("--task");
  if (o.precision == "keep") refuse("--precision keep (a GGUF file's quantization)");
  BuildReport report;
  report.task = "diffusion-pipeline";
  const ExecutionProvider ep = parse_execution_provider(o.ep);
  check_bfloat16(o, ep, report.warnings);
  quantize_options(o, ep, false);
  check_output_dir(o.output_dir, o.force || o.variant, {o.config_dir});
  const nlohmann::json index = read_json_file(index_file, kMaxJsonBytes);
  if (!index.is_object()) throw Error(index_file + ": not a JSON object");
  report.model_type = index.value("_class_name", std::string("DiffusionPipeline"));
  const PipelineConditioning conditioning = pipeline_conditioning(index, o.config_dir);

  std::vector<Component> components;
  for (const auto& [key, value] : index.items()) {
    if (key.starts_with("_")) continue;  // _class_name, _diffusers_version, _name_or_path
    const std::string where = index_file + ": entry '" + escaped(key) + "'";
    if (!value.is_null() && !value.is_array()) continue;  // a pipeline setting (requires_safety_checker)
    Component& c = components.emplace_back();
    c.key = key;
    if (value.is_null() || (value.is_array() && value.size() == 2 && value[0].is_null() && value[1].is_null())) {
      c.manifest = {{"absent", true}};
      continue;
    }
    if (!value.is_array() || value.size() != 2 || !value[0].is_string() || !value[1].is_string())
      throw Error(where + ": expected [library, class] (as DiffusionPipeline.save_pretrained writes it)");
    if (!plain_name(key)) throw Error(where + ": not a plain folder name");
    c.class_name = value[1].get<std::string>();
    c.dir = (fs::path(o.config_dir) / key).string();  // a plain name: inside the pipeline folder
    std::error_code ec;
    if (fs::is_symlink(c.dir, ec))
      throw Error(c.dir + ": a symbolic link; mobius reads a pipeline's components from its own folders");
    if (!fs::is_directory(c.dir, ec)) {
      c.manifest = {{"skipped", "no folder " + key + "/ in the pipeline"}};
      continue;
    }
    if (fs::exists(fs::path(c.dir) / "config.json", ec)) {
      build_component(c, o, ep, conditioning);
    } else {
      c.manifest = {{"copy", true}};  // a tokenizer, scheduler or processor: copied as it is
    }
  }

  std::vector<PackageGraph> out;
  std::set<std::string> paths;
  for (Component& c : components)
    for (size_t i = 0; i < c.graphs.size(); ++i) {
      NamedGraph& g = c.graphs[i];
      g.model.metadata[kBuildOptionsKey] = build_options_metadata(o);
      if (o.variant) g.path = with_suffix(g.path, variant_dtype(o).suffix);
      if (!paths.insert(g.path.hf).second)
        throw Error(index_file + ": two components write " + g.path.hf + ".onnx (entry '" + escaped(c.key) + "')");
      out.push_back({g.path, &g.model, o.weights ? &c.plans[i] : nullptr});
      report.num_nodes += g.model.graph.nodes.size();
      if (o.weights) report.num_weights += c.plans[i].num_initializers();
    }
  if (out.empty()) throw Error(index_file + ": no component mobius builds (" + [&] {
                                 std::string why;
                                 for (const Component& c : components)
                                   if (c.manifest.contains("skipped"))
                                     why += (why.empty() ? "" : "; ") + c.key + ": " + c.manifest["skipped"].get<std::string>();
                                 return why.empty() ? std::string("none named") : why;
                               }() + ")");
  for (const Component& c : components)
    if (c.manifest.contains("skipped"))
      report.warnings.push_back("pipeline component '" + c.key + "' skipped: " + c.manifest["skipped"].get<std::string>());
    else if (o.weights && c.checkpoint)  // unused: no graph of the component reads it
      for (const std::string& t : c.plans.front().unused())
        if (!c.arch->training_only(t) && std::all_of(c.plans.begin(), c.plans.end(), [&](const WeightPlan& p) {
              return std::find(p.unused().begin(), p.unused().end(), t) != p.unused().end();
            }))
          report.unused_tensors.push_back(c.key + "/" + t);

  WriteOptions w;
  w.layout = PackageLayout::hf;
  w.force = o.force;
  w.add = o.variant;
  w.inputs = {o.config_dir};
  w.progress = o.progress;
  // the manifest always (a later --force knows the package's folders by it); the copied files
  // unless --runtime none
  w.extra_files = [&](const std::string& dir) {
    const bool copy = o.runtime != "none";
    if (copy) write_file_synced((fs::path(dir) / "model_index.json").string(), read_regular_file(index_file));
    nlohmann::json manifest = nlohmann::json::object();
    for (Component& c : components) {
      if (c.manifest.contains("copy"))
        c.manifest = copy ? nlohmann::json{{"copied", copy_folder(c.dir, fs::path(dir) / c.key)}}
                          : nlohmann::json{{"skipped", "--runtime none: not copied"}};
      for (const NamedGraph& g : c.graphs)  // the component's config.json beside each of its graphs
        if (copy)
          write_file_synced((fs::path(dir) / fs::path(g.path.hf).parent_path() / "config.json").string(),
                            read_regular_file(c.config->file()));
      manifest[c.key] = c.manifest;
    }
    write_file_synced((fs::path(dir) / "mobius_manifest.json").string(),
                      nlohmann::json{{"pipeline", report.model_type}, {"components", manifest}}.dump(2) + "\n");
  };
  write_package(o.output_dir, out, w);
  return report;
}

}  // namespace mobius
