// Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3-VL-MoE (transformers/models/{qwen2_vl,qwen2_5_vl,
// qwen3_vl,qwen3_vl_moe}/{configuration,modeling}_*.py, transformers/vision_utils.py), task
// image-text-to-text (tasks/image_text_to_text.h, docs/vlm.md).
// Checkpoint keys as transformers saves them: qwen2_vl, qwen2_5_vl visual.*, model.* (the text
// decoder), lm_head; qwen3_vl, qwen3_vl_moe model.visual.*, model.language_model.*, lm_head.
// qwen3_vl_moe is qwen3_vl with Qwen3-MoE's sparse blocks in the text decoder (num_experts,
// num_experts_per_tok, moe_intermediate_size, decoder_sparse_step, mlp_only_layers; archs/
// mixtral.cpp create_qwen3_moe), the experts stacked, the top-k weights always renormalized.
//   vision (visual): pixel_values [num_patches, in_channels * temporal_patch_size *
//     patch_size^2] (the processor's flattened patches), image_grid_thw int64 [num_images, 3] ->
//     patch_embed (Conv3d with stride = kernel, i.e. one MatMul per patch) -> blocks.* (pre-norm
//     layers: attn with fused qkv and 2-D RoPE over (h, w) patch coordinates, mlp) -> merger
//     (ln_q, then spatial_merge_size^2 neighbouring patches concatenated -> mlp.0, GELU, mlp.2)
//     -> image_features [num_patches / spatial_merge_size^2, text hidden_size]
//       qwen2_vl:   LayerNorm norm1/norm2/ln_q (eps 1e-6), MLP fc1/fc2 (embed_dim * mlp_ratio,
//                   hidden_act quick_gelu); every block attends within its image frame
//       qwen2_5_vl: RMSNorm (eps 1e-6), gated MLP with bias (intermediate_size, hidden_act);
//                   blocks not in fullatt_block_indexes attend within windows of
//                   window_size / spatial_merge_size / patch_size merged patches
//       qwen3_vl:   patch_embed with bias, plus pos_embed (num_position_embeddings, a square
//                   grid) resampled bilinearly (align_corners) to each image's grid; LayerNorm,
//                   MLP linear_fc1/linear_fc2 (hidden_act); merger norm/linear_fc1/linear_fc2.
//                   DeepStack (deepstack_visual_indexes): the blocks listed there feed
//                   deepstack_merger_list.{j} (a merger whose LayerNorm is over the merged width),
//                   whose outputs transformers' Qwen3VLTextModel adds to the hidden states of the
//                   image tokens after decoder layers 0..k-1 (_deepstack_process). onnxruntime-genai
//                   has no input for them, so they ride in the same tensors: image_features is
//                   [tokens, hidden_size * (1 + k)] (the merger's output, then level 0..k-1),
//                   inputs_embeds [batch, seq, hidden_size * (1 + k)] (zeros past the token
//                   embedding on text tokens), and the decoder slices it (docs/vlm.md)
//     transformers packs the patches (cu_seqlens) and permutes them into window order
//     (get_vision_window_index), then reverses it after the merger; attention is equivariant to
//     that permutation and the merger's groups stay whole, so here the patches keep the processor's
//     order and each block gets a mask: same frame (and same window). Every quantity is computed
//     from image_grid_thw in the graph, for any number of images of any sizes.
//   decoder: the qwen2 text decoder (archs/llama.cpp qwen2_spec; qwen3_vl: the qwen3 decoder,
//     q_norm/k_norm) with multimodal RoPE: position_ids [3, batch, seq] (temporal, height, width
//     rows; transformers get_rope_index), channel block k of rope_parameters.mrope_section taking
//     its angles from row k (qwen3_vl interleaved: channel 3i+1 (i < section[1]) from the height
//     row, 3i+2 (i < section[2]) from the width row, the others from the temporal row).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "archs/mrope_decoder.h"
#include "blocks/vision_grid.h"
#include "registry/config_defaults.h"
#include "tasks/image_text_to_text.h"
#include "util/error.h"

