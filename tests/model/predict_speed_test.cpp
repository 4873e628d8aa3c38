// The exact shortcuts that keep predict() fast (docs/predict_speed.md, issue #16): each must give
// the bits of the arithmetic it replaces, for every input.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "model/cost/kernel_plan.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

// Same bits, or both NaN.
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

TEST_CASE("div_pow2 gives the division's bits for every dividend and divisor", "[predict_speed]") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kDenorm = std::numeric_limits<double>::denorm_min();
  std::vector<double> xs = {0.0,  -0.0, 1.0,  -1.0,    3.0,      1e-310, -1e-310, kDenorm,
                            1e308, -1e308, kInf, -kInf, kNaN, 4096.0, 12345.678, 0.1,
                            std::numeric_limits<double>::max(), std::numeric_limits<double>::min()};
  // powers of two from tiny to huge (2^-1022 .. 2^1023), and divisors that are not one
  std::vector<double> ms = {3.0, 1650.0, 0.3, 1e-300, 6.0, 96.0, -32.0, -0.5, 0.0, -0.0, kInf,
                            -kInf, kNaN, kDenorm, 1.0 + 1e-15};
  for (int k = -1074; k <= 1023; k += 7) ms.push_back(std::ldexp(1.0, k));
  for (int k = -1022; k <= 1023; k += 97) ms.push_back(-std::ldexp(1.0, k));
  ms.push_back(std::ldexp(1.0, 1023));
  ms.push_back(std::ldexp(1.0, -1022));
  ms.push_back(std::ldexp(1.0, -1023));  // subnormal power of two: divides
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    // random bit patterns: every exponent, sign and mantissa
    xs.push_back(std::bit_cast<double>(rng()));
  }
  int checked = 0;
  for (const double m : ms) {
    for (const double x : xs) {
      INFO("x = " << x << ", m = " << m);
      REQUIRE(same(cost::div_pow2(x, m), x / m));
      ++checked;
    }
  }
  CHECK(checked > 100000);
  // the shortcut is taken: a power of two does not divide (a multiply by 2^-5 here)
  CHECK(cost::div_pow2(96.0, 32.0) == 3.0);
  CHECK(cost::div_pow2(1.0, 0.25) == 4.0);
}

TEST_CASE("round_up with a power-of-two step is the division's", "[predict_speed]") {
  for (double x : {0.0, 1.0, 15.0, 16.0, 17.0, 1000.5, 4096.0, 1e15}) {
    for (double m : {16.0, 32.0, 8.0, 1.0, 0.5}) {
      const double q = x / m;
      const auto qi = static_cast<double>(static_cast<std::int64_t>(q));
      INFO("x = " << x << ", m = " << m);
      CHECK(same(cost::round_up(x, m), (q > qi ? qi + 1 : qi) * m));
    }
  }
}

TEST_CASE("a cold read stream with no re-reads costs bytes x time per byte per core, bit for bit",
          "[predict_speed]") {
  // evaluate() skips the hit term when nothing is re-read and L2 is cold (a lone op); the MTE2
  // stage must still be the general formula's, bytes x (h / l2_rate + (1 - h) / gm_rate, as times
  // per byte) x (1 / f) / rate_factor + setup x (1 / f) with h = 0 (session 18's times per byte,
  // docs/predict_speed.md), on rates that are and are not powers of two.
  HwSpec hw = test::chip("ascend910b3");
  hw.memory.l2_hit_ratio_default = 0;
  for (const double gm : {16.0, 23.7, 64.0, 100.0 / 3.0}) {
    for (const double rate_factor : {1.0, 0.7, 1.0 / 3.0}) {
      hw.memory.gm_read_bytes_per_cycle = gm;
      cost::KernelPlan p;
      p.unit = Placement::kVector;
      p.tiles = 1;
      p.in.bytes = p.in.padded_bytes = 123457;
      p.in.transfers = p.in.ideal_transfers = 1;
      p.in.rate_factor = rate_factor;
      const OpCost c = cost::evaluate(p, hw, CoreBudget{}, PredictContext{});
      const double us_per_cycle = 1.0 / hw.cycles_per_us();
      const double l2_rate = std::max(gm, hw.memory.l2_read_bytes_per_cycle);
      const double h = 0.0;
      const double cycles_per_byte = h * (1.0 / l2_rate) + (1 - h) * (1.0 / gm);
      const double us_per_byte = cycles_per_byte * (us_per_cycle / rate_factor);
      const double stage =
          123457.0 * us_per_byte + 1 * hw.memory.mte2_setup_cycles * us_per_cycle;
      INFO("gm = " << gm << ", rate_factor = " << rate_factor);
      CHECK(same(c.pipes.mte2_us, 1.0 * (stage + 0.0 + 0.0)));
      CHECK(same(c.bytes_in, 123457.0));
    }
  }
}
