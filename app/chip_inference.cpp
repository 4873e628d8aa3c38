#include "app/chip_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "model/error.h"

namespace npusim::app {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void add_dim(std::vector<int>& dims, int d) {
  if (d <= 0) return;
  const auto it = std::lower_bound(dims.begin(), dims.end(), d);
  if (it == dims.end() || *it != d) dims.insert(it, d);
}

// The largest block dim at or below `cores` (0 when every block dim is above it).
int largest_within(const std::vector<int>& dims, int cores) {
  int best = 0;
  for (const int d : dims) {
    if (d <= cores) best = std::max(best, d);
  }
  return best;
}

// Block dims at or below the count, or whole waves of it (a tiler sizes its grid to the chip).
std::size_t fitting(const std::vector<int>& dims, int cores) {
  std::size_t n = 0;
  for (const int d : dims) n += (d <= cores || d % cores == 0) ? 1 : 0;
  return n;
}

std::string dims_text(const std::vector<int>& dims) {
  if (dims.empty()) return "none";
  std::string s;
  const std::size_t shown = std::min<std::size_t>(dims.size(), 12);
  for (std::size_t i = dims.size() - shown; i < dims.size(); ++i) {
    s += (s.empty() ? "" : ",") + std::to_string(dims[i]);
  }
  return (dims.size() > shown ? "...," : "") + s;
}

}  // namespace

void observe_row(InferredChip& c, const profile::KernelRow& r) {
  using profile::TaskKind;
  if (r.block_dim <= 0) return;
  const bool mix_aiv = r.task_type == "MIX_AIV";
  if (r.kind == TaskKind::kVector || mix_aiv) {
    add_dim(c.vector_block_dims, r.block_dim);
    ++c.vector_rows;
    if (r.aiv_total_cycles > 0 && r.aiv_time_us > 0) {
      c.freq_samples_.push_back(r.aiv_total_cycles / (r.aiv_time_us * r.block_dim));
    }
    return;
  }
  if (r.kind != TaskKind::kCube && r.kind != TaskKind::kMix) return;
  add_dim(c.cube_block_dims, r.block_dim);
  ++c.cube_dim_rows[r.block_dim];
  ++c.cube_rows;
  if (r.kind == TaskKind::kMix && r.mix_block_dim > 0) {
    add_dim(c.vector_block_dims, r.mix_block_dim);
    ++c.vector_rows;
  }
  // Coupled chips write unprefixed total_cycles, read into aic_total_cycles.
  if (r.aic_total_cycles > 0 && r.aic_time_us > 0) {
    const double f_mhz = r.aic_total_cycles / (r.aic_time_us * r.block_dim);
    c.freq_samples_.push_back(f_mhz);
    if (r.cube_utilization_pct > 0 && r.duration_us > 0) {
      c.util_samples_.push_back(r.aic_total_cycles /
                                (f_mhz * r.duration_us * r.cube_utilization_pct / 100.0));
    }
  }
}

void finish_inference(InferredChip& c, double stated_freq_mhz) {
  c.freq_mhz = std::round(median(c.freq_samples_));
  c.freq_rows = c.freq_samples_.size();
  c.cube_cores = static_cast<int>(std::lround(median(c.util_samples_)));
  c.util_rows = c.util_samples_.size();
  std::string clock;
  if (c.freq_rows > 0) {
    clock = fmt::format("clock {} MHz from total_cycles / (pipe time x block dim) over {} rows",
                        c.freq_mhz, c.freq_rows);
  } else if (stated_freq_mhz > 0) {
    c.freq_mhz = stated_freq_mhz;
    clock = fmt::format("clock {} MHz as the profile states it (no cycle counts)", c.freq_mhz);
  } else {
    clock = "no cycle counts (clock: the chip's nominal one)";
  }
  c.clock_known = c.freq_mhz > 0;
  std::string util = c.util_rows > 0 ? fmt::format("; {} cube cores from cube_utilization over {} "
                                                   "rows",
                                                   c.cube_cores, c.util_rows)
                                     : std::string();
  c.evidence = fmt::format("{}{}; block dims of {} cube-side rows: {}; of {} vector-side rows: {}",
                           clock, util, c.cube_rows, dims_text(c.cube_block_dims), c.vector_rows,
                           dims_text(c.vector_block_dims));
}