namespace mobius {

namespace {

enum class Family { qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe };

struct VisionSpec {
  int64_t embed_dim, depth, num_heads, spatial_merge_size, out_hidden_size;
  Shape kernel;                        // patch_embed.proj.weight: [embed_dim, in_channels, temporal, patch, patch]
  int64_t patch_dim;                   // in_channels * temporal_patch_size * patch_size^2
  int64_t window = 0;                  // qwen2_5_vl: window side in merged patches
  bool patch_bias = false;             // qwen3_vl
  int64_t grid_side = 0;               // qwen3_vl: pos_embed is [grid_side^2, embed_dim]
  std::string merger_norm = "ln_q", merger_fc1 = "mlp.0", merger_fc2 = "mlp.2";
  std::vector<bool> full_attention;    // per block: frame-wide (true) or windowed
  // qwen3_vl DeepStack levels in block order (the order transformers collects them): the block
  // whose output feeds the level, and its merger deepstack_merger_list.{merger}
  struct DeepStackLevel {
    int64_t block, merger;
  };
  std::vector<DeepStackLevel> deepstack;
  double rope_theta = 10000.0;
  DecoderSpec block;                   // the blocks' norms, attention and MLP
};

// The vision_config of `c` (Qwen2VLVisionConfig / Qwen2_5_VLVisionConfig: their defaults and
// attribute_map num_attention_heads -> num_heads, num_hidden_layers -> depth).
VisionSpec vision_spec(const HfConfig& c, Family f, DataType dtype) {
  std::optional<HfConfig> sub = c.sub("vision_config");
  if (!sub) c.fail("vision_config", "is required for a Qwen2-VL model: the vision tower's sizes");
  const bool q25 = f == Family::qwen2_5_vl, q3 = f == Family::qwen3_vl || f == Family::qwen3_vl_moe;
  const HfConfig v =
      with_class_defaults(with_attribute_map(*sub, {{"num_attention_heads", "num_heads"}, {"num_hidden_layers", "depth"}}),
                          f == Family::qwen3_vl_moe ? "qwen3_vl_moe_vision"
                          : q3                      ? "qwen3_vl_vision"
                          : q25                     ? "qwen2_5_vl_vision"
                                                    : "qwen2_vl_vision");
  VisionSpec s;
  s.embed_dim = q25 || q3 ? v.get_int("hidden_size") : v.int_or("embed_dim", 1280);
  s.depth = v.int_or("depth", 32);
  s.num_heads = v.int_or("num_heads", 16);
  if (s.num_heads <= 0 || s.embed_dim % s.num_heads != 0 || (s.embed_dim / s.num_heads) % 4 != 0)
    v.fail("num_heads", "must divide the vision width into heads whose size is a multiple of 4 (2-D RoPE)");
  const int64_t patch = v.int_or("patch_size", 14);
  const int64_t channels = v.int_or("in_channels", 3), temporal = v.int_or("temporal_patch_size", 2);
  if (patch <= 0 || channels <= 0 || temporal <= 0) v.fail("patch_size", "the patch sizes must be positive");
  s.kernel = {s.embed_dim, channels, temporal, patch, patch};
  s.patch_dim = channels * temporal * patch * patch;
  s.spatial_merge_size = v.int_or("spatial_merge_size", 2);
  if (s.spatial_merge_size <= 0) v.fail("spatial_merge_size", "must be positive");
  s.out_hidden_size = q25 || q3 ? v.int_or("out_hidden_size", 3584) : v.get_int("hidden_size");
  if (auto rope = v.sub("rope_parameters")) s.rope_theta = rope->float_or("rope_theta", 10000.0);
  s.full_attention.assign(static_cast<size_t>(s.depth), true);
  if (q25) {
    s.window = v.int_or("window_size", 112) / s.spatial_merge_size / patch;
    if (s.window <= 0) v.fail("window_size", "must cover at least one merged patch");
    std::vector<double> full = v.has("fullatt_block_indexes") ? v.float_list("fullatt_block_indexes")
                                                              : std::vector<double>{7, 15, 23, 31};
    s.full_attention.assign(static_cast<size_t>(s.depth), false);
    for (double i : full)
      if (i >= 0 && i < static_cast<double>(s.depth)) s.full_attention[static_cast<size_t>(i)] = true;
  }
  if (q3) {
    s.patch_bias = true;
    const int64_t positions = v.int_or("num_position_embeddings", 2304);
    s.grid_side = static_cast<int64_t>(std::sqrt(static_cast<double>(positions)));
    if (positions <= 0 || s.grid_side * s.grid_side != positions)
      v.fail("num_position_embeddings", "must be a square (the learned position grid)");
    // Qwen3VLVisionModel.forward: block b (in order) feeds a level when b is in the list, through
    // the merger at its first index there; an index outside [0, depth) feeds none
    const std::vector<double> indexes =
        v.has("deepstack_visual_indexes") ? v.float_list("deepstack_visual_indexes") : std::vector<double>{8, 16, 24};
    for (int64_t block = 0; block < s.depth; ++block) {
      const auto it = std::find(indexes.begin(), indexes.end(), static_cast<double>(block));
      if (it != indexes.end()) s.deepstack.push_back({block, static_cast<int64_t>(it - indexes.begin())});
    }
    s.merger_norm = "norm";
    s.merger_fc1 = "linear_fc1";
    s.merger_fc2 = "linear_fc2";
  }
  DecoderSpec& b = s.block;
  b.hidden_size = s.embed_dim;
  b.dtype = dtype;
  b.norm_eps = 1e-6f;
  b.norm_kind = q25 ? NormKind::RMSNorm : NormKind::LayerNorm;
  b.names.input_layernorm = "norm1";
  b.names.post_attention_layernorm = "norm2";
  b.names.self_attn = "attn";
  AttentionOptions& a = b.attention;
  a.hidden_size = s.embed_dim;
  a.num_attention_heads = a.num_key_value_heads = s.num_heads;
  a.head_dim = s.embed_dim / s.num_heads;
  a.qkv_bias = a.o_bias = true;
  a.dtype = dtype;
  a.fused_qkv = FusedQKV{.name = "qkv"};
  a.names.o_proj = "proj";
  const std::string act = v.string_or("hidden_act", q3 ? "gelu_pytorch_tanh" : q25 ? "silu" : "quick_gelu");
  if (!is_known_activation(act)) v.fail("hidden_act", "unsupported activation '" + act + "'");
  if (q25)
    b.mlp = {s.embed_dim, v.get_int("intermediate_size"), act, true, dtype};
  else if (q3)
    b.mlp = {.hidden_size = s.embed_dim, .intermediate_size = v.get_int("intermediate_size"), .hidden_act = act,
             .bias = true, .dtype = dtype, .gated = false, .up_name = "linear_fc1", .down_name = "linear_fc2"};
  else
    b.mlp = {.hidden_size = s.embed_dim, .intermediate_size = s.embed_dim * v.int_or("mlp_ratio", 4),
             .hidden_act = act, .bias = true, .dtype = dtype, .gated = false};
  return s;
}

// The patch merger (Qwen2VLPatchMerger / Qwen2_5_VLPatchMerger / Qwen3VLVisionPatchMerger): the
// norm over each patch, or for Qwen3-VL's DeepStack mergers (use_postshuffle_norm) over the
// spatial_merge_size^2 neighbouring patches concatenated; then fc1, GELU, fc2.
class PatchMerger : public Module {
 public:
  PatchMerger(const VisionSpec& s, bool postshuffle_norm)
      : width_(s.embed_dim * s.spatial_merge_size * s.spatial_merge_size), postshuffle_norm_(postshuffle_norm) {
    NormOptions n = s.block.norm();
    if (postshuffle_norm) n.dim = width_;
    norm = adopt(s.merger_norm, make_norm(n));
    fc1 = child<Linear>(s.merger_fc1, LinearOptions{width_, width_, true, s.block.dtype});
    fc2 = child<Linear>(s.merger_fc2, LinearOptions{width_, s.out_hidden_size, true, s.block.dtype});
  }

