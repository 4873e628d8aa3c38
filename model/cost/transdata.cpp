// TransData between a plain layout (NCHW, ND) and the 5-D layouts of the cube: NC1HWC0 for
// feature maps, FRACTAL_Z for filters. Mechanisms: the burst pattern on the plain side (whole
// images that fit the UB move as one run; larger ones one strided burst per channel plane), the
// scalar address computation per burst or per C0 group, and load / reorder / store in series.
#include <algorithm>

#include "model/cost/kernel_plan.h"

namespace npusim::cost {

namespace {

bool is_5d(Format f) noexcept { return f == Format::kNC1HWC0 || f == Format::kFractalZ; }

}  // namespace

bool is_5d_transdata(Format x, Format y) noexcept { return is_5d(x) || is_5d(y); }

// The kernel does not move the plain side row by row of its last axis (a DMA per 52-byte row of
// NCHW 32x256x13x13 would take about 50 us; the CNN torch_npu profile, CANN 8, measures aiv_mte2
// 7-15 us). The 5-D side is contiguous. On the plain side:
// - NC1HWC0: one image's C x H x W that fits the half of the UB the kernel loads into (the other
//   half takes the reordered copy) moves whole. A larger image is tiled over H x W with every
//   channel kept, as the reorder needs C on its rows: one strided burst per channel plane, each
//   issued with an address the scalar unit computes. (CNN profile, fp32: 32x256x6x6, 36 KB per
//   image, reads in 0.45 us; 32x256x13x13, 173 KB, reads in 7-9 us with 2.4-3.2 us of scalar
//   time, 256 planes per core at 17-23 cycles each.)
// - FRACTAL_Z: one output channel's Cin x kh x kw is contiguous, but the reorder gathers C0
//   channels kh x kw elements apart for each (c1, kh, kw, cout) group: the scalar unit computes
//   the addresses of every C0 group (CNN profile: 256x384x3x3 fp32 on 43 cores, 2572 groups per
//   core, aiv_scalar 28.4 us, 20 cycles per group at 1.8 GHz; 256x256x3x3 17.9 us for 1715).
void plan_5d_transdata(KernelPlan& p, const TensorDesc& x, const TensorDesc& y, double nt,
                       const HwSpec& hw) noexcept {
  const bool x_plain = !is_5d(x.format);
  const TensorDesc& plain = x_plain ? x : y;
  const TensorDesc& other = x_plain ? y : x;
  const auto& s = plain.shape;
  const double elements = static_cast<double>(plain.elements());
  const double ds_plain = dtype_bytes(plain.dtype);
  double run = elements;
  bool contiguous = true;
  double scalar_steps = 0;  // bursts or C0 groups whose address the scalar unit computes
  if (other.format == Format::kNC1HWC0 && other.shape.size() == 5 && s.size() == 4) {
    const double plane = static_cast<double>(s[2] * s[3]);
    if (static_cast<double>(s[1]) * plane * ds_plain <= hw.chip.ub_bytes / 2) {
      run = static_cast<double>(s[1]) * plane;
    } else {
      run = plane;
      contiguous = false;
      scalar_steps = elements / std::max(1.0, plane);
    }
  } else if (other.format == Format::kFractalZ && s.size() == 4) {
    run = static_cast<double>(s[1] * s[2] * s[3]);
    if (!other.shape.empty() && other.shape.back() > 0) {
      scalar_steps = static_cast<double>(other.elements()) / static_cast<double>(other.shape.back());
    }
  }
  const Transfer plain_t =
      row_transfer(elements / std::max(1.0, run), run * ds_plain, nt, hw, contiguous);
  const Transfer five_t = flat_transfer(other.bytes(), nt);
  p.in = x_plain ? plain_t : five_t;
  p.out = x_plain ? five_t : plain_t;
  p.scalar_cycles += scalar_steps / nt * hw.vector.scalar_cycles_per_index;
  // Load, reorder and store run in series: over the 57 TransData rows of the CNN profile the
  // median aiv_time is 1.03 times MTE2 + vector + MTE3 + scalar busy times added.
  p.ub_single_buffer = true;
}

}  // namespace npusim::cost
