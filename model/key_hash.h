#pragma once
// The seeded string hash every holdout split uses (calibrate's shape split, the transfer fit's
// validation keys and sampling, cross-validation's shape split): FNV-1a with a final avalanche
// so nearby keys spread over [0, 1). One definition, so a key lands on the same side of a split
// wherever it is drawn with the same seed.

#include <cstdint>
#include <string_view>

namespace npusim {

[[nodiscard]] inline std::uint64_t key_hash(std::string_view s, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ULL ^ (seed * 0x9E3779B97F4A7C15ULL);
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

/// A hash mapped to [0, 1) with 53 bits.
[[nodiscard]] inline double unit_interval(std::uint64_t h) {
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

/// key_hash mapped to [0, 1).
[[nodiscard]] inline double unit_hash(std::string_view s, std::uint64_t seed) {
  return unit_interval(key_hash(s, seed));
}

}  // namespace npusim