  // x [num_patches, embed_dim] (a merge block's patches consecutive) ->
  // [num_patches / spatial_merge_size^2, out_hidden_size].
  Value* forward(Ops& op, Value* x) const {
    auto scope = enter(op);
    const std::vector<int64_t> merged{-1, width_};
    x = postshuffle_norm_ ? norm->forward(op, op.Reshape(x, merged)) : op.Reshape(norm->forward(op, x), merged);
    return fc2->forward(op, op.Gelu(fc1->forward(op, x)));
  }

  Norm* norm;
  Linear *fc1, *fc2;

 private:
  int64_t width_;
  bool postshuffle_norm_;
};

class VisionTower : public Module {
 public:
  explicit VisionTower(const VisionSpec& s) : s_(s) {
    patch_weight = param("patch_embed.proj.weight", s.kernel, s.block.dtype);
    if (s.patch_bias) patch_bias = param("patch_embed.proj.bias", {s.embed_dim}, s.block.dtype);
    if (s.grid_side) pos_embed = param("pos_embed.weight", {s.grid_side * s.grid_side, s.embed_dim}, s.block.dtype);
    for (int64_t i = 0; i < s.depth; ++i) blocks.push_back(child<DecoderLayer>("blocks." + std::to_string(i), s.block, i));
    merger = child<PatchMerger>("merger", s, false);
    for (const VisionSpec::DeepStackLevel& l : s.deepstack)
      deepstack.push_back(child<PatchMerger>("deepstack_merger_list." + std::to_string(l.merger), s, true));
  }

