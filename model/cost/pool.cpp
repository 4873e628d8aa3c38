// Pooling and its gradient (MaxPoolWithArgmax, MaxPoolGradWithArgmax, AvgPool, ...) on the
// vector cores. The kernels walk the pooled map one output row at a time (Wo x C0 elements of
// an NC1HWC0 map, a few 256-byte repeats) and, for each of the kh*kw window positions, issue a
// short vector instruction sequence over that row: vmax for the maximum, a compare and a select
// that build the argmax mask, an add for the average; the gradient selects dy by the mask bit
// and adds it into dx. Each instruction pays its issue cost on a row of only a few repeats, so
// these kernels run far below the vector unit's streaming rate: the work is rows x window
// positions x instructions, not bytes. The 910's static TBE MaxPoolWithArgmax works on 16-pixel
// img2col groups instead (plan_img2col_argmax below).
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

// TBE dispatches the ResNet-50 stem's pooling (x [N,4,112,112,16] fp16, 3x3 window, stride 2:
// is_max_pool_with_argmax_param in max_pool_with_argmax_resnet50.py, and the gradient's
// counterpart) to hand-written ping-pong kernels whose instruction streams differ from the
// general schedules below; they keep the generic per-row cost (not modelled: one row per run).
bool resnet50_stem(const TensorDesc& x, double area) noexcept {
  const auto& s = x.shape;
  return x.format == Format::kNC1HWC0 && s.size() == 5 && s[1] == 4 && s[2] == 112 && s[3] == 112 &&
         s[4] == 16 && area == 9;
}

// The TBE forward with an argmax mask on an NC1HWC0 map (max_pool_with_argmax.py and the
// PyTorch variant behind MaxPoolWithArgmaxV1, public TBE sources): each core takes whole (n, c1)
// planes (ceil(N*C1 / cores) of them: the profiles' block dims, 22 for 64 planes, 28 for 192, 29
// for 288 and 30 for 768, are that split's); a plane's output pixels go through UB in tiles of
// whole output rows, as many as fit half the UB in img2col form (kh*kw*C0 elements a pixel plus
// 5 blocks of mask and max); load3d lays out 16 output pixels at a time and for each such group
// and window position the kernel issues a vmax and a vcmpv_eq over the group's 16 x C0
// elements; per tile and window position three mask instructions (vor, vand, vnot) over one
// block a group clear the repeated maxima, and a vector_dup initialises the max. The work is
// groups x window positions x 2 instructions, whatever the map's width: the Inception v3 rows on
// the 910 take 295-305 cycles per group on maps of 147, 71 and 35 (8 to 73 output pixels a row),
// where per-row instructions made the narrow maps 2.6-3.6 times slow.
bool plan_img2col_argmax(const OpDesc& op, const TensorDesc& x, const TensorDesc& pooled,
                         double area, const HwSpec& hw, KernelPlan& p) noexcept {
  if (x.format != Format::kNC1HWC0 || pooled.format != Format::kNC1HWC0 || x.shape.size() != 5 ||
      pooled.shape.size() != 5 || area < 1) {
    return false;
  }
  const auto& s = pooled.shape;
  const double planes = static_cast<double>(s[0]) * static_cast<double>(s[1]);
  const double ho = static_cast<double>(s[2]), wo = static_cast<double>(s[3]);
  const double c0 = static_cast<double>(s[4]);
  if (planes < 1 || ho < 1 || wo < 1 || c0 < 1) return false;
  const double ds = std::max(1.0, dtype_bytes(x.dtype));
  // Pixels a tile holds: half the UB over a pixel's img2col bytes plus 5 blocks
  // (_calc_cut_h_size_fun); whole rows, one row fewer than fit a padded row of Wo + 1.
  const double cap = std::floor(hw.chip.ub_bytes / 2.0 / (area * c0 * ds + 5.0 * 32.0));
  const bool whole_plane = ho * wo * area * c0 * ds <= hw.chip.ub_bytes / 2.0;
  const double tile_rows =
      whole_plane ? ho : std::clamp(std::floor(cap / (wo + 1.0)) - 1.0, 1.0, ho);
  const double full_tiles = std::floor(ho / tile_rows);
  const double tail_rows = ho - full_tiles * tile_rows;
  const double group_bytes = 16.0 * c0 * ds;
  // A TIK instruction: its repeats plus the issue cost of an instruction without an API wrapper.
  auto instr = [&](VectorClass c, double bytes) {
    return std::ceil(bytes / hw.vector.repeat_bytes) *
               hw.vector.cycles_per_repeat[static_cast<std::size_t>(c)] +
           hw.vector.tik_issue_cycles;
  };
  auto tile_cycles = [&](double rows) {
    const double groups = std::ceil(rows * wo / 16.0);
    return groups * 2.0 * area * instr(VectorClass::kBinary, group_bytes) +
           3.0 * area * instr(VectorClass::kBinary, groups * hw.vector.repeat_bytes) +
           instr(VectorClass::kUnary, groups * group_bytes);
  };
  const double plane_cycles =
      full_tiles * tile_cycles(tile_rows) + (tail_rows > 0 ? tile_cycles(tail_rows) : 0.0);
  const double tiles_per_plane = full_tiles + (tail_rows > 0 ? 1.0 : 0.0);
  p.tiles = saturating_count(planes);
  p.vector_cycles = plane_cycles;
  // One burst of the plane (or a tile's rows) in; the max and one mask row per window position out.
  double in_bytes = 0;
  for (const auto& t : op.inputs) in_bytes += t.bytes();
  const double mask_bytes = area * planes * ho * wo * c0 / 8.0;
  p.in = flat_transfer(in_bytes, planes);
  p.in.transfers = p.in.ideal_transfers = tiles_per_plane;
  p.out = flat_transfer(pooled.bytes() + mask_bytes, planes);
  p.out.transfers = p.out.ideal_transfers = tiles_per_plane * (1.0 + area);
  return true;
}

}  // namespace

