// Pooling and its gradient (MaxPoolWithArgmax, MaxPoolGradWithArgmax, AvgPool, ...) on the
// vector cores. The TBE / Ascend C kernels walk the pooled map one output row at a time (Wo x C0
// elements of an NC1HWC0 map, a few 256-byte repeats) and, for each of the kh*kw window
// positions, issue a short vector instruction sequence over that row: vmax for the maximum, a
// compare and a select that build the argmax mask, an add for the average; the gradient selects
// dy by the mask bit and adds it into dx. Each instruction pays its issue cost on a row of only
// a few repeats, so these kernels run far below the vector unit's streaming rate: the work is
// rows x window positions x instructions, not bytes.
//
// The window area comes from the attributes (ksize / kernel_size) when a profile carries them,
// else from the argmax mask, whose third dim is kh*kw (N, C1, kh*kw, ...), else from the
// spatial ratio (H / Ho)^2 of a non-overlapping window.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

using namespace std::string_view_literals;

namespace {

bool is_mask(const TensorDesc& t) noexcept {
  switch (t.dtype) {
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kInt8:
    case DType::kInt16:
    case DType::kUInt32:
    case DType::kBool:
      return t.shape.size() >= 5;
    default:
      return false;
  }
}

// Rows of Wo x C0 (or Wo) elements, and the elements of one row.
void pooled_rows(const TensorDesc& t, double& rows, double& row_elements, double& h) noexcept {
  const auto& s = t.shape;
  auto d = [&](std::size_t i) { return static_cast<double>(s[i]); };
  if (s.size() == 5 && t.format == Format::kNC1HWC0) {
    rows = d(0) * d(1) * d(2), row_elements = d(3) * d(4), h = d(2);
  } else if (s.size() == 4) {
    rows = d(0) * d(1) * d(2), row_elements = d(3), h = d(2);
  } else {
    rows = 1, row_elements = static_cast<double>(t.elements()), h = 1;
  }
}

}  // namespace

KernelPlan plan_pool(const OpDesc& op, const HwSpec& hw, int cores) noexcept {
  KernelPlan p;
  p.unit = Placement::kVector;
  if (op.inputs.empty()) {
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  const bool grad = op.kind->role == OpRole::kPoolGrad;
  const TensorDesc& x = op.inputs[0];
  // The pooled map: the forward's output, the gradient's dy (its second input).
  const TensorDesc* pooled = grad ? (op.inputs.size() > 1 ? &op.inputs[1] : &x)
                                  : (op.outputs.empty() ? &x : &op.outputs[0]);
  const TensorDesc* mask = nullptr;
  for (const auto* ts : {&op.inputs, &op.outputs}) {
    for (const auto& t : *ts) {
      if (!mask && is_mask(t)) mask = &t;
    }
  }
  double rows = 1, row_elements = 1, ho = 1;
  pooled_rows(*pooled, rows, row_elements, ho);
  double x_rows = 1, x_row_elements = 1, h = 1;
  pooled_rows(x, x_rows, x_row_elements, h);
  std::array<std::int64_t, 8> v{};
  double area = 0;
  for (const std::string_view key : {"ksize"sv, "kernel_size"sv, "window"sv}) {
    if (const std::size_t n = op.attr_ints(key, v); n >= 2 && area <= 0) {
      area = static_cast<double>(v[n - 2] * v[n - 1]);
    }
  }
  if (area <= 0 && mask) area = static_cast<double>(mask->shape[2]);
  if (area <= 0) area = std::pow(std::max(1.0, std::round(h / std::max(1.0, ho))), 2.0);
  // Instructions per window position: max, or max + compare + select for the argmax mask, or an
  // add for the average; the gradient selects by the mask and accumulates (two). The gradient's
  // select reads the argmax mask's bits: a vsel in bit mode, costed as mask_select (on the 910
  // the mask register is set for every repeat; MaxPoolGradWithArgmax was 0.29-0.49 of measured
  // on the Inception runs with a binary select).
  const double instructions = grad ? 2.0 : (mask ? 3.0 : 1.0);
  const double ds = std::max(1.0, dtype_bytes(pooled->dtype));
  const double row_bytes = row_elements * ds;
  const double per_row =
      grad && mask ? area * (class_pass_cycles(VectorClass::kMaskSelect, row_bytes, hw) +
                             class_pass_cycles(VectorClass::kBinary, row_bytes, hw))
                   : area * instructions * class_pass_cycles(VectorClass::kBinary, row_bytes, hw);

  // The argmax mask holds one bit per window position of each pooled element, whatever shape
  // and dtype a profile prints for it (CANN 8 writes the gradient's as a 6-D uint16 tensor
  // whose product is 16 times the bits).
  const double mask_bytes = area * rows * row_elements / 8.0;
  auto bytes_of = [&](const TensorDesc& t) { return &t == mask ? mask_bytes : t.bytes(); };
  double in_bytes = 0;
  for (const auto& t : op.inputs) in_bytes += bytes_of(t);
  double out_bytes = 0;
  for (const auto& t : op.outputs) out_bytes += bytes_of(t);
  if (op.outputs.empty()) out_bytes = grad ? x.bytes() : pooled->bytes();
  const std::int64_t tiles = vector_tiles(std::max(in_bytes, out_bytes), hw, cores,
                                          saturating_count(rows));
  const double nt = static_cast<double>(tiles);
  p.tiles = tiles;
  p.in = flat_transfer(in_bytes, nt);
  p.in.transfers = p.in.ideal_transfers = static_cast<double>(op.inputs.size());
  p.out = flat_transfer(out_bytes, nt);
  p.vector_cycles = per_row * rows / nt;
  // CNN torch_npu profile (CANN 8, 2025): the three MaxPoolWithArgmaxV1 rows' aiv_time is 1.10
  // times their MTE2 + vector + MTE3 busy times added (median), not close to the largest.
  p.ub_single_buffer = true;
  p.flops = area * rows * row_elements;
  return p;
}

}  // namespace npusim::cost
