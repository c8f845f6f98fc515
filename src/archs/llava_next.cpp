// LLaVA-NeXT (transformers/models/llava_next/{configuration,modeling}_llava_next.py), task
// image-text-to-text (docs/vlm.md): LLaVA's parts (archs/llava.h) over the "anyres" tiles of
// LlavaNextImageProcessor: each image is resized into the best of image_grid_pinpoints and cut
// into tiles of the tower's image_size, after a base tile of the whole image. The vision graph
// does what LlavaNextModel.get_image_features does with them:
//   - the number of tiles of each image from image_sizes (select_best_resolution over the
//     pinpoints: image_size_to_num_patches), the processor's zero padding tiles left out;
//   - the tower, the selected hidden states and multi_modal_projector on every tile;
//   - pack_image_features: the base tile's rows, then the grid of tile features (rows of tiles,
//     each tile's patches row-major) cut to the image's aspect ratio (unpad_image) with
//     image_newline appended to every row of it; images in order.
// All of it is computed in the graph from image_sizes (ONNX ops on dynamic shapes: one Gather of
// the tiles to encode, one Gather of the output rows), so one run takes any number of images of
// any sizes. select_best_resolution and unpad_image compute in float64 as Python does; the
// latter's int(round(x, 7)) is floor(x + 5e-8): equal unless x lies within rounding error of
// n - 5e-8, which x = a·(b/c) for integers a, b, c below 10^5 never does (a fraction of
// denominator c is at least 1/(2e7·c) away from it).
//   vision: pixel_values float32 [num_images, num_patches, num_channels, image_size, image_size]
//           (the processor's, padded to the batch's most tiles), image_sizes int64 [num_images, 2]
//           (each image's original (height, width))
//        -> image_features [num_image_tokens, text hidden_size]
// Accepted: image_grid_pinpoints of positive multiples of vision_config.image_size (at most 2^20
// pixels a side), and a feature selection that leaves (image_size / patch_size)² rows a tile
// (strategy "default" with CLIP's class token, "full" with SigLIP), without which transformers'
// reshape of the tiles fails too.
// Checkpoint keys: llava.h's and image_newline. onnxruntime-genai 0.18 has no llava_next model
// type, so no genai_config.json is written.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "archs/archs.h"
#include "archs/llava.h"
#include "registry/config_defaults.h"

namespace mobius {

namespace {

class LlavaNext : public LlavaFamily {
 public:
  LlavaNext(const HfConfig& cfg, DataType dtype) : LlavaFamily(cfg, dtype) {
    features_ = child<LlavaVisionFeatures>("", cfg, dtype, std::vector<double>{-2.0}, drops_class_token(cfg));
    projector_ = child<LlavaProjector>("multi_modal_projector", cfg, features_->width(), hidden_size(),
                                       cfg.bool_or("multimodal_projector_bias", true), dtype);
    image_newline_ = param("image_newline", {hidden_size()}, dtype);
    const int64_t tile = features_->image_size();
    side_ = tile / features_->patch_size();
    if (features_->tokens() != side_ * side_)
      cfg.fail("vision_feature_select_strategy",
               "leaves " + std::to_string(features_->tokens()) + " rows a tile where the tile grid needs " +
                   std::to_string(side_ * side_) + " ((image_size / patch_size)²): use \"default\" with a CLIP " +
                   "tower (its class token dropped) or \"full\" with SigLIP");
    // LlavaNextConfig.__post_init__'s default pinpoints
    std::vector<std::pair<int64_t, int64_t>> pinpoints = {{336, 672}, {672, 336}, {672, 672}, {1008, 336}, {336, 1008}};
    if (cfg.has("image_grid_pinpoints")) {
      const nlohmann::json& p = cfg.json().at("image_grid_pinpoints");
      if (!p.is_array() || p.empty()) cfg.fail("image_grid_pinpoints", "expected a non-empty list of [height, width]");
      pinpoints.clear();
      for (const nlohmann::json& hw : p) {
        if (!hw.is_array() || hw.size() != 2 || !hw[0].is_number_integer() || !hw[1].is_number_integer())
          cfg.fail("image_grid_pinpoints", "expected a list of [height, width] integer pairs, got " + hw.dump());
        pinpoints.emplace_back(hw[0].get<int64_t>(), hw[1].get<int64_t>());
      }
    }
    constexpr int64_t kMaxSide = int64_t{1} << 20;  // pixels; keeps the graph's int64 areas far from overflow
    for (const auto& [h, w] : pinpoints) {
      if (h <= 0 || w <= 0 || h > kMaxSide || w > kMaxSide || h % tile != 0 || w % tile != 0)
        cfg.fail("image_grid_pinpoints", "resolution " + std::to_string(h) + " x " + std::to_string(w) +
                                             " is not made of whole tiles of vision_config.image_size " +
                                             std::to_string(tile) + " (at most " + std::to_string(kMaxSide) +
                                             " pixels a side)");
      pin_h_.push_back(h);
      pin_w_.push_back(w);
    }
  }

