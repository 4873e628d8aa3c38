// Cube family: MatMul, BatchMatMul (with broadcast batch), convolutions as an implicit GEMM
// (their GEMM comes from model/cost/conv.cpp).
// Mechanisms: fractal padding of M, N, K (cube_efficiency), base-block tiling over cores with
// tail waves, operand loads GM -> L1 (ND -> NZ conversion, transposed A), operand reuse through
// L2, MTE1 into L0A/L0B, FixPipe out (DESIGN.md "Cube tile efficiency").
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

#include "model/cost/gemm.h"
#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {

struct Matrix {
  double rows = 1;
  double cols = 1;
  double batch = 1;  // product of leading dims
  std::array<std::int64_t, 8> batch_dims{};
  std::size_t batch_rank = 0;
};

// ND view of a matrix operand; a FRACTAL_NZ tensor {..., n1, m1, m0, n0} is {..., m1*m0, n1*n0}.
Matrix as_matrix(const TensorDesc& t) noexcept {
  Matrix m;
  const auto& s = t.shape;
  std::size_t lead = 0;
  if (t.format == Format::kFractalNZ && s.size() >= 4) {
    const std::size_t r = s.size();
    m.rows = static_cast<double>(s[r - 3] * s[r - 2]);
    m.cols = static_cast<double>(s[r - 4] * s[r - 1]);
    lead = r - 4;
  } else if (s.size() >= 2) {
    m.rows = static_cast<double>(s[s.size() - 2]);
    m.cols = static_cast<double>(s.back());
    lead = s.size() - 2;
  } else if (s.size() == 1) {
    m.cols = static_cast<double>(s[0]);
  }
  for (std::size_t i = 0; i < lead && m.batch_rank < m.batch_dims.size(); ++i) {
    m.batch *= static_cast<double>(s[i]);
    m.batch_dims[m.batch_rank++] = s[i];
  }
  return m;
}

std::optional<bool> transpose_attr(const OpDesc& op, bool first) {
  if (op.attrs.empty()) return std::nullopt;
  static constexpr std::array<std::string_view, 4> kA{"transpose_x1", "transpose_a", "adj_x1",
                                                      "trans_a"};
  static constexpr std::array<std::string_view, 4> kB{"transpose_x2", "transpose_b", "adj_x2",
                                                      "trans_b"};
  for (auto k : first ? kA : kB) {
    if (const auto v = op.attr(k)) return *v == "1" || *v == "true" || *v == "True" || *v == "TRUE";
  }
  return std::nullopt;
}

double cube_rate_factor(DType d, const HwSpec& hw) noexcept {
  switch (d) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt4:
      return hw.cube.int8_rate_factor;
    case DType::kFloat32:
    case DType::kHFloat32:
    case DType::kFloat64:
      return hw.cube.fp32_rate_factor;
    default:
      return 1.0;
  }
}

