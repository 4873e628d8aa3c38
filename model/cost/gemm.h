#pragma once
// The GEMM a cube kernel computes, as the cube family's tiler sees it: plain matrix products
// (model/cost/cube.cpp) and convolutions lowered to an implicit GEMM (model/cost/conv.cpp).

#include <cstdint>

#include "model/hw_spec.h"
#include "model/op_desc.h"

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

/// The implicit GEMM of a convolution or of one of its gradients (Conv2D, Conv2DBackpropInput,
/// Conv2DBackpropFilter and the GE fusions built on them), read from NCHW / NHWC / NC1HWC0
/// feature maps and NCHW / HWCN / FRACTAL_Z filters. Shape operands (the int32 input_size /
/// filter_size vectors) are recognised and skipped.
/// `attrs`, when given, holds the op's attributes parsed (a PreparedOp's).
[[nodiscard]] Gemm gemm_of_conv(const OpDesc& op, const HwSpec& hw,
                                const AttrTable* attrs = nullptr) noexcept;

}  // namespace npusim::cost