  std::vector<GraphInput> vision_inputs() const override {
    const int64_t s = features_->image_size();
    return {{"pixel_values", DataType::FLOAT, {"num_images", "num_patches", features_->num_channels(), s, s}},
            {"image_sizes", DataType::INT64, {"num_images", 2}}};
  }

  Value* encode_images(Ops& op, const std::vector<Value*>& in) const override {
    Value* pixels = in.at(0);  // float32: cast to the model dtype by features_
    const Grid g = grid(op, in.at(1));
    // the tiles each image has (the processor pads the batch with all-zero tiles), in order
    Value* tiles = op.Add(op.Mul(g.nph, g.npw), 1);
    Layout t = layout(op, tiles);
    Value* max_tiles = op.Shape(pixels, {.start = 1, .end = 2});
    Value* source = op.Add(op.Mul(t.image, max_tiles), t.local);
    const int64_t s = features_->image_size();
    pixels = op.Gather(op.Reshape(pixels, std::vector<int64_t>{-1, features_->num_channels(), s, s}), source);
    Value* x = projector_->forward(op, features_->forward(op, pixels));  // [tiles, side², hidden]
    auto scope = op.builder().scope("pack_image_features");
    Value* table = op.Concat({op.Reshape(x, std::vector<int64_t>{-1, hidden_size()}),
                              op.Unsqueeze(image_newline_->value(op), {0})},
                             {.axis = 0});  // row -1: image_newline
    return op.Gather(table, packed_rows(op, g, t.start));
  }

 private:
  // Per image [num_images] int64: the tile grid of its best pinpoint (nph x npw tiles) and the
  // unpadded part of the (nph·side) x (npw·side) feature grid: rows [r0, r0 + rows), columns
  // [c0, c0 + cols).
  struct Grid {
    Value *nph, *npw, *r0, *rows, *c0, *cols;
  };
  // Row k of a concatenation of per-image runs of counts[i] rows: its image and its index in the
  // image's run; start: each run's first row [num_images].
  struct Layout {
    Value *image, *local, *start;
  };

  Grid grid(Ops& op, Value* image_sizes) const {
    GraphBuilder& b = op.builder();
    auto scope = b.scope("anyres_grid");
    const auto k = static_cast<int64_t>(pin_h_.size());
    auto f64 = [&](Value* v) { return op.Cast(v, {.to = DataType::DOUBLE}); };
    Value* oh = op.Slice(image_sizes, {0}, {1}, {1});  // [n, 1]
    Value* ow = op.Slice(image_sizes, {1}, {2}, {1});
    Value* ph = b.ints(pin_h_);  // [K]
    Value* pw = b.ints(pin_w_);
    // select_best_resolution (image_processing_utils.py), each pinpoint at once: [n, K]
    Value* scale = op.Min(op.Div(f64(pw), f64(ow)), op.Div(f64(ph), f64(oh)));
    auto scaled = [&](Value* side) { return op.Cast(op.Floor(op.Mul(f64(side), scale)), {.to = DataType::INT64}); };
    Value* effective = op.Min(op.Mul(scaled(ow), scaled(oh)), op.Mul(ow, oh));
    Value* wasted = op.Sub(op.Mul(ph, pw), effective);
    // the first pinpoint of the largest effective resolution, among those of the least waste
    Value* best = op.Equal(effective, op.ReduceMax(effective, {1}));
    Value* least = op.Neg(op.ReduceMax(op.Where(best, op.Neg(wasted), b.scalar_i64(INT64_MIN)), {1}));
    best = op.And(best, op.Equal(wasted, least));
    std::vector<int64_t> rank(static_cast<size_t>(k));  // K - index: the first pinpoint ranks highest
    for (int64_t i = 0; i < k; ++i) rank[static_cast<size_t>(i)] = k - i;
    Value* first = op.Sub(b.scalar_i64(k), op.ReduceMax(op.Where(best, b.ints(rank), 0), {1}, {.keepdims = 0}));
    Value* tile = b.scalar_i64(features_->image_size());
    Grid g;
    g.nph = op.Div(op.Gather(ph, first), tile);
    g.npw = op.Div(op.Gather(pw, first), tile);
    // unpad_image (modeling_llava_next.py) on the nph·side x npw·side grid
    Value* h = op.Squeeze(oh, {1});
    Value* w = op.Squeeze(ow, {1});
    Value* side = b.scalar_i64(side_);
    Value* ch = op.Mul(g.nph, side);
    Value* cw = op.Mul(g.npw, side);
    Value* wide = op.Greater(op.Div(f64(w), f64(h)), op.Div(f64(cw), f64(ch)));
    const double half_ulp7 = 5e-8;  // int(round(x, 7)) = floor(x + 5e-8), see the file comment
    Value* eps = b.constant(DataType::DOUBLE, {}, {reinterpret_cast<const uint8_t*>(&half_ulp7), sizeof(double)});
    auto fit = [&](Value* side, Value* cur_other, Value* orig_other, Value* cur) {
      // (cur - int(round(side * (cur_other / orig_other), 7))) // 2
      Value* x = op.Mul(f64(side), op.Div(f64(cur_other), f64(orig_other)));
      return op.Div(op.Sub(cur, op.Cast(op.Floor(op.Add(x, eps)), {.to = DataType::INT64})), 2);
    };
    Value* pad_h = fit(h, cw, w, ch);
    Value* pad_w = fit(w, ch, h, cw);
    g.r0 = op.Where(wide, pad_h, 0);
    g.rows = op.Where(wide, op.Sub(ch, op.Mul(pad_h, 2)), ch);
    g.c0 = op.Where(wide, 0, pad_w);
    g.cols = op.Where(wide, cw, op.Sub(cw, op.Mul(pad_w, 2)));
    return g;
  }