  // pixel_values: float32 [num_patches, patch_dim]; grid_thw: int64 [num_images, 3].
  // Returns [num_patches / spatial_merge_size^2, out_hidden_size * (1 + DeepStack levels)] in the
  // model dtype: the merger's output, then each level's on the feature axis.
  Value* forward(Ops& op, Value* pixel_values, Value* grid_thw) const {
    auto scope = enter(op);
    const DataType dt = s_.block.dtype;
    const int64_t m = s_.spatial_merge_size;
    // each patch's frame and (h, w) coordinate, in the processor's order: per frame, merge blocks
    // row-major, then the m x m patches of a block (blocks/vision_grid.h)
    const PatchGrid grid = patch_grid(op, grid_thw, m);

    Value* x = pixel_values;
    if (dt != DataType::FLOAT) x = op.Cast(x, {.to = dt});
    Value* w = op.Reshape(patch_weight->value(op), std::vector<int64_t>{s_.embed_dim, s_.patch_dim});
    x = op.Gemm(x, w, patch_bias ? patch_bias->value(op) : nullptr, {.transB = 1});  // [patches, embed_dim]
    if (pos_embed) x = op.Add(x, resample_positions(op, pos_embed->value(op), s_.grid_side, grid, true, dt));
    x = op.Unsqueeze(x, {0});

    AttentionContext full{frame_mask(op, grid.frame_start, nullptr, nullptr, dt),
                          axial_rope(op, grid.row, grid.col, s_.block.attention.head_dim, s_.rope_theta, dt)};
    AttentionContext windowed = full;
    if (s_.window > 0) {
      auto win = [&](Value* v) { return op.Div(v, static_cast<double>(s_.window)); };
      windowed.mask = frame_mask(op, grid.frame_start, win(grid.block_row), win(grid.block_col), dt);
    }
    std::vector<Value*> features(1 + deepstack.size());
    for (size_t i = 0, level = 0; i < blocks.size(); ++i) {
      x = blocks[i]->forward(op, x, s_.full_attention[i] ? full : windowed, {}).hidden;
      if (level < deepstack.size() && s_.deepstack[level].block == static_cast<int64_t>(i)) {
        features[1 + level] = deepstack[level]->forward(op, op.Squeeze(x, {0}));
        ++level;
      }
    }
    features[0] = merger->forward(op, op.Squeeze(x, {0}));
    return features.size() == 1 ? features[0] : op.Concat(features, {.axis = 1});
  }

  Parameter* patch_weight;  // Conv3d weight, applied as a [embed_dim, patch_dim] matrix
  Parameter* patch_bias = nullptr;
  Parameter* pos_embed = nullptr;
  std::vector<DecoderLayer*> blocks;
  PatchMerger* merger;
  std::vector<PatchMerger*> deepstack;  // per level of VisionSpec::deepstack

 private:
  VisionSpec s_;
};

// Qwen3VLTextModel with DeepStack: the M-RoPE decoder whose inputs_embeds are
// [batch, seq, hidden * (1 + levels)]: the token (or merged image) embedding, then level j's
// features (zeros on text tokens), added to the hidden states after layer j (_deepstack_process
// adds them at the image tokens; adding the zeros elsewhere changes nothing).
class DeepStackDecoder : public MRopeDecoder {
 public:
  DeepStackDecoder(const DecoderSpec& s, std::vector<int64_t> section, int64_t levels)
      : MRopeDecoder(s, std::move(section), true), levels_(levels) {}

 protected:
  Value* stem(Ops& op, Value* h, const CausalLMInputs& in) const override {
    return in.inputs_embeds ? level(op, h, -1) : h;
  }
  Value* layer_output(Ops& op, size_t i, Value* h, const CausalLMInputs& in) const override {
    if (!in.inputs_embeds || static_cast<int64_t>(i) >= levels_) return h;
    return op.Add(h, level(op, in.inputs_embeds, static_cast<int64_t>(i)));
  }

