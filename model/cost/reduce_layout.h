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

/// The physical reduction pattern of an op's first input, outermost run first.
struct ReduceLayout {
  static constexpr std::size_t kMaxRuns = 16;
  std::array<ReduceRun, kMaxRuns> runs{};
  std::size_t count = 0;
  double elements = 1;  ///< input elements
  double reduced = 1;   ///< product of the reduced runs (elements summed into one output)
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
