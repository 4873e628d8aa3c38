// Convolutions and their gradients as an implicit GEMM (img2col), the way the cube runs them:
// load3d builds the im2col operand in L1 from the 5-D feature map, so GM supplies each pixel
// about once per window while the cube multiplies the whole unfolded K.
//
//   Conv2D               y  = x * w:   M = N*Ho*Wo, K = C1*C0*kh*kw, N = Cout
//   Conv2DBackpropInput  dx = dy * w': M = N*H*W,   K = Cout*kh*kw,  N = C1*C0
//                        (a stride above 1 runs on dy dilated by the stride: the cube still
//                        walks whole kh x kw windows of the dilated map)
//   Conv2DBackpropFilter dw = dy' x:   M = Cout,    K = N*Ho*Wo,     N = C1*C0*kh*kw
//                        (K runs over the batch: cores split it and add fp32 partials)
//
// Channels are padded to C0, the fractal's 32 bytes of K: C0 = 16 for fp16, 8 for fp32. A
// FRACTAL_Z filter is (C1*kh*kw, Cout1, 16, C0), so its kernel area is its first dim over the
// feature map's C1. The element size the cube multiplies is 32 bytes / C0 (a 5-D tensor labelled
// FLOAT with C0 = 16, as MindSpore's op_info writes mixed-precision runs, holds fp16 data).
// Strides come from the attributes when a profile carries them, else from the spatial sizes
// (round(H / Ho)); the GEMM's size needs only kh*kw, not kh and kw apart.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "model/cost/gemm.h"
#include "model/prepared_op.h"
#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {


bool is_fmap(const TensorDesc& t) noexcept {
  return (t.format == Format::kNC1HWC0 && t.shape.size() == 5) || t.shape.size() == 4;
}

ConvFmap fmap_of(const TensorDesc& t) noexcept {
  ConvFmap f;
  auto s = [&](std::size_t i) { return static_cast<double>(t.shape[i]); };
  if (t.format == Format::kNC1HWC0 && t.shape.size() == 5) {
    f.n = s(0), f.c = s(1) * s(4), f.h = s(2), f.w = s(3), f.c0 = s(4);
  } else if (t.shape.size() == 4 && t.format == Format::kNHWC) {
    f.n = s(0), f.h = s(1), f.w = s(2), f.c = s(3);
  } else if (t.shape.size() == 4) {
    f.n = s(0), f.c = s(1), f.h = s(2), f.w = s(3);
  }
  return f;
}

// The int32 input_size / filter_size vector of the backprop ops: a shape, not data to read.
bool is_shape_operand(const TensorDesc& t) noexcept {
  return t.shape.size() <= 1 && t.elements() <= 5 &&
         (t.dtype == DType::kInt32 || t.dtype == DType::kInt64);
}


ConvFilter filter_of(const TensorDesc& t) noexcept {
  ConvFilter f;
  if (t.shape.size() != 4) return f;
  auto s = [&](std::size_t i) { return static_cast<double>(t.shape[i]); };
  if (t.format == Format::kFractalZ) {
    f.fractal = true;
    f.area_c1 = s(0), f.cout = s(1) * s(2), f.c0 = s(3);
  } else if (t.format == Format::kHWCN) {
    f.kh = s(0), f.kw = s(1), f.cin = s(2), f.cout = s(3);
  } else if (t.format == Format::kNHWC) {
    f.cout = s(0), f.kh = s(1), f.kw = s(2), f.cin = s(3);
  } else {
    f.cout = s(0), f.cin = s(1), f.kh = s(2), f.kw = s(3);
  }
  if (!f.fractal) f.area = f.kh * f.kw;
  return f;
}

// The output map of a Conv2D without one: from the strides, pads and dilations (a square kernel
// when only its area is known). conv_gemm's expression, shared with conv_gemm_pre.
ConvFmap conv_out_map(const ConvOperands& c, double area, double cout) noexcept {
  const ConvFmap& fx = c.fx;
  const double sh = c.sh, sw = c.sw, ph = c.ph, pw = c.pw, dh = c.dh, dw = c.dw;
  double kh = c.fw.kh, kw = c.fw.kw;
  if (kh <= 0 || kw <= 0) kh = kw = std::max(1.0, std::round(std::sqrt(std::max(area, 1.0))));
  ConvFmap fy = fx;
  fy.c = cout;
  fy.h = std::max(1.0, fast_floor((fx.h + ph - dh * (kh - 1) - 1) / std::max(1.0, sh)) + 1);
  fy.w = std::max(1.0, fast_floor((fx.w + pw - dw * (kw - 1) - 1) / std::max(1.0, sw)) + 1);
  return fy;
}

// conv_dims's answer: what conv_k_n and the callers read beside the GEMM it fills.
struct ConvDims {
  double cout;  ///< output channels per group
  double area;  ///< kernel area, at least 1
};

