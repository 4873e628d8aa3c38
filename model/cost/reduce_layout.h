#pragma once
// Which physical axes a reduction sums over, and what that costs on the vector unit.
//
// A reduction is planned on its physical layout the way the TBE reduce tiling plans it: axes of
// size 1 are dropped and adjacent axes of the same kind (reduced / kept) merged, so
// [12000,39,1] summed over axis 1 is [12000,39] summed over its last axis. The reduced axes come
// from the op's attribute, else from the output shape (an axis the output drops, or keeps as 1
// where the input is larger), else the last logical axis. A FRACTAL_NZ input [.., N1, M1, M0, N0]
// reducing its logical last axis sums N1 (whole 16x16 fractal blocks, vector adds) and N0; an
// NC1HWC0 input reducing N, H, W sums C0-wide vectors.

#include <array>
#include <cstdint>

#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "model/op_table.h"

namespace npusim::cost {

/// One run of merged physical axes.
struct ReduceRun {
  double size = 1;
  bool reduced = false;
};

/// What reduction_plan (model/cost/vector_ops.cpp) reads from the op beside the layout: the
/// first input's elements and dtype, the leading-run and last-axis decisions, the rows, the
/// tiler's cap on parallel units (when it does not depend on the chip), the tensors converted and
/// the output bytes. Op-only, so a PreparedOp holds them (session 19: Softmax walked them per
/// call); reduction_layout() fills them with the builder's own expressions.
struct ReducePlanFacts {
  bool valid = false;  ///< filled: the op has a kind and an input
  double e = 1, ds = 2, out_ds = 2;
  bool leading = false;              ///< a reduced run with kept axes inside it
  double row_len = 1;                ///< the reduced last run (1 when the last run is kept)
  bool last_axis_reduction = false;  ///< nothing reduced but the contiguous last run
  double rows = 1, out_elements = 1;
  bool parallel_ready = false;  ///< `parallel` is op-only (not a last-axis ReduceSum's row split)
  std::int64_t parallel = 1;
  bool scalar = false;  ///< int64 data: the scalar unit
  int bf16 = 0;         ///< full-size bf16 tensors (bf16_tensors)
  int reduces = 0;      ///< reduce-class passes (a rowwise op's per-row syncs)
  int widen_casts = 0;  ///< full-size 2-byte tensors (a kernel that computes in fp32)
  double segment = 0;   ///< the NZ segment of a per-row ND operand (0: none)
  double out_bytes_leading = 0;  ///< every output's bytes (leading reductions)
  double full_out = 0;  ///< further outputs as large as the input (SquareSumV2's x * x)
  double flops = 0;
};

/// The physical reduction pattern of an op's first input, outermost run first.
struct ReduceLayout {
  static constexpr std::size_t kMaxRuns = 16;
  std::array<ReduceRun, kMaxRuns> runs{};
  std::size_t count = 0;
  double elements = 1;  ///< input elements
  double reduced = 1;   ///< product of the reduced runs (elements summed into one output)
  /// The plan's op-only part (filled by reduction_layout(), not by reduce_layout()).
  ReducePlanFacts plan;
  /// Length of the last run when it is reduced (a row reduction along the contiguous axis), else 1.
  [[nodiscard]] double last_reduced() const noexcept {
    return count > 0 && runs[count - 1].reduced ? runs[count - 1].size : 1;
  }
  /// Length of the last run when it is kept (the vector width of leading-axis adds), else 1.
  [[nodiscard]] double inner_kept() const noexcept {
    return count > 0 && !runs[count - 1].reduced ? runs[count - 1].size : 1;
  }
};

/// The reduction pattern of `op` (kReduce and kRowwise roles; rowwise ops reduce the logical last
/// axis). Never fails: an input without a shape is one kept run of one element.
[[nodiscard]] ReduceLayout reduce_layout(const OpDesc& op) noexcept;

/// reduce_layout() with its `plan` filled: what the reduction builder reads (model/cost/
/// vector_ops.cpp, beside the builder; a PreparedOp holds it).
[[nodiscard]] ReduceLayout reduction_layout(const OpDesc& op) noexcept;

/// Vector repeats of one sum over the layout, in the order the kernel runs it: each reduced run
/// of n with kept axes inside it (`below` elements beneath each index) is summed by a pairwise
/// tree per outer index, each level one vadd over the upper half's contiguous rows
/// (ceil(half x below bytes / repeat) repeats, binary class): about one dense pass plus log2(n)
/// partial repeats. That shrinks the data; a reduced last run is then summed row by row (vcadd:
/// one repeat per started 256 bytes of row, reduce class). `ds` is the data dtype's size.
struct ReduceRepeats {
  double add = 0;     ///< binary-class repeats (leading-axis vector adds)
  double row = 0;     ///< reduce-class repeats (last-axis row sums)
  double dense = 0;   ///< repeats of one elementwise pass over the input
};
[[nodiscard]] ReduceRepeats reduce_repeats(const ReduceLayout& l, double ds,
                                           const HwSpec& hw) noexcept;

}  // namespace npusim::cost
