// Rule block_dim: kernels whose block dim does not fill the cores in whole waves. With B blocks
// on C cores the kernel runs ceil(B / C) waves and the last holds B - (waves - 1) * C blocks;
// the share of core time left idle is 1 - B / (waves * C) (for B < C: the cores it never uses).
// The reference advisor flags any block dim that is not a multiple of the core count
// (msprof-analyze block_dim_checker.py, AI_CORE against the AI core count, AI_VECTOR_CORE and
// the mix block dim against the vector core count); npusim weighs it: only kernels whose mean
// call is at least kMinMeanUs and whose idle share is at least kMinIdleShare, at stake their
// time × the idle share (the time the work would save spread over every core).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

/// Below this mean duration a kernel is dominated by launch and head time (a few µs per core,
/// docs/model.md "head"): fewer blocks is the right choice there (estimate).
constexpr double kMinMeanUs = 20.0;
/// Idle share of the core time worth naming (estimate: a tenth, as the other share thresholds).
constexpr double kMinIdleShare = 0.10;

double idle_share(int blocks, int cores) {
  if (blocks <= 0 || cores <= 0) return 0;
  const double waves = std::ceil(double(blocks) / cores);
  return 1 - double(blocks) / (waves * cores);
}

}  // namespace

void check_block_dim(Context& c) {
  const ChipFigures& chip = c.report.chip;
  if (!chip.cube_cores || *chip.cube_cores <= 0) {
    c.skip("block_dim", "the chip's core count is unknown: pass --hw");
    return;
  }
  const int cube = *chip.cube_cores;
  const int vec = chip.vector_cores.value_or(0);
  struct Hit {
    const Kernel* k;
    double share, at_stake;
    std::string text;
  };
  std::vector<Hit> hits;
  bool vector_skipped = false;
  for (const Kernel& k : c.kernels) {
    if (k.count == 0 || k.block_dim <= 0) continue;
    if (k.total_us / double(k.count) < kMinMeanUs) continue;
    int cores = 0, blocks = k.block_dim;
    std::string what;
    if (k.kind == TaskKind::kCube) {
      cores = cube, what = "cube";
    } else if (k.kind == TaskKind::kVector) {
      cores = vec, what = "vector";
    } else if (k.kind == TaskKind::kMix) {
      cores = cube, what = "cube";  // MIX_AIC: block dim counts cube cores, each with its vectors
    } else {
      continue;
    }
    if (cores <= 0) {
      vector_skipped = true;
      continue;
    }
    const double share = idle_share(blocks, cores);
    if (share < kMinIdleShare) continue;
    const int waves = int(std::ceil(double(blocks) / cores));
    const int last = blocks - (waves - 1) * cores;
    Hit h{&k, share, k.total_us * share, ""};
    h.text = fmt::format("{} [{}]: block dim {} on {} {} cores = {} wave{}{}; {} of the core time "
                         "idle; {} calls, {}",
                         k.type, k.shapes, blocks, cores, what, waves, waves > 1 ? "s" : "",
                         waves > 1 ? fmt::format(", the last with {} blocks", last) : "",
                         pct(share), k.count, fmt_us(k.total_us));
    hits.push_back(h);
  }
  if (vector_skipped) {
    c.skip("block_dim vector kernels", "the chip's vector core count is unknown: pass --hw");
  }
  if (hits.empty()) return;
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& a, const Hit& b) { return a.at_stake > b.at_stake; });
  Finding f;
  f.check = "block_dim";
  for (const Hit& h : hits) {
    f.time_us += h.at_stake;
    if (f.ops.size() >= c.max_listed()) continue;
    f.ops.push_back(h.k->first_name);
    f.evidence.push_back({h.k->first_name, std::nullopt, h.text});
  }
  f.title = fmt::format("{} kernels leave cores idle: their block dim is not whole waves of the "
                        "{} cube / {} vector cores",
                        hits.size(), cube, vec > 0 ? std::to_string(vec) : "?");
  f.evidence.insert(f.evidence.begin(), {"kernels", double(hits.size()), ""});
  f.advice = {"Give the op more, smaller tiles (or a split of another axis) so the block dim is "
              "a multiple of the core count; a last partial wave costs a whole wave's time",
              "For a fixed-size kernel (a custom op), set its block dim to the core count of the "
              "chip it runs on rather than to a constant"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