 private:
  // Channels [hidden * (1 + j), hidden * (2 + j)) of the wide embeddings (j = -1: the embedding).
  Value* level(Ops& op, Value* wide, int64_t j) const {
    const int64_t hidden = spec().hidden_size;
    return op.Slice(wide, {hidden * (1 + j)}, {hidden * (2 + j)}, {2});
  }

  int64_t levels_;
};

class Qwen2VL : public ImageTextToText {
 public:
  Qwen2VL(const HfConfig& c, Family f, DataType dtype) {
    // Qwen2VLConfig / Qwen2_5_VLConfig / Qwen3VLConfig: the text fields in text_config, or at the
    // top level in checkpoints saved before transformers 5 (the class pops them from there)
    const bool moe = f == Family::qwen3_vl_moe, q3 = f == Family::qwen3_vl || moe;
    const std::optional<HfConfig> sub = c.sub("text_config");
    const HfConfig text = with_class_defaults(sub ? *sub : c, moe                       ? "qwen3_vl_moe_text"
                                                              : q3                        ? "qwen3_vl_text"
                                                              : f == Family::qwen2_5_vl ? "qwen2_5_vl_text"
                                                                                        : "qwen2_vl_text");
    // rope_type "mrope" is the default rope (Qwen2_5_VLTextConfig.convert_rope_params_to_dict);
    // rope_theta defaults to the text config class' default_theta
    const RopeDefaults rope{.rope_theta = q3 ? 500000.0 : 1000000.0, .rope_type_aliases = {{"mrope", "default"}}};
    DecoderSpec s;
    if (q3) {  // Qwen3VLTextAttention: q_norm / k_norm (RMSNorm), attention_bias; Qwen3VLTextMLP: no bias
      s = llama_spec(text, dtype, rope);
      s.attention.qk_norm = QKNorm{};
      s.mlp.bias = false;
      s.names.model = "model.language_model";
    } else {
      s = qwen2_spec(text, dtype, rope);
    }
    if (moe) {  // Qwen3VLMoeTextSparseMoeBlock: Qwen3-MoE's router, top-k weights always renormalized;
                // Qwen3VLMoeTextExperts: experts.gate_up_proj [E, 2I, H] (gate | up), down_proj [E, H, I]
      // num_experts is saved as num_local_experts (attribute_map)
      MoEOptions m = read_moe_options(text, s, "num_local_experts", "moe_intermediate_size");
      m.router.norm_topk_prob = true;
      m.layout = ExpertLayout::stacked;
      m.stacked_gate_up_name = "experts.gate_up_proj";
      m.stacked_down_name = "experts.down_proj";
      s.make_feed_forward = sparse_moe(m, s.mlp, read_sparse_layers(text, s.num_hidden_layers));
    }
    // tie_word_embeddings at the top level, or in text_config (saved before transformers 5); not
    // for qwen3_vl_moe, whose text_config saves its class default true while transformers ties by
    // the top-level field (false by default)
    s.tie_word_embeddings =
        c.bool_or("tie_word_embeddings", false) || (!moe && text.bool_or("tie_word_embeddings", false));
    std::vector<int64_t> section;
    if (auto p = RopeConfig::params(text))
      if (p->has("mrope_section"))
        for (double v : p->float_list("mrope_section")) {
          if (!(v >= 0 && v <= static_cast<double>(kMaxHeadDim)) || v != std::trunc(v))  // before converting
            p->fail("mrope_section", "expected integers in [0, " + std::to_string(kMaxHeadDim) + "]");
          section.push_back(static_cast<int64_t>(v));
        }
    if (section.empty()) section = q3 ? std::vector<int64_t>{24, 20, 20} : std::vector<int64_t>{16, 24, 24};
    if (section.size() != 3 || section[0] < 0 || section[1] < 0 || section[2] < 0 ||
        section[0] + section[1] + section[2] != s.rope.rotary_dim() / 2)
      text.fail("rope_parameters.mrope_section", "must be 3 numbers that sum to head_dim / 2 = " +
                                                     std::to_string(s.rope.rotary_dim() / 2));
    hidden_size_ = s.hidden_size;
    image_token_id_ = c.int_or("image_token_id", 151655);  // the config classes' default
    VisionSpec v = vision_spec(c, f, dtype);
    // Qwen3VLTextModel adds level j after layer j for the levels it has layers for
    if (static_cast<int64_t>(v.deepstack.size()) > s.num_hidden_layers)
      v.deepstack.resize(static_cast<size_t>(s.num_hidden_layers));
    levels_ = static_cast<int64_t>(v.deepstack.size());
    if (v.out_hidden_size != hidden_size_)
      c.fail("vision_config", "the merger's output width (" + std::to_string(v.out_hidden_size) +
                                  ") must equal the text hidden_size (" + std::to_string(hidden_size_) + ")");
    patch_dim_ = v.patch_dim;
    genai_ = {q3 ? "qwen3_vl" : "qwen2_5_vl", v.kernel[3].value, v.spatial_merge_size, v.kernel[2].value,
              {{"image_token_id", image_token_id_},
               {"video_token_id", c.int_or("video_token_id", 151656)},
               {"vision_start_token_id", c.int_or("vision_start_token_id", 151652)}}};
    text_ = levels_ ? adopt("", std::make_unique<DeepStackDecoder>(s, section, levels_))
                    : adopt("", std::make_unique<MRopeDecoder>(s, section, q3));
    visual_ = child<VisionTower>(q3 ? "model.visual" : "visual", v);
  }

