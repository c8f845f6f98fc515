// T2IAdapter (diffusers/models/adapter.py; configuration: its __init__): the control image's feature
// maps that StableDiffusion(XL)AdapterPipeline adds to the UNet's down blocks
// (down_intrablock_additional_residuals), one per body block:
//   x = PixelUnshuffle(downscale_factor)(image)   (channel c * r * r + i * r + j of pixel (h r + i, w r + j))
//   adapter_type "full_adapter" (FullAdapter) / "full_adapter_xl" (FullAdapterXL):
//     x = adapter.conv_in(x) (3x3, in_channels * r^2 -> channels[0]); body.{k} AdapterBlock(in, out,
//     down): [AvgPool2d(2, 2, ceil_mode)], [in_conv 1x1 when in != out], num_res_blocks x
//     AdapterResnetBlock (x + block2_1x1(relu(block1_3x3(x)))). FullAdapter: body.0 (c0, c0), body.k
//     (c[k-1], c[k], down); FullAdapterXL: body.0 (c0, c0), body.1 (c0, c1), body.2 (c1, c2, down),
//     body.k>2 (c[k], c[k]).
//   "light_adapter" (LightAdapter): body.{k} LightAdapterBlock(in, out, down): [AvgPool2d], in_conv
//     1x1 (in -> out / 4), num_res_blocks x LightAdapterResnetBlock (x + block2_3x3(relu(block1_3x3(x)))),
//     out_conv 1x1 (out / 4 -> out); body.0 (in_channels * r^2, c0), body.k (c[k-1], c[k], down), and
//     one more (c[-1], c[-1], down).
// Graph "adapter": sample [batch_size, in_channels, height, width] (height and width multiples of
// downscale_factor) -> adapter_state.{k} [batch_size, channels of block k, state_height{level},
// state_width{level}] (the pipeline's adapter_state list; level: the average-poolings before it).
#include "archs/diffusers_component.h"
#include "archs/diffusers_config.h"
#include "blocks/conv2d.h"
#include "registry/diffusers_registry.h"

namespace mobius {
namespace {

// One body block: its channels, whether it average-pools first, and its resnets' kind.
struct AdapterBlockSpec {
  int64_t in, out;
  bool down;
};

struct T2IAdapterSpec {
  int64_t in_channels, factor, res_blocks;
  bool light;
  std::vector<int64_t> channels;
  std::vector<AdapterBlockSpec> blocks;
  DataType dtype;
};

T2IAdapterSpec adapter_spec(const HfConfig& c, DataType dtype) {
  T2IAdapterSpec s;
  s.dtype = dtype;
  s.in_channels = diffusers_int(c, "in_channels", 1, kMaxSmallSize);
  s.factor = diffusers_int(c, "downscale_factor", 1, 64);
  s.res_blocks = diffusers_int(c, "num_res_blocks", 1, kMaxLayers);
  s.channels = diffusers_int_list(c, "channels", 1, kMaxHiddenSize);
  const std::vector<int64_t>& ch = s.channels;
  const size_t n = ch.size();
  const std::string type = c.string_or("adapter_type", "full_adapter");
  s.light = type == "light_adapter";
  const int64_t unshuffled = s.in_channels * s.factor * s.factor;
  if (type == "full_adapter") {
    s.blocks.push_back({ch[0], ch[0], false});
    for (size_t k = 1; k < n; ++k) s.blocks.push_back({ch[k - 1], ch[k], true});
  } else if (type == "full_adapter_xl") {
    for (size_t k = 0; k < n; ++k) {
      if (k == 1) s.blocks.push_back({ch[0], ch[1], false});
      else if (k == 2) s.blocks.push_back({ch[1], ch[2], true});
      else s.blocks.push_back({ch[k], ch[k], false});
      if (k > 2 && ch[k] != ch[k - 1])
        c.fail("channels", "full_adapter_xl's block " + std::to_string(k) + " takes channels[" + std::to_string(k) +
                               "] = " + std::to_string(ch[k]) + " from block " + std::to_string(k - 1) + "'s " +
                               std::to_string(ch[k - 1]));
    }
  } else if (s.light) {
    s.blocks.push_back({unshuffled, ch[0], false});
    for (size_t k = 0; k + 1 < n; ++k) s.blocks.push_back({ch[k], ch[k + 1], true});
    s.blocks.push_back({ch[n - 1], ch[n - 1], true});
    for (int64_t v : ch)
      if (v < 4)
        c.fail("channels", "light_adapter's blocks are channels / 4 wide: expected at least 4, got " + std::to_string(v));
  } else {
    c.fail("adapter_type", "unsupported '" + type + "' (expected full_adapter, full_adapter_xl or light_adapter)");
  }
  return s;
}

Conv2dOptions adapter_conv(int64_t in, int64_t out, int64_t kernel, DataType dtype) {
  return {.in_channels = in, .out_channels = out, .kernel_size = kernel, .padding = (kernel - 1) / 2, .dtype = dtype};
}

// AdapterResnetBlock (block2 1x1) / LightAdapterResnetBlock (block2 3x3): x + block2(relu(block1(x))).
class AdapterResnet : public Module {
 public:
  AdapterResnet(int64_t channels, int64_t block2_kernel, DataType dtype) {
    block1 = child<Conv2d>("block1", adapter_conv(channels, channels, 3, dtype));
    block2 = child<Conv2d>("block2", adapter_conv(channels, channels, block2_kernel, dtype));
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    return op.Add(block2->forward(op, op.Relu(block1->forward(op, x))), x);
  }