Gemm gemm_of_matmul(const OpDesc& op) {
  Gemm g;
  if (op.inputs.size() < 2) {
    g.warnings |= kWarnShapeMismatch;
    if (op.inputs.empty()) return g;
  }
  const TensorDesc& x1 = op.inputs[0];
  const TensorDesc& x2 = op.inputs.size() > 1 ? op.inputs[1] : op.inputs[0];
  const Matrix a = as_matrix(x1);
  const Matrix b = as_matrix(x2);
  g.dtype = x1.dtype;
  g.a_nz = x1.format == Format::kFractalNZ;
  g.b_nz = x2.format == Format::kFractalNZ;
  const auto ta_attr = transpose_attr(op, true);
  const auto tb_attr = transpose_attr(op, false);
  // Layout: attributes when given, else the first combination whose K dimensions agree and, when
  // the output is known, whose M and N are the output's (MindSpore's op_info has no transpose
  // attributes, and the dW of a linear layer, x^T . dy with x and dy both 16384 x 768, would
  // otherwise be read as a 16384 x 16384 product).
  bool found = false;
  const bool have_out = !op.outputs.empty() && !op.outputs[0].shape.empty();
  const Matrix c = have_out ? as_matrix(op.outputs[0]) : Matrix{};
  for (int pass = have_out ? 0 : 1; pass < 2 && !found; ++pass) {
    for (int combo = 0; combo < 4 && !found; ++combo) {
      const bool ta = ta_attr ? *ta_attr : (combo & 2) != 0;
      const bool tb = tb_attr ? *tb_attr : (combo & 1) != 0;
      const double ka = ta ? a.rows : a.cols;
      const double kb = tb ? b.cols : b.rows;
      const double m = ta ? a.cols : a.rows;
      const double n = tb ? b.rows : b.cols;
      if (ka == kb && (pass == 1 || (m == c.rows && n == c.cols))) {
        g.trans_a = ta;
        g.trans_b = tb;
        found = true;
      }
    }
  }
  if (!found) g.warnings |= kWarnShapeMismatch;
  g.m = g.trans_a ? a.cols : a.rows;
  g.k = g.trans_a ? a.rows : a.cols;
  g.n = g.trans_b ? b.rows : b.cols;
  // numpy-style broadcast of the batch dims
  double batch = 1;
  const std::size_t rank = std::max(a.batch_rank, b.batch_rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i + a.batch_rank >= rank ? a.batch_dims[i + a.batch_rank - rank] : 1;
    const std::int64_t db = i + b.batch_rank >= rank ? b.batch_dims[i + b.batch_rank - rank] : 1;
    batch *= static_cast<double>(std::max(da, db));
  }
  g.batch = batch;
  g.b_shared = b.batch <= 1 && batch > 1;
  if (!op.outputs.empty()) {
    g.out_dtype = op.outputs[0].dtype;
  } else {
    g.out_dtype = (g.dtype == DType::kInt8 || g.dtype == DType::kInt4) ? DType::kInt32 : g.dtype;
  }
  return g;
}

// How MatMulV3 on the 910B (ops-nn matmul_v3 tiling) runs a plain GEMM: an ND operand whose
// contiguous axis exceeds the on-the-fly ND->NZ limit is first converted to NZ by the vector
// cores (V_HEAD_ND2NZ); an unbatched GEMM with K >= SPLIT_K_THRES runs single-core split-K.
struct GemmMode {
  bool nd2nz_a = false;
  bool nd2nz_b = false;
  bool split_k = false;
};

GemmMode gemm_mode(const Gemm& g, const OpDesc& op, const HwSpec& hw) noexcept {
  GemmMode mode;
  if (op.kind->role != OpRole::kMatMul && op.kind->role != OpRole::kBatchMatMul) return mode;
  const double limit = hw.cube.nd2nz_inline_max_elements;
  if (limit > 0) {
    const double inner_a = g.trans_a ? g.m : g.k;  // the ND operand's last (contiguous) axis
    const double inner_b = g.trans_b ? g.k : g.n;
    mode.nd2nz_a = !g.a_nz && inner_a > limit;
    mode.nd2nz_b = !g.b_nz && inner_b > limit;
  }
  mode.split_k = hw.cube.split_k_min_k > 0 && g.batch <= 1 && g.k >= hw.cube.split_k_min_k;
  return mode;
}