// What a convolution's implicit GEMM takes from its maps once the kernel area is known, shared
// by conv_gemm and conv_gemm_pre: the output channels per group (from the filter, else the output
// map), the output map (given, or from the strides for a Conv2D), M and the read factors of the
// im2col operand, the batch of groups and the operand layouts. K and N, which K0 pads, are
// conv_k_n's.
ConvDims conv_dims(const ConvOperands& c, OpRole role, double area, Gemm& g) noexcept {
  const ConvFmap& fx = c.fx;
  const double groups = c.groups;
  double cout = c.fw.cout;
  ConvFmap fy;
  if (c.y_fmap) {
    fy = c.fy;
    if (cout <= 0) cout = fy.c;
  } else if (role == OpRole::kConv2D) {
    fy = conv_out_map(c, area, cout);  // no output map: from the strides, pads and dilations
  } else {
    fy = fx;
    fy.c = cout;
    g.warnings |= kWarnShapeMismatch;
  }
  if (cout <= 0 || area < 1) {
    g.warnings |= kWarnShapeMismatch;
    cout = std::max(cout, 1.0);
    area = std::max(area, 1.0);
  }
  cout /= groups;
  g.batch = groups;
  g.a_nz = g.b_nz = true;  // load3d and FRACTAL_Z feed the cube's fractals directly
  g.b_shared = true;
  const double pix_x = fx.n * fx.h * fx.w;
  const double pix_y = fx.n * fy.h * fy.w;
  switch (role) {
    case OpRole::kConvBackpropInput:
      g.m = pix_x;
      g.a_read_factor = std::min(1.0, pix_y / (pix_x * area));
      break;
    case OpRole::kConvBackpropFilter:
      g.m = cout;
      g.k = pix_y;
      g.b_read_factor = std::min(1.0, pix_x / (pix_y * area));
      g.b_shared = false;
      g.k_over_batch = true;
      g.k_batch = fx.n;
      break;
    default:
      g.m = pix_y;
      g.n = cout;
      g.a_read_factor = std::min(1.0, pix_x / (pix_y * area));
      break;
  }
  return {cout, area};
}

// The GEMM dimensions K0 pads: K (the padded input channels, or for the input gradient the
// padded output channels, times the kernel area) and N.
void conv_k_n(OpRole role, double cin, double cout, double area, double k0, Gemm& g) noexcept {
  switch (role) {
    case OpRole::kConvBackpropInput:
      g.k = round_up(cout, k0) * area;
      g.n = cin;
      break;
    case OpRole::kConvBackpropFilter: g.n = cin * area; break;
    default: g.k = cin * area; break;
  }
}

// conv_gemm's chip-independent part for maps and filters without C0 (ConvGemmPre): the same
// expressions (conv_dims), K0 and what it sets left to conv_gemm.
ConvGemmPre conv_gemm_pre(const ConvOperands& c, OpRole role) noexcept {
  ConvGemmPre pre;
  const ConvFmap& fx = c.fx;
  const ConvFilter& fw = c.fw;
  if (!c.valid || fx.c0 > 0 || fw.c0 > 0 || fw.fractal) return pre;
  Gemm& g = pre.g;
  const double ds = dtype_bytes(c.x_dtype);
  g.dtype = ds <= 1 ? DType::kInt8 : ds <= 2 ? DType::kFloat16 : DType::kFloat32;
  const ConvDims d = conv_dims(c, role, fw.area, g);
  g.out_dtype = c.has_out ? c.out_dtype : c.x_dtype;  // no C0: the output keeps its dtype
  pre.ds = ds;
  pre.c_per_group = fx.c / c.groups;
  pre.cout = d.cout;
  pre.area = d.area;
  pre.ready = true;
  return pre;
}

}  // namespace

