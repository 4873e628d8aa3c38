#pragma once
// The 910's static GEMM tiler (TBE, MindSpore runs) splits an unbatched GEMM's output over the
// blocks it launches by divisors only: M's fractals into m parts and N's into n parts, m and n
// dividing them exactly, m x n at most the chip's cube cores. The block dims of the MindSpore 910
// profiles follow the largest such product: M x N = 40 x 48 fractals on 30 blocks (5 x 6), 196 x
// 48 and 63 x 48 on 28 (7 x 4), 4 x 48 on 24, 8 x 1 on 8, 2 x 7 on 14, 1 x 128 on 16, 750 x 64
// on 30 (docs/accuracy_mechanisms.md, "Session 20"). Where the chip's spec sets
// cube.divisor_block_split, model/cost/cube.cpp plans such a GEMM on these blocks.

namespace npusim::cost {

struct BlockSplit {
  double m = 1;  ///< parts of M's fractals (divides them)
  double n = 1;  ///< parts of N's fractals (divides them)
};

/// The divisor split of an output of `fm` x `fn` fractals (whole numbers >= 1) over at most
/// `cores` blocks: the largest product m x n with m | fm, n | fn, m x n <= cores. Of the pairs
/// with that product, the one whose block reads the fewest operand rows and columns (fm / m +
/// fn / n: a block reads its M share of A and its N share of B over all of K); then the larger
/// m. An axis above 2^52 fractals, or fewer than 2 cores, gives 1 x 1.
[[nodiscard]] BlockSplit divisor_block_split(double fm, double fn, int cores) noexcept;

}  // namespace npusim::cost