  Conv2d *block1, *block2;
};

// AdapterBlock / LightAdapterBlock (its in_conv to out / 4 channels, its out_conv back).
class AdapterBlock : public Module {
 public:
  AdapterBlock(const AdapterBlockSpec& b, const T2IAdapterSpec& s) : down_(b.down) {
    const int64_t width = s.light ? b.out / 4 : b.out;
    if (s.light || b.in != b.out) in_conv = child<Conv2d>("in_conv", adapter_conv(b.in, width, 1, s.dtype));
    for (int64_t j = 0; j < s.res_blocks; ++j)
      resnets.push_back(child<AdapterResnet>("resnets." + std::to_string(j), width, s.light ? 3 : 1, s.dtype));
    if (s.light) out_conv = child<Conv2d>("out_conv", adapter_conv(width, b.out, 1, s.dtype));
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    if (down_)  // AvgPool2d(kernel_size=2, stride=2, ceil_mode=True): a partial window averages what it covers
      x = op.builder().add_node("AveragePool", {x},
                                {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                                 {"ceil_mode", int64_t{1}}},
                                {x->dtype})[0];
    if (in_conv) x = in_conv->forward(op, x);
    for (const AdapterResnet* r : resnets) x = r->forward(op, x);
    return out_conv ? out_conv->forward(op, x) : x;
  }

  Conv2d *in_conv = nullptr, *out_conv = nullptr;
  std::vector<AdapterResnet*> resnets;

 private:
  bool down_;
};

class T2IAdapter : public OneGraphComponent {
 public:
  T2IAdapter(const HfConfig& c, DataType dtype) : OneGraphComponent("diffusion-adapter", GraphPath{"adapter", hf_graph::adapter}), s_(adapter_spec(c, dtype)) {
    if (!s_.light)
      conv_in = child<Conv2d>("adapter.conv_in",
                              adapter_conv(s_.in_channels * s_.factor * s_.factor, s_.channels[0], 3, dtype));
    for (size_t k = 0; k < s_.blocks.size(); ++k)
      body.push_back(child<AdapterBlock>("adapter.body." + std::to_string(k), s_.blocks[k], s_));
  }

  Conv2d* conv_in = nullptr;
  std::vector<AdapterBlock*> body;

 private:
  // PixelUnshuffle(r): [B, C, H, W] -> [B, C r r, H / r, W / r].
  Value* unshuffle(Ops& op, Value* x) const {
    GraphBuilder& b = op.builder();
    const int64_t r = s_.factor;
    Value* h = op.Div(op.Shape(x, {.start = 2, .end = 3}), b.ints({r}));
    Value* w = op.Div(op.Shape(x, {.start = 3, .end = 4}), b.ints({r}));
    Value* batch = op.Shape(x, {.end = 1});
    x = op.Reshape(x, op.Concat({batch, b.ints({s_.in_channels}), h, b.ints({r}), w, b.ints({r})}, {.axis = 0}));
    x = op.Transpose(x, {.perm = {0, 1, 3, 5, 2, 4}});
    return op.Reshape(x, op.Concat({batch, b.ints({s_.in_channels * r * r}), h, w}, {.axis = 0}));
  }
  Model build_model() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    Value* x = unshuffle(op, b.input("sample", s_.dtype, {"batch_size", s_.in_channels, "height", "width"}));
    if (conv_in) x = conv_in->forward(op, x);
    int64_t level = 0;
    for (size_t k = 0; k < body.size(); ++k) {
      x = body[k]->forward(op, x);
      if (s_.blocks[k].down) ++level;
      const std::string level_name = std::to_string(level);
      b.output(x, "adapter_state." + std::to_string(k),
               {"batch_size", s_.blocks[k].out, "state_height" + level_name, "state_width" + level_name});
    }
    return model;
  }
  T2IAdapterSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_t2i_adapter(const HfConfig& c, DataType dtype) {
  return std::make_unique<T2IAdapter>(c, dtype);
}

std::vector<AdapterState> t2i_adapter_states(const HfConfig& c) {
  std::vector<AdapterState> states;
  int64_t pools = 0;
  for (const AdapterBlockSpec& block : adapter_spec(c, DataType::FLOAT).blocks) {
    if (block.down) ++pools;
    states.push_back({block.out, pools});
  }
  return states;
}

}  // namespace mobius