// Share of a GEMM's operand re-reads that hit L2. Output tiles run in row-major order (N fastest),
// `cores` at a time, so an operand panel is read again after a reuse distance D of other bytes:
//   A panel (one M block): reused by the tiles of its row; D = one wave's footprint
//     W = Mw·A + Nw·B, with Nw = min(cores, tiles_n) N blocks and Mw = ceil(cores / tiles_n) M
//     blocks in flight;
//   B panel (one N block): reused by the next M block; D = W when a wave spans whole rows
//     (cores >= tiles_n), else a whole row's B panels, tiles_n·B + A.
// A re-read hits with probability min(1, L2 / D) (an LRU cache of capacity L2 under a cyclic
// reuse pattern keeps a fraction L2 / D of it). Independent GEMMs of a batch repeat the pattern,
// so the ratio is per GEMM; a B shared over the batch is folded into the rows by the caller.
// Always inline (session 20): called once per prediction, and out of line its arguments and
// result went through registers saved around the call.
[[gnu::always_inline]] inline double gemm_reread_hits(double a_panel, double b_panel,
                                                      double tiles_m, double tiles_n, int cores,
                                                      const HwSpec& hw) noexcept {
  const double c = std::max(1, cores);
  const double l2 = hw.chip.l2_bytes;
  const double nw = std::min(c, tiles_n);
  // ceil(c / tiles_n) is 1 when c <= tiles_n (finite): for c >= 1 the quotient is in (0, 1]
  // (session 20: no division when the N blocks alone fill the cores)
  const bool n_fills = c <= tiles_n && tiles_n < std::numeric_limits<double>::infinity();
  const double mw = std::min(tiles_m, n_fills ? 1.0 : fast_ceil(c / tiles_n));
  const double wave = mw * a_panel + nw * b_panel;
  const double d_a = wave;
  const double d_b = c >= tiles_n ? wave : tiles_n * b_panel + a_panel;
  const double a_rereads = tiles_m * (tiles_n - 1) * a_panel;
  const double b_rereads = (tiles_m - 1) * tiles_n * b_panel;
  const double rereads = a_rereads + b_rereads;
  // Both reuse distances within L2 (the usual GEMM on a 192 MiB L2): hits is a_rereads x 1 +
  // b_rereads x 1, the same sum as rereads, so hits / rereads is exactly 1 for a positive finite
  // rereads, and the answer is 1 otherwise anyway (session 20: one division fewer).
  if (d_a <= l2 && d_b <= l2 && rereads < std::numeric_limits<double>::infinity()) return 1.0;
  const double hits = a_rereads * reuse_hit_ratio(d_a, l2) + b_rereads * reuse_hit_ratio(d_b, l2);
  return rereads > 0 ? hits / rereads : 1.0;
}

CubePhases phases_of(const Gemm& g, const GemmMode& mode, const HwSpec& hw) noexcept {
  CubePhases ph;
  const double ds = dtype_bytes(g.dtype);
  // UB-sized tiles over the vector cores of the launch.
  auto tiles_of = [&](double bytes) {
    return static_cast<double>(vector_tiles(bytes, hw, hw.chip.vector_cores, hw.chip.vector_cores));
  };
  if (mode.nd2nz_a || mode.nd2nz_b) {
    // Read the ND operand, write it back as NZ (both axes padded to the fractal) into a GM
    // workspace, all through UB by DMA; the GEMM waits for every core (SyncAll). In NZ, each
    // 32-byte piece of an ND row lands in a different fractal column, so the write-out is one
    // 32-byte burst per piece, each paying the store's per-transfer cost. (The CANN 8.3 profile's
    // 4096x151936 bf16 operand: 39 M pieces, 0.97 M per AIV, at 12 cycles each = 7.1 ms at
    // 1650 MHz; its measured aiv_mte3 is 6.6 ms.)
    const double m0 = hw.cube.fractal_m;
    double in = 0, out = 0;
    if (mode.nd2nz_a) {
      in += g.batch * g.m * g.k * ds;
      out += g.batch * round_up(g.m, m0) * round_up(g.k, m0) * ds;
    }
    if (mode.nd2nz_b) {
      in += g.batch * g.k * g.n * ds;
      out += g.batch * round_up(g.k, m0) * round_up(g.n, m0) * ds;
    }
    KernelPlan& h = ph.head;
    h.unit = Placement::kVector;
    const double tiles = tiles_of(in);
    h.tiles = saturating_count(tiles);
    h.in = flat_transfer(in, tiles);
    h.out = flat_transfer(out, tiles);
    h.out.transfers = h.out.ideal_transfers =
        std::max(1.0, fast_ceil(h.out.bytes / hw.cube.fractal_k_bytes));
    ph.has_head = true;
  }
  if (mode.split_k) {
    // Cast the fp32 sum (still in L2 when it fits) to the output dtype.
    const double elements = g.m * g.n;
    const double in = elements * 4.0;
    KernelPlan& t = ph.tail;
    t.unit = Placement::kVector;
    const double tiles = tiles_of(in);
    t.tiles = saturating_count(tiles);
    t.in = flat_transfer(in, tiles);
    t.out = flat_transfer(elements * dtype_bytes(g.out_dtype), tiles);
    if (in <= hw.chip.l2_bytes) {
      t.reread_fraction = 1.0;
      t.reread_hit_ratio = 1.0;
    }
    t.vector_cycles = class_pass_cycles(VectorClass::kConvert, in / tiles, hw);
    ph.has_tail = true;
  }
  return ph;
}