ConvOperands conv_operands(const OpDesc& op, const AttrTable* attrs) {
  ConvOperands c;
  const OpRole role = op.kind->role;
  // The tensors that carry data, in the op's order (shape operands dropped).
  std::array<const TensorDesc*, 8> data{};
  std::size_t nd = 0;
  const TensorDesc* fractal = nullptr;
  for (const auto& t : op.inputs) {
    if (is_shape_operand(t) || t.dtype == DType::kUndefined) continue;
    if (t.format == Format::kFractalZ && !fractal) {
      fractal = &t;
      continue;
    }
    if (nd < data.size()) data[nd++] = &t;
  }
  const TensorDesc* out = op.outputs.empty() ? nullptr : &op.outputs[0];
  const TensorDesc* x = nullptr;       // the forward input feature map
  const TensorDesc* y = nullptr;       // the forward output (dy for the gradients)
  const TensorDesc* filter = fractal;  // the weights
  switch (role) {
    case OpRole::kConvBackpropInput:
      // CANN: (input_size, filter, out_backprop); MindSpore: (dout, filter[, input_size]).
      if (!filter && nd >= 2) filter = data[0], data[0] = data[1];
      y = nd >= 1 ? data[0] : nullptr;
      x = out;
      break;
    case OpRole::kConvBackpropFilter: {
      // CANN: (x, filter_size, out_backprop); MindSpore: (dout, x). dy is the one with Cout
      // channels; when both have them, the one with the smaller map (stride >= 1).
      filter = out;
      if (nd < 2 || !out) break;
      const ConvFilter f = filter_of(*out);
      const ConvFmap a = fmap_of(*data[0]);
      const ConvFmap b = fmap_of(*data[1]);
      const bool a_dy = (a.c == f.cout) != (b.c == f.cout) ? a.c == f.cout
                                                            : a.h * a.w < b.h * b.w;
      y = a_dy ? data[0] : data[1];
      x = a_dy ? data[1] : data[0];
      break;
    }
    default:
      x = nd >= 1 ? data[0] : nullptr;
      if (!filter) filter = nd >= 2 ? data[1] : nullptr;
      y = out;
      break;
  }
  if (!x || !filter || !is_fmap(*x) || filter->shape.size() != 4) return c;  // not valid
  c.valid = true;
  c.fx = fmap_of(*x);
  c.fw = filter_of(*filter);
  c.groups =
      std::max(1.0, attrs ? attrs->number(Attr::kGroups, 1, op) : op.attr_number("groups", 1));
  c.x_dtype = x->dtype;
  if (out) {
    c.has_out = true;
    c.out_dtype = out->dtype;
    c.out_format = out->format;
  }
  if (y && is_fmap(*y)) {
    c.y_fmap = true;
    c.fy = fmap_of(*y);
  } else if (role == OpRole::kConv2D) {
    // no output map: the strides, pads and dilations
    std::array<std::int64_t, 8> v{};
    auto vd = [&](std::size_t i) { return static_cast<double>(v[i]); };
    auto ints = [&](Attr a) { return attrs ? attrs->ints(a, v) : op.attr_ints(attr_key(a), v); };
    if (const auto k = ints(Attr::kStrides); k >= 2) c.sh = vd(k - 2), c.sw = vd(k - 1);
    if (const auto k = ints(Attr::kDilations); k >= 2) c.dh = vd(k - 2), c.dw = vd(k - 1);
    if (ints(Attr::kPads) == 4) c.ph = vd(0) + vd(1), c.pw = vd(2) + vd(3);
  }
  c.pre = conv_gemm_pre(c, role);
  return c;
}

Gemm conv_gemm(const ConvOperands& c, OpRole role, const HwSpec& hw) noexcept {
  Gemm g;
  if (c.pre.ready) {
    // only K0 comes from the chip: the padded channels and the dimension they make
    const ConvGemmPre& pre = c.pre;
    g = pre.g;
    const double k0 = std::max(1.0, fast_floor(hw.cube.fractal_k_bytes / pre.ds));
    conv_k_n(role, round_up(pre.c_per_group, k0), pre.cout, pre.area, k0, g);
    return g;
  }
  if (!c.valid) {
    g.warnings |= kWarnShapeMismatch;
    return g;
  }
  const ConvFmap& fx = c.fx;
  const ConvFilter& fw = c.fw;
  // Element size on the cube: 32 bytes of K per fractal row over C0 when the layout has one.
  const double c0 = fx.c0 > 0 ? fx.c0 : fw.c0;
  double ds = dtype_bytes(c.x_dtype);
  if (c0 > 0) ds = hw.cube.fractal_k_bytes / c0;
  g.dtype = ds <= 1 ? DType::kInt8 : ds <= 2 ? DType::kFloat16 : DType::kFloat32;
  const double k0 = c0 > 0 ? c0 : std::max(1.0, fast_floor(hw.cube.fractal_k_bytes / ds));
  const double cin = round_up(fx.c / c.groups, k0);  // channels per group, padded to C0
  double area = fw.area;
  if (fw.fractal) {
    const double c1 = std::max(1.0, cin / k0);
    area = fw.area_c1 / c1;
    if (area < 1 || std::fmod(fw.area_c1, c1) != 0) g.warnings |= kWarnShapeMismatch;
    area = std::max(1.0, std::round(area));
  }
  const ConvDims d = conv_dims(c, role, area, g);
  g.out_dtype = c.has_out ? c.out_dtype : c.x_dtype;
  if (c.has_out && dtype_bytes(c.out_dtype) > ds && c0 > 0 && c.out_format != Format::kFractalZ) {
    g.out_dtype = g.dtype;  // a 5-D output of the same C0 holds the cube's element type
  }
  conv_k_n(role, cin, d.cout, d.area, k0, g);
  return g;
}

Gemm gemm_of_conv(const OpDesc& op, const HwSpec& hw, const AttrTable* attrs) {
  return conv_gemm(conv_operands(op, attrs), op.kind->role, hw);
}

}  // namespace npusim::cost