  const CausalLM& text() const override { return *text_; }
  // The token embeddings, zero-padded to hidden_size() with DeepStack (DeepStackDecoder).
  Value* embed_tokens(Ops& op, Value* input_ids) const override {
    Value* e = text_->embed(op, input_ids);
    if (!levels_) return e;
    Value* zeros = op.builder().constant_float(std::vector<float>(static_cast<size_t>(levels_ * hidden_size_), 0.0f),
                                               {1, 1, levels_ * hidden_size_}, text_->dtype());
    Value* batch_seq = op.Shape(e, {.start = 0, .end = 2});
    Value* shape = op.Concat({batch_seq, op.builder().ints({levels_ * hidden_size_})}, {.axis = 0});
    return op.Concat({e, op.Expand(zeros, shape)}, {.axis = 2});
  }
  // The width of image_features and inputs_embeds: the text hidden_size, times 1 + the DeepStack
  // levels (onnxruntime-genai sizes both buffers by genai_config's decoder.hidden_size).
  int64_t hidden_size() const override { return hidden_size_ * (1 + levels_); }
  int64_t image_token_id() const override { return image_token_id_; }
  std::vector<GraphInput> vision_inputs() const override {
    return {{"pixel_values", DataType::FLOAT, {"num_patches", patch_dim_}},
            {"image_grid_thw", DataType::INT64, {"num_images", 3}}};
  }
  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    return visual_->forward(op, in.at(0), in.at(1));
  }
  Shape position_ids_shape() const override { return {3, "batch_size", "sequence_length"}; }
  // onnxruntime-genai's qwen2_5_vl / qwen3_vl pipeline (its Qwen2.5-VL image processor,
  // Qwen2VLPositionInputs): the qwen2_5_vl one serves Qwen2-VL too, whose package has the same
  // graphs, I/O, processing and positions
  std::optional<GenaiMultimodal> genai_multimodal() const override { return genai_; }

 private:
  MRopeDecoder* text_;
  VisionTower* visual_;
  int64_t hidden_size_, image_token_id_, patch_dim_, levels_ = 0;
  GenaiMultimodal genai_;
};

}  // namespace

std::unique_ptr<Architecture> create_qwen2_vl(const HfConfig& c, DataType dtype) {
  return std::make_unique<Qwen2VL>(c, Family::qwen2_vl, dtype);
}

std::unique_ptr<Architecture> create_qwen2_5_vl(const HfConfig& c, DataType dtype) {
  return std::make_unique<Qwen2VL>(c, Family::qwen2_5_vl, dtype);
}

std::unique_ptr<Architecture> create_qwen3_vl(const HfConfig& c, DataType dtype) {
  return std::make_unique<Qwen2VL>(c, Family::qwen3_vl, dtype);
}

std::unique_ptr<Architecture> create_qwen3_vl_moe(const HfConfig& c, DataType dtype) {
  return std::make_unique<Qwen2VL>(c, Family::qwen3_vl_moe, dtype);
}

}  // namespace mobius
