// Reduction layouts: reduced axes from the attribute or the output shape, mapped onto the
// physical layout (ND, FRACTAL_NZ, NC1HWC0), size-1 axes dropped, same-kind neighbours merged.
#include "model/cost/reduce_layout.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace npusim::cost {

using namespace std::string_view_literals;

namespace {

constexpr std::size_t kMaxRank = 16;

// Logical rank of a physical shape: FRACTAL_NZ folds [.., N1, M1, M0, N0] into [.., M, N];
// NC1HWC0 [N, C1, H, W, C0] is NCHW.
std::int64_t logical_rank(Format f, std::int64_t r) noexcept {
  if (f == Format::kFractalNZ && r >= 4) return r - 2;
  if (f == Format::kNC1HWC0 && r == 5) return 4;
  return r;
}

// Marks the physical axes of logical axis `a` (0 <= a < logical rank) as reduced.
void mark_logical(Format f, std::int64_t r, std::int64_t a, std::array<bool, kMaxRank>& red) noexcept {
  auto set = [&](std::int64_t i) {
    if (i >= 0 && i < r) red[static_cast<std::size_t>(i)] = true;
  };
  if (f == Format::kFractalNZ && r >= 4) {
    const std::int64_t lr = r - 2;
    if (a == lr - 1) {  // N: the fractal column index N1 and the in-fractal column N0
      set(r - 4);
      set(r - 1);
    } else if (a == lr - 2) {  // M: the fractal row index M1 and the in-fractal row M0
      set(r - 3);
      set(r - 2);
    } else {
      set(a);
    }
  } else if (f == Format::kNC1HWC0 && r == 5) {
    if (a == 1) {  // C: C1 and C0
      set(1);
      set(4);
    } else {
      set(a);
    }
  } else {
    set(a);
  }
}

// Reduced axes from the output shape. Same rank: an axis the output keeps as 1 where the input
// is larger. Lower rank: the output's axes matched in order; the input axes left over are
// reduced. False when the output does not fit the input.
bool from_output(const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& o,
                 std::array<bool, kMaxRank>& red) noexcept {
  if (o.size() == s.size()) {
    bool any = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (o[i] == s[i]) continue;
      if (o[i] != 1) return false;
      red[i] = true;
      any = true;
    }
    return any;
  }
  if (o.size() > s.size()) return false;
  std::size_t j = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (j < o.size() && o[j] == s[i] && s.size() - i > o.size() - j - 1) {
      // keep the axis only if the rest of the output still fits in the rest of the input
      ++j;
    } else {
      red[i] = true;
    }
  }
  return j == o.size();
}

// Per-channel gradient sums whose output is the channel vector: they name no axes and their
// output ([C]) is not the input with axes dropped when the input is NZ or NC1HWC0.
bool channel_sum(std::string_view type) noexcept {
  return type == "BiasAddGrad"sv || type == "LayerNormBetaGammaBackpropV2"sv ||
         type == "LayerNormBetaGammaBackprop"sv;
}

}  // namespace

ReduceLayout reduce_layout(const OpDesc& op) noexcept {
  ReduceLayout l;
  if (op.inputs.empty()) return l;
  const TensorDesc& x = op.inputs[0];
  const auto& s = x.shape;
  const auto r = static_cast<std::int64_t>(s.size());
  l.elements = static_cast<double>(x.elements());
  if (r == 0 || r > static_cast<std::int64_t>(kMaxRank)) {
    l.runs[0] = {l.elements, true};
    l.count = 1;
    l.reduced = l.elements;
    return l;
  }
  std::array<bool, kMaxRank> red{};
  bool known = false;
  const std::int64_t lr = logical_rank(x.format, r);
  if (op.kind && op.kind->role == OpRole::kReduce) {
    std::array<std::int64_t, 8> axes{};
    std::size_t na = 0;
    for (const std::string_view key : {"axes"sv, "axis"sv, "dim"sv, "reduce_axes"sv}) {
      if ((na = op.attr_ints(key, axes)) > 0) break;
    }
    for (std::size_t i = 0; i < na; ++i) {
      const std::int64_t a = axes[i] < 0 ? axes[i] + lr : axes[i];
      if (a < 0 || a >= lr) continue;
      mark_logical(x.format, r, a, red);
      known = true;
    }
    if (!known && channel_sum(op.kind->type)) {
      // every logical axis but the channel: the last one (ND, NZ), C for NC1HWC0
      const std::int64_t channel = x.format == Format::kNC1HWC0 && r == 5 ? 1 : lr - 1;
      for (std::int64_t a = 0; a < lr; ++a) {
        if (a != channel) mark_logical(x.format, r, a, red);
      }
      known = true;
    }
    if (!known && !op.outputs.empty()) {
      std::array<bool, kMaxRank> guess{};
      if (from_output(s, op.outputs[0].shape, guess)) {
        red = guess;
        known = true;
      }
    }
  }
  if (!known) mark_logical(x.format, r, lr - 1, red);

  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto d = static_cast<double>(std::max<std::int64_t>(1, s[i]));
    if (red[i]) l.reduced *= d;
    if (d == 1) continue;
    if (l.count > 0 && l.runs[l.count - 1].reduced == red[i]) {
      l.runs[l.count - 1].size *= d;
    } else {
      l.runs[l.count++] = {d, red[i]};
    }
  }
  if (l.count == 0) l.runs[l.count++] = {1, true};  // a single element
  return l;
}

ReduceRepeats reduce_repeats(const ReduceLayout& l, double ds, const HwSpec& hw) noexcept {
  ReduceRepeats rr;
  const double rb = hw.vector.repeat_bytes;
  rr.dense = std::ceil(l.elements * ds / rb);
  double e = l.elements;
  double below = l.elements;  // elements of the runs inside the current one
  for (std::size_t i = 0; i < l.count; ++i) {
    below /= l.runs[i].size;
    const bool last = i + 1 == l.count;
    if (!l.runs[i].reduced || last) continue;
    // a pairwise tree per outer index: each level adds the upper half of the remaining
    // vectors onto the lower half in one vadd over their contiguous `below`-wide rows
    const double n = l.runs[i].size;
    double per_outer = 0;
    for (double m = n; m > 1;) {
      const double h = std::floor(m / 2);
      per_outer += std::ceil(h * below * ds / rb);
      m -= h;
    }
    rr.add += e / (n * below) * per_outer;
    e /= n;
  }
  if (const double len = l.last_reduced(); len > 1 || (l.count == 1 && l.runs[0].reduced)) {
    rr.row = e / std::max(1.0, len) * std::ceil(std::max(1.0, len) * ds / rb);
  }
  return rr;
}

}  // namespace npusim::cost
