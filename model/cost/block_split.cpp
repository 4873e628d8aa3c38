// The 910's divisor block split (model/cost/block_split.h).
#include "model/cost/block_split.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace npusim::cost {

namespace {

constexpr int kMaxCores = 64;  // a core count above this is taken as 64 (the divisor lists' size)

// The divisors of f up to `limit`, ascending; returns how many.
int divisors_upto(std::uint64_t f, int limit, std::array<std::uint32_t, kMaxCores>& out) noexcept {
  int k = 0;
  const auto top = static_cast<std::uint64_t>(std::min<std::uint64_t>(f, limit));
  for (std::uint64_t d = 1; d <= top; ++d) {
    if (f % d == 0) out[k++] = static_cast<std::uint32_t>(d);
  }
  return k;
}

}  // namespace

BlockSplit divisor_block_split(double fm, double fn, int cores) noexcept {
  BlockSplit best;
  constexpr double kMaxExact = 4503599627370496.0;  // 2^52
  if (cores < 2 || !(fm >= 1 && fn >= 1) || fm > kMaxExact || fn > kMaxExact) return best;
  const int c = std::min(cores, kMaxCores);
  const auto um = static_cast<std::uint64_t>(fm);
  const auto un = static_cast<std::uint64_t>(fn);
  std::array<std::uint32_t, kMaxCores> dm{}, dn{};
  const int km = divisors_upto(um, c, dm);
  const int kn = divisors_upto(un, c, dn);
  double best_product = 1;
  double best_load = fm + fn;  // 1 x 1: each block reads all of A and B
  for (int i = 0; i < km; ++i) {
    const double m = dm[i];
    // the largest divisor of fn with m x n <= c (dn ascending)
    for (int j = kn - 1; j >= 0; --j) {
      const double n = dn[j];
      const double product = m * n;
      if (product > c) continue;
      const double load = fm / m + fn / n;
      if (product > best_product ||
          (product == best_product && (load < best_load || (load == best_load && m > best.m)))) {
        best = {m, n};
        best_product = product;
        best_load = load;
      }
      break;  // smaller n give smaller products for this m
    }
  }
  return best;
}

}  // namespace npusim::cost