// A GEMM whose base blocks leave cores idle and that has a single M block (unbatched: a fully
// connected layer at a small batch) has its N blocks narrowed so that more cores take a share of
// N: the parts are the largest divisor of the N fractals within the core budget. The 910B's
// MatMulV2 in the CNN torch_npu profile (M = 32) runs N = 1000 on 21 blocks of 3 fractals
// (63 = 21 x 3), N = 4096 on 16 blocks of 16 (not 24: 256 fractals have no divisor from 17 to
// 24) and N = 9216 on 24 of 24. Loops over at most `cores` candidates.
double narrow_n_tiles(const Gemm& g, bool conv, bool split_k, double tiles_m, double tiles_n,
                      double np, double n0, int cores) noexcept {
  if (conv || split_k || g.k_over_batch) return tiles_n;
  const double rows = g.batch * tiles_m;
  if (rows != 1 || tiles_n >= cores) return tiles_n;
  const double n_fractals = np / n0;  // only here: a division on every GEMM's path otherwise
  const double cap = std::min(std::floor(cores / rows), n_fractals);
  for (double parts = cap; parts > tiles_n; --parts) {
    if (std::fmod(n_fractals, parts) == 0) return parts;
  }
  return tiles_n;
}

// TBE's static GEMM tiler on the 910 (hw.cube.divisor_block_split) splits the output's M and N
// fractals over the blocks by divisors only. An axis of f > cores fractals with no divisor from 2
// to the core count (no prime factor up to it: a prime such as BERT's vocabulary, 21136 = 1321
// fractals) is not split at all. Checks the primes up to 61 (a core count above that is treated
// as 61): any divisor up to the core count has a prime factor up to it.
bool unsplittable_axis(double fractals, int cores) noexcept {
  if (cores < 2 || fractals <= cores || fractals > 4294967295.0) return false;
  static constexpr std::array<std::uint32_t, 18> kPrimes{2,  3,  5,  7,  11, 13, 17, 19, 23,
                                                         29, 31, 37, 41, 43, 47, 53, 59, 61};
  const auto f = static_cast<std::uint32_t>(fractals);
  for (const std::uint32_t q : kPrimes) {
    if (q > static_cast<std::uint32_t>(cores)) break;
    if (f % q == 0) return false;
  }
  return true;
}

// The largest divisor of `fractals` that is at most `cores` (1 when none is): the blocks the
// divisor tiler gives the axis the other one leaves whole.
double largest_divisor_upto(double fractals, int cores) noexcept {
  const auto f = static_cast<std::uint64_t>(fractals);
  for (std::uint64_t d = std::min<std::uint64_t>(f, static_cast<std::uint64_t>(cores)); d > 1;
       --d) {
    if (f % d == 0) return static_cast<double>(d);
  }
  return 1;
}

// The tile of an axis of `padded` elements (a multiple of the fractal `f`) over `tiles` blocks:
// round_up(padded / tiles, f). The two usual cases skip the division and the rounding that wait
// on the tile count (session 19: the cube's exact chain held the prediction): one block is the
// whole axis (padded / 1 = padded, already a multiple of f), and an axis that the spec's base
// block `base` divides (padded = tiles x base, exact for these integer counts below 2^53) has
// padded / tiles = base exactly, so the tile is round_up(base, f), which does not wait on
// `tiles`. Both give the general form's value bit for bit.
double block_tile(double padded, double tiles, double base, double f) noexcept {
  if (tiles == 1) return padded;
  if (tiles * base == padded) return round_up(base, f);
  return round_up(padded / tiles, f);
}

bool is_conv(OpRole role) noexcept {
  return role == OpRole::kConv2D || role == OpRole::kConvBackpropInput ||
         role == OpRole::kConvBackpropFilter;
}

}  // namespace

