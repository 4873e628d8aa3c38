#pragma once
// The GEMM a cube kernel computes, as the cube family's tiler sees it: plain matrix products
// (model/cost/cube.cpp) and convolutions lowered to an implicit GEMM (model/cost/conv.cpp).

#include <cstdint>

#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "model/op_table.h"

namespace npusim {
class AttrTable;  // model/prepared_op.h
}  // namespace npusim

namespace npusim::cost {

/// batch x (m x k) . (k x n), with how each operand is laid out and read from GM.
struct Gemm {
  double batch = 1, m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  bool b_shared = false;  ///< B broadcast over the batch: read once, reused from L2
  DType dtype = DType::kFloat16;      ///< element type the cube multiplies (sets its rate)
  DType out_dtype = DType::kFloat16;  ///< element type FixPipe writes
  bool a_nz = false, b_nz = false;    ///< operand already in the cube's fractal layout
  /// Bytes GM supplies per byte of the A (B) operand the cube consumes: an implicit GEMM builds
  /// its im2col operand in L1 (load3d), so GM supplies each feature-map pixel about once per
  /// window rather than kh x kw times. 1 for a plain GEMM.
  double a_read_factor = 1;
  double b_read_factor = 1;
  /// K is a reduction over the batch (a filter gradient): cores split it and add their fp32
  /// partials into the output (atomic FixPipe), like split-K.
  bool k_over_batch = false;
  double k_batch = 1;  ///< how many images K spans (the split-K parts cores can take)
  std::uint32_t warnings = 0;
};

/// A feature map as (N, C, H, W); C is padded to C0 for 5-D tensors (C1 * C0).
struct ConvFmap {
  double n = 1, c = 1, h = 1, w = 1;
  double c0 = 0;  ///< 0 when the layout has no C0 (4-D)
};
/// A filter: Cout, Cin per group (as stored), kernel area; or, for FRACTAL_Z, the stored
/// C1*kh*kw (area_c1) resolved against the feature map's C1 later.
struct ConvFilter {
  double cout = 0, cin = 0, area = 0;
  double kh = 0, kw = 0;  ///< when the layout gives them apart
  double area_c1 = 0;     ///< FRACTAL_Z first dim
  double c0 = 0;
  bool fractal = false;
};
/// The part of conv_gemm() that does not depend on the chip, when only its K0 does: a map and a
/// filter without C0 (NCHW, NHWC, HWCN; not FRACTAL_Z, not NC1HWC0). Then the element size is
/// the input's dtype, the kernel area and the output map are the op's, and the chip's fractal K
/// bytes set only K0, the padded channels per group and the GEMM dimension they make (K, or N
/// for a filter gradient). conv_operands() fills it with conv_gemm's own expressions (session 19:
/// the output map's floors and the pixel counts were ~120 instructions a Conv2D prediction).
struct ConvGemmPre {
  bool ready = false;
  Gemm g;                   ///< every field but the ones K0 sets
  double ds = 2;            ///< element size on the cube
  double c_per_group = 1;   ///< input channels per group, before padding to K0
  double cout = 1;          ///< output channels per group
  double area = 1;          ///< kernel area
};

/// What a convolution's implicit GEMM reads from the op alone (its tensors and attributes);
/// conv_gemm() finishes it with the chip's fractal size. A PreparedOp holds it.
struct ConvOperands {
  bool valid = false;  ///< false: no feature map or no 4-D filter (a shape mismatch)
  ConvFmap fx;         ///< the forward input map
  ConvFilter fw;       ///< the weights
  double groups = 1;
  bool y_fmap = false;  ///< the forward output (dy) is a map: fy is it
  ConvFmap fy;
  /// Conv2D without an output map: strides, dilations, pads (summed per axis)
  double sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  DType x_dtype = DType::kFloat16;
  bool has_out = false;
  DType out_dtype = DType::kFloat16;
  Format out_format = Format::kND;
  ConvGemmPre pre;  ///< the chip-independent part of the GEMM, when there is one
};
/// The op-only part of gemm_of_conv. Reads the groups attribute, so a malformed one throws.
[[nodiscard]] ConvOperands conv_operands(const OpDesc& op, const AttrTable* attrs);
/// The implicit GEMM from the operands and the chip (the fractal's K bytes).
[[nodiscard]] Gemm conv_gemm(const ConvOperands& c, OpRole role, const HwSpec& hw) noexcept;

/// The implicit GEMM of a convolution or of one of its gradients (Conv2D, Conv2DBackpropInput,
/// Conv2DBackpropFilter and the GE fusions built on them), read from NCHW / NHWC / NC1HWC0
/// feature maps and NCHW / HWCN / FRACTAL_Z filters. Shape operands (the int32 input_size /
/// filter_size vectors) are recognised and skipped.
/// `attrs`, when given, holds the op's attributes parsed (a PreparedOp's).
[[nodiscard]] Gemm gemm_of_conv(const OpDesc& op, const HwSpec& hw,
                                const AttrTable* attrs = nullptr);

}  // namespace npusim::cost