KernelPlan plan_pool(const OpDesc& op, const HwSpec& hw, int cores, double core_bytes) noexcept {
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
  // The static TBE kernel (the 910's MaxPoolWithArgmax); the 910B's MaxPoolWithArgmaxV1 (CANN 8,
  // dynamic shapes) spends most of its time on the scalar unit (100 of 165 us on the CNN profile's
  // [32,4,55,55,16]) and keeps the per-row cost below.
  const bool stem = resnet50_stem(x, area);
  if (!grad && mask && !stem && op.type == "MaxPoolWithArgmax" &&
      plan_img2col_argmax(op, x, *pooled, area, hw, p)) {
    // The map goes GM -> L1 and load3d lays it into UB: the next plane's (or tile's) load waits
    // only for this one's load3d, not its vector work, so loads and compute overlap.
    p.ub_single_buffer = false;
    p.flops = area * rows * row_elements;
    return p;
  }
  // Instructions per window position: max, or max + compare + select for the argmax mask, or an
  // add for the average; the gradient selects by the mask and accumulates (two). The gradient's
  // select reads the argmax mask's bits: a vsel in bit mode, costed as mask_select (on the 910
  // the mask register is set for every repeat; MaxPoolGradWithArgmax was 0.29-0.49 of measured
  // on the Inception runs with a binary select).
  const double instructions = grad ? 2.0 : (mask ? 3.0 : 1.0);
  const double ds = std::max(1.0, dtype_bytes(pooled->dtype));
  // The gradient's TBE kernels (max_pool_grad_with_argmax.py, cut_nc1_cut_h) lay a dy row out
  // at wo_max = ceil(Wo / 16) x 16 pixels, so that its mask bits fill whole 16-bit words, and run
  // their selects over the padded row: an 8-pixel row costs what a 16-pixel one does.
  const bool padded_rows =
      grad && !stem && pooled->format == Format::kNC1HWC0 && pooled->shape.size() == 5;
  const double row_bytes = (padded_rows ? std::ceil(static_cast<double>(pooled->shape[3]) / 16.0) *
                                              16.0 * static_cast<double>(pooled->shape[4])
                                        : row_elements) *
                           ds;
  // The gradient accumulates in fp32: per window position the fp16 selection is converted
  // (vconv) and col2img adds it into an fp32 dx tile; other dtypes add in place.
  const bool fp32_accumulate = padded_rows && pooled->dtype == DType::kFloat16;
  const double accumulate_cycles =
      fp32_accumulate ? class_pass_cycles(VectorClass::kConvert, 2.0 * row_bytes, hw) +
                            class_pass_cycles(VectorClass::kBinary, 2.0 * row_bytes, hw)
                      : class_pass_cycles(VectorClass::kBinary, row_bytes, hw);
  // Without img2col (the 910B's vector cores have no load3d) a forward instruction reads the
  // window's pixels straight from the input map, stride_w pixels apart: one repeat can gather
  // several pixels only when a pixel's C0 is one 32-byte block (repeat block stride); an fp32
  // pixel (16 x 4 B, two blocks) takes a repeat of its own, so an instruction over the row costs
  // Wo repeats, not its bytes / 256. The CNN torch_npu profile's fp32 MaxPoolWithArgmaxV1 rows
  // (Wo 27, 13, 6) spend 227, 149 and 95 vector cycles per row and window position: 3 x (22 + 2 x
  // Wo) = 228, 144, 102.
  const bool pixel_repeats = !grad && pooled->format == Format::kNC1HWC0 &&
                             pooled->shape.size() == 5 &&
                             static_cast<double>(pooled->shape[4]) * ds > hw.memory.block_bytes;
  const double instr_bytes =
      pixel_repeats ? static_cast<double>(pooled->shape[3]) * hw.vector.repeat_bytes : row_bytes;
  const double per_row =
      grad && mask
          ? area * (class_pass_cycles(VectorClass::kMaskSelect, row_bytes, hw) + accumulate_cycles)
          : area * instructions * class_pass_cycles(VectorClass::kBinary, instr_bytes, hw);

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
  const std::int64_t tiles =
      vector_tiles(std::max(in_bytes, out_bytes), hw, cores, saturating_count(rows), core_bytes);
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