  static Layout layout(Ops& op, Value* counts) {
    Value* axis = op.builder().scalar_i64(0);
    Layout l;
    l.start = op.CumSum(counts, axis, {.exclusive = 1});
    Value* k = op.Range(0, op.ReduceSum(counts, {0}, {.keepdims = 0}), 1);
    Value* ends = op.CumSum(counts, axis);
    Value* past = op.GreaterOrEqual(op.Unsqueeze(k, {1}), op.Unsqueeze(ends, {0}));  // [rows, images]
    l.image = op.ReduceSum(op.Cast(past, {.to = DataType::INT64}), {1}, {.keepdims = 0});
    l.local = op.Sub(k, op.Gather(l.start, l.image));
    return l;
  }

  // The row of [tile features; image_newline] each packed image_features row takes: per image,
  // its base tile's side² rows, then rows x (cols + 1) of the unpadded grid with the newline
  // (index -1) last in each row.
  Value* packed_rows(Ops& op, const Grid& g, Value* tile_start) const {
    Value* per_tile = op.builder().scalar_i64(side_ * side_);
    Value* side = op.builder().scalar_i64(side_);
    Layout o = layout(op, op.Add(op.Mul(g.rows, op.Add(g.cols, 1)), per_tile));
    auto at = [&](Value* v) { return op.Gather(v, o.image); };  // a per-image value at each row
    Value* first_row = op.Mul(at(tile_start), per_tile);  // the image's base tile
    Value* base = op.Less(o.local, per_tile);
    Value* cell = op.Max(op.Sub(o.local, per_tile), 0);
    Value* cols = at(g.cols);
    Value* y = op.Div(cell, op.Add(cols, 1));
    Value* x = op.Sub(cell, op.Mul(y, op.Add(cols, 1)));
    Value* newline = op.Equal(x, cols);
    y = op.Add(y, at(g.r0));
    x = op.Add(x, at(g.c0));
    Value* ty = op.Div(y, side);
    Value* tx = op.Div(x, side);
    Value* tile = op.Add(op.Add(op.Mul(ty, at(g.npw)), tx), 1);
    Value* within = op.Add(op.Mul(op.Sub(y, op.Mul(ty, side)), side), op.Sub(x, op.Mul(tx, side)));
    Value* grid_row = op.Add(op.Add(first_row, op.Mul(tile, per_tile)), within);
    return op.Where(base, op.Add(first_row, o.local), op.Where(newline, -1, grid_row));
  }

  LlavaVisionFeatures* features_;
  LlavaProjector* projector_;
  Parameter* image_newline_;
  int64_t side_;
  std::vector<int64_t> pin_h_, pin_w_;
};

}  // namespace

std::unique_ptr<Architecture> create_llava_next(const HfConfig& c, DataType dtype) {
  // LlavaNextConfig.attribute_map
  return std::make_unique<LlavaNext>(with_attribute_map(c, {{"image_token_id", "image_token_index"}}), dtype);
}

}  // namespace mobius