bool matmul_gemm(const OpDesc& op, Gemm& out) noexcept {
  if (op.kind->role == OpRole::kAttention || is_conv(op.kind->role)) return false;
  out = gemm_of_matmul(op);
  return true;
}

CubePhases cube_phases(const OpDesc& op, const OpFacts& f, const HwSpec& hw) noexcept {
  const Gemm g = f.gemm() ? *f.gemm() : gemm_of_matmul(op);
  return phases_of(g, gemm_mode(g, op, hw), hw);
}

KernelPlan plan_cube(const OpDesc& op, const OpFacts& f, const HwSpec& hw, int cores,
                     bool* has_phases) {
  if (has_phases) *has_phases = false;
  KernelPlan p;  // every return returns p, so it is built in the caller's slot
  if (op.kind->role == OpRole::kAttention) {
    p = plan_attention(op, hw);
    return p;
  }
  const bool conv = is_conv(op.kind->role);
  const Gemm g = conv       ? (f.conv() ? conv_gemm(*f.conv(), op.kind->role, hw)
                                         : gemm_of_conv(op, hw, &f.attrs))
                 : f.gemm() ? *f.gemm()
                            : gemm_of_matmul(op);
  p.unit = op.placement.value_or(Placement::kCube) == Placement::kMix ? Placement::kMix
                                                                      : Placement::kCube;
  p.cube_operand_path = true;
  p.warnings = g.warnings;
  // A convolution the table marks (forward, input gradient: model/op_table.cpp) deals whole images
  // of its NC1HWC0 map to the cores.
  if (conv && op.kind->whole_images) {
    // read in place: a copy of the operands was ~40 instructions a prediction (session 19)
    auto whole = [&](const ConvOperands& c) {
      if (c.valid && c.fx.c0 > 0) p.whole_units = saturating_count(c.fx.n);
    };
    if (const ConvOperands* c = f.conv()) {
      whole(*c);
    } else {
      whole(conv_operands(op, &f.attrs));
    }
  }
  const double ds = dtype_bytes(g.dtype);
  const double out_ds = dtype_bytes(g.out_dtype);
  const double m0 = hw.cube.fractal_m;
  const double n0 = hw.cube.fractal_n;
  const double k0 = std::max(1.0, fast_floor(div_pow2(hw.cube.fractal_k_bytes, ds)));
  const double mp = round_up(g.m, m0);
  const double np = round_up(g.n, n0);
  const double kp = round_up(g.k, k0);
  const GemmMode mode = gemm_mode(g, op, hw);
  // gemm_mode is empty for convolutions: only a MatMul's GEMM has phases
  if (has_phases) *has_phases = mode.nd2nz_a || mode.nd2nz_b || mode.split_k;
  // Each tile issues tm x tn x Kp MACs on the fractal grid; only M N K of them are useful.
  double eff = hw.cube.efficiency;
  if (g.a_nz && g.b_nz) eff *= hw.cube.nz_efficiency;
  if (conv) eff *= hw.cube.conv_efficiency;
  eff = std::min(eff, 1.0);
  const double macs_per_cycle = hw.cube.macs_per_cycle_fp16 * cube_rate_factor(g.dtype, hw) * eff;
  p.flops = 2 * g.batch * g.m * g.n * g.k;
  // An operand converted to NZ beforehand (head phase) loads without the ND->NZ penalty.
  const bool a_nz = g.a_nz || mode.nd2nz_a;
  const bool b_nz = g.b_nz || mode.nd2nz_b;
  const double ra = (a_nz ? 1.0 : hw.cube.nd2nz_load_factor) *
                    (g.trans_a ? hw.cube.transposed_a_efficiency : 1.0);
  const double rb = b_nz ? 1.0 : hw.cube.nd2nz_load_factor;
  const double a_unique = g.batch * g.m * g.k * ds * g.a_read_factor;
  const double b_unique = (g.b_shared ? 1.0 : g.batch) * g.k * g.n * ds * g.b_read_factor;

  // Output tile of tm x tn over a K range of tk: operand transfers, MTE1 and the cube. Always
  // inline (session 20): with three call sites GCC kept it out of line, and each call stored a
  // closure of pointers to the captured locals and read every capture back through it.
  auto tile_io = [&](double tm, double tn, double tk, double tiles) __attribute__((always_inline)) {
    const double a_rows = g.trans_a ? tk : tm;
    const double a_row_bytes = (g.trans_a ? tm : tk) * ds * g.a_read_factor;
    const double b_rows = g.trans_b ? tn : tk;
    const double b_row_bytes = (g.trans_b ? tk : tn) * ds * g.b_read_factor;
    // An im2col operand (read factor < 1) is not loaded row by row of the unfolded matrix:
    // load3d's source is a block of whole feature-map rows, one contiguous DMA per tile.
    const Transfer ta = g.a_read_factor < 1 ? flat_transfer(a_rows * a_row_bytes, 1)
                                            : row_transfer(a_rows, a_row_bytes, 1, hw);
    const Transfer tb = g.b_read_factor < 1 ? flat_transfer(b_rows * b_row_bytes, 1)
                                            : row_transfer(b_rows, b_row_bytes, 1, hw);
    p.in.bytes = ta.bytes + tb.bytes;
    p.in.padded_bytes = ta.padded_bytes + tb.padded_bytes;
    p.in.transfers = ta.transfers + tb.transfers;
    p.in.ideal_transfers = ta.ideal_transfers + tb.ideal_transfers;
    // Both operands at the full rate (NZ, untransposed): the padded bytes over their own sum,
    // exactly 1 when positive and finite, without the three divisions (session 19, 2nd round).
    const bool full_rate = ra == 1.0 && rb == 1.0 && p.in.padded_bytes > 0 &&
                           p.in.padded_bytes < std::numeric_limits<double>::infinity();
    p.in.rate_factor =
        full_rate ? 1.0 : p.in.padded_bytes / (ta.padded_bytes / ra + tb.padded_bytes / rb);
    // Unique operand bytes; every other byte read is a re-read of an operand block through L2.
    const double read_total = p.in.padded_bytes * tiles;
    p.reread_fraction =
        read_total > 0 ? std::clamp(1.0 - (a_unique + b_unique) / read_total, 0.0, 1.0) : 0.0;
    p.cube_cycles = tm * tn * tk / macs_per_cycle;
    // L1 -> L0A / L0B on MTE1.
    p.mte1_cycles = tm * tk * ds / hw.cube.l1_to_l0a_bytes_per_cycle +
                    tk * tn * ds / hw.cube.l1_to_l0b_bytes_per_cycle;
    return std::pair{ta.padded_bytes, tb.padded_bytes};
  };

  const double tiles_m = fast_ceil(div_pow2(mp, hw.cube.tile_m));
  const double tiles_n = narrow_n_tiles(g, conv, mode.split_k, tiles_m,
                                        fast_ceil(div_pow2(np, hw.cube.tile_n)), np, n0, cores);
  const double tm = block_tile(mp, tiles_m, hw.cube.tile_m, m0);
  const double tn = block_tile(np, tiles_n, hw.cube.tile_n, n0);
  p.l0c_single_buffer = tm * tn * 4.0 > hw.chip.l0c_bytes / 2;  // the tile's fp32 accumulator
  if (mode.split_k) {
    // Single-core split-K: each core owns a block of rows and all of N and walks K in chunks;
    // for every chunk it runs its base blocks (tm x tn over the chunk) and FixPipe adds each
    // block's fp32 partial into an M x N workspace (atomic add). The vector cores cast the sum
    // afterwards (tail phase). All cores work on the same chunk, so the operand re-reads of a
    // step hit L2 while one step's footprint fits.
    const double chunk = std::max(k0, fast_floor(hw.cube.split_k_chunk_bytes / ds / k0) * k0);
    const double loop_k = fast_ceil(kp / chunk);
    const double tiles = tiles_m * tiles_n * loop_k;
    p.tiles = saturating_count(tiles);
    const auto [a_tile, b_tile] = tile_io(tm, tn, chunk, tiles);
    p.cube_efficiency = (g.m * g.n * g.k) / (tiles_m * tm * tiles_n * tn * loop_k * chunk);
    const double step = tiles_m * a_tile + tiles_n * b_tile;
    p.reread_hit_ratio = reuse_hit_ratio(step, hw.chip.l2_bytes);
    p.fixpipe_bytes = tm * tn * 4.0;
    p.l1_single_buffer = a_tile + b_tile > hw.chip.l1_bytes / 2;
    p.fixpipe_in_l2 = g.m * g.n * 4.0 <= hw.chip.l2_bytes;
    p.fixpipe_atomic = true;
    return p;
  }

  // An output axis the divisor tiler cannot split (see unsplittable_axis): the blocks split the
  // other axis by its largest divisor up to the cores, and each block computes its share of that
  // axis against the whole of this one over all of K, so it streams the whole operand on this
  // side (BERT's vocabulary GEMMs on the 910: logits 640 x 21136 on 20 blocks, each reading all
  // of the 21136 x 768 weights; the weight gradient 21136 x 768 on 24 blocks, each reading all of
  // the 640 x 21136 logit gradient). Each block reads it at its port's DDR rate, whether or not
  // the other blocks' reads left it in L2 (docs/accuracy_mechanisms.md, "Session 19").
  if (hw.cube.divisor_block_split && !conv && g.batch <= 1 && !g.k_over_batch) {
    // The tiler splits for the chip's cores (the blocks it launches), whatever share of them
    // the caller's budget runs them on.
    const int chip_cores = hw.chip.cube_cores;
    const double fm = mp / m0;
    const double fn = np / n0;
    const bool m_whole = unsplittable_axis(fm, chip_cores);
    if (m_whole || unsplittable_axis(fn, chip_cores)) {
      const double m_dim = m_whole ? 1.0 : largest_divisor_upto(fm, chip_cores);
      const double n_dim = m_whole ? largest_divisor_upto(fn, chip_cores) : 1.0;
      const double tiles = m_dim * n_dim;
      p.tiles = saturating_count(tiles);
      (void)tile_io(mp / m_dim, np / n_dim, kp, tiles);
      p.cube_efficiency = (g.m * g.n * g.k) / (mp * np * kp);
      p.reread_hit_ratio = 0;
      p.fixpipe_bytes = g.m * g.n * out_ds / tiles;
      return p;
    }
  }

  // A filter gradient's K runs over the batch: when its output blocks leave cores idle, the
  // cores take images apart and FixPipe adds their fp32 partials into the output (atomic add).
  // The tiler balances the cores: it takes the number of image groups that minimises the
  // waves per part of K, ceil(blocks * parts / cores) / parts (the fewest parts on a tie).
  const double base_tiles = g.batch * tiles_m * tiles_n;
  double parts = 1;
  if (g.k_over_batch) {
    double best = fast_ceil(base_tiles / cores);
    for (double q = 2; q <= std::min(g.k_batch, static_cast<double>(cores)); ++q) {
      const double cost = fast_ceil(base_tiles * q / cores) / q;
      if (cost < best - 1e-12) {
        best = cost;
        parts = q;
      }
    }
  }
  const double tk = parts > 1 ? round_up(kp / parts, k0) : kp;
  const double tiles = base_tiles * parts;
  p.tiles = saturating_count(tiles);
  const auto [a_tile, b_tile] = tile_io(tm, tn, tk, tiles);
  p.cube_efficiency = (g.m * g.n * g.k) / (tiles_m * tm * tiles_n * tn * tk * parts);
  if (parts > 1) {
    p.reread_hit_ratio = gemm_reread_hits(a_tile, b_tile, tiles_m, tiles_n, cores, hw);
    p.fixpipe_bytes = tm * tn * 4.0;
    p.fixpipe_atomic = true;
    return p;
  }
  p.reread_hit_ratio = gemm_reread_hits(a_tile, b_tile, (g.b_shared ? g.batch : 1) * tiles_m,
                                        tiles_n, cores, hw);
  // Results out of L0C through FixPipe.
  p.fixpipe_bytes = g.batch * g.m * g.n * out_ds / tiles;
  return p;
}


}  // namespace npusim::cost
