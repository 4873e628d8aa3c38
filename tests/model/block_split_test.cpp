// Hand-computed cases for the 910's divisor block split (model/cost/block_split.h): the largest
// m x n within the cores with m dividing M's fractals and n dividing N's; on a tie of products the
// fewest operand rows and columns a block reads (fm / m + fn / n), then the larger m.
#include <catch2/catch.hpp>

#include "model/cost/block_split.h"

using npusim::cost::divisor_block_split;

TEST_CASE("divisor block split: the largest product of divisors within the cores",
          "[cube][divisor]") {
  auto check = [](double fm, double fn, int cores, double m, double n) {
    const auto s = divisor_block_split(fm, fn, cores);
    CHECK(s.m == m);
    CHECK(s.n == n);
  };
  // 40 x 48 on 30: 30 = 5 x 6 (8 + 8 = 16 a block) or 10 x 3 (4 + 16 = 20): 5 x 6
  check(40, 48, 30, 5, 6);
  // 256 x 48 on 30: no product of 30..25 (256 has no odd divisor, 48 no 5 or 7); 24 = 8 x 3
  // (32 + 16 = 48), 4 x 6 (64 + 8 = 72), 2 x 12, 1 x 24: 8 x 3
  check(256, 48, 30, 8, 3);
  // a prime 1321 (BERT's vocabulary) takes 1; 48's largest divisor up to 30 is 24
  check(1321, 48, 30, 1, 24);
  // 48 x 48 on 30: 24 as 4 x 6 and 6 x 4 both read 20: the larger m
  check(48, 48, 30, 6, 4);
  // 196 x 48 on 30: 28 = 7 x 4 (28 + 12 = 40), 14 x 2 (14 + 24 = 38), 28 x 1 (7 + 48 = 55)
  check(196, 48, 30, 14, 2);
  check(63, 48, 30, 7, 4);  // 28 = 7 x 4 only (9 x 3 = 27 is less)
  check(8, 1, 30, 8, 1);
  check(2, 7, 30, 2, 7);
  check(1, 128, 30, 1, 16);  // 32 is above 30
  check(1, 128, 32, 1, 32);
  check(1, 1, 30, 1, 1);
  check(40, 48, 1, 1, 1);  // one core: one block
}