ChipMatch best_chip(const InferredChip& c, const std::vector<HwSpec>& chips) {
  const SourcePos pos{"<command line>", 0, 0};
  if (c.cube_rows == 0 && c.vector_rows == 0 && !c.clock_known) {
    throw InputError(pos, "--hw auto: the profile's rows show no block dims and no cycle counts "
                          "to infer the chip from; give --hw NAME");
  }
  std::vector<ChipMatch> all;
  // (launches at the count, wave fit, -clock distance). Launches at the count come first: on a
  // coupled chip the vector kernels' tilers take every core, so most wide launches are exactly
  // the core count. The MindSpore 910 runs launch 30 blocks hundreds to thousands of times and 32
  // at most 121 times (GEMM tilings from a repository tuned on 32-core parts): a 30-core chip,
  // whose 32-block GEMMs run their last two blocks in a second round (docs/accuracy.md), though
  // 32 is the largest block dim at or below 32 and a 32-core chip fits the block dims as well.
  std::vector<std::tuple<std::size_t, double, double>> tie;
  for (std::size_t i = 0; i < chips.size(); ++i) {
    const ChipSpec& s = chips[i].chip;
    ChipMatch m;
    m.index = i;
    double possible = 0;
    auto item = [&](bool ok, double weight, std::string text) {
      possible += weight;
      if (ok) {
        m.score += weight;
        m.matched.push_back(std::move(text));
      } else {
        m.mismatched.push_back(std::move(text));
      }
    };
    if (c.util_rows > 0) {
      item(c.cube_cores == s.cube_cores, 3,
           fmt::format("cube_utilization shows {} cube cores, {} has {}", c.cube_cores, s.name,
                       s.cube_cores));
    }
    if (c.cube_rows > 0) {
      const int top = largest_within(c.cube_block_dims, s.cube_cores);
      item(top == s.cube_cores, 2,
           fmt::format("largest cube-side block dim at or below {}: {}", s.cube_cores, top));
    }
    if (s.split_cores) {
      if (c.vector_rows > 0) {
        const int top = largest_within(c.vector_block_dims, s.vector_cores);
        item(top == s.vector_cores, 2,
             fmt::format("largest vector-side block dim at or below {}: {}", s.vector_cores, top));
      } else if (c.cube_rows > 0) {
        item(false, 2, fmt::format("no AI_VECTOR_CORE rows, but {} runs vector kernels on "
                                   "separate vector cores",
                                   s.name));
      }
    } else if (c.cube_rows + c.vector_rows > 0) {
      item(c.vector_rows == 0, 2,
           c.vector_rows == 0
               ? fmt::format("no AI_VECTOR_CORE rows, as on a coupled chip")
               : fmt::format("{} AI_VECTOR_CORE rows, but {} is a coupled chip", c.vector_rows,
                             s.name));
    }
    double clock_distance = 0;
    if (c.clock_known) {
      clock_distance = std::abs(c.freq_mhz - s.freq_mhz) / s.freq_mhz;
      item(clock_distance <= 0.10, 1,
           fmt::format("measured clock {} MHz, {} nominal {} MHz", c.freq_mhz, s.name, s.freq_mhz));
    }
    m.exact = m.score == possible;
    std::vector<int> dims = c.cube_block_dims;
    const double fit = dims.empty() ? 0
                                    : static_cast<double>(fitting(dims, s.cube_cores)) /
                                          static_cast<double>(dims.size());
    const auto at = c.cube_dim_rows.find(s.cube_cores);
    const std::size_t at_count = at == c.cube_dim_rows.end() ? 0 : at->second;
    all.push_back(std::move(m));
    tie.emplace_back(at_count, fit, -clock_distance);
  }
  if (all.empty()) throw InputError(pos, "--hw auto: no chip files found (hw_specs/)");
  std::size_t best = 0;
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].score > all[best].score ||
        (all[i].score == all[best].score && tie[i] > tie[best])) {
      best = i;
    }
  }
  return all[best];
}

}  // namespace npusim::app
