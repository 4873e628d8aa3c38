#pragma once
// `--hw auto`: which chip a profile was taken on, from what its rows show (profile_formats.md §7).
// The evidence: the clock from cycles over time (aic_/aiv_total_cycles / (pipe time x block dim)),
// the cube core count from cube_utilization, and the block dims of cube-side and vector-side
// rows. A block dim above a chip's core count runs in waves, so the block dims say only that the
// chip has a count equal to the largest block dim at or below it; a split chip (910B) runs
// vector kernels as AI_VECTOR_CORE tasks, a coupled one (910, 310P) never does. The chip is the
// one whose counts fit that evidence best; an inexact best match is a warning, not a failure.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "profile/readers.h"

namespace npusim::app {

/// What the rows say about the device.
struct InferredChip {
  int cube_cores = 0;       ///< from cube_utilization = aic_cycles / (f x N_aic x duration); 0: none
  double freq_mhz = 0;      ///< median of total_cycles / (pipe time x block dim), else the
                            ///< clock the profile states (database, timeline); 0: unknown
  std::size_t freq_rows = 0;
  bool clock_known = false; ///< freq_mhz comes from the profile (cycles or a stated clock)
  std::size_t util_rows = 0;
  std::vector<int> cube_block_dims;    ///< sorted distinct block dims of cube-side rows
  std::map<int, std::size_t> cube_dim_rows;  ///< cube-side rows per block dim
  std::vector<int> vector_block_dims;  ///< sorted distinct block dims of vector-side rows
  std::size_t cube_rows = 0;    ///< AI_CORE and MIX_AIC rows with a block dim
  std::size_t vector_rows = 0;  ///< AI_VECTOR_CORE and MIX_AIV rows (and MIX_AIC's mix block dim)
  std::string evidence;         ///< one line: how each figure was found (set by finish_inference)

  std::vector<double> freq_samples_;  ///< collected, reduced by finish_inference
  std::vector<double> util_samples_;
};

/// Adds one kernel row's evidence.
void observe_row(InferredChip& c, const profile::KernelRow& r);
/// Reduces the collected samples (medians, sorted block dims) and writes `evidence`. Without
/// cycle counts, `stated_freq_mhz` (> 0: the AI Core clock a database or timeline records) is
/// the clock.
void finish_inference(InferredChip& c, double stated_freq_mhz = 0);

/// How well one chip fits the evidence.
struct ChipMatch {
  std::size_t index = 0;   ///< into the chips given
  double score = 0;        ///< matched evidence items, weighted
  bool exact = false;      ///< every item with evidence matched
  std::vector<std::string> matched, mismatched;  ///< item texts
};

/// The chip among `chips` that fits `c` best: score (cube_utilization count 3, cube block dims 2,
/// vector side 2, clock within 10 % 1), then the cube-side rows launched exactly at its cube core
/// count (a tiler sizes its launches to the chip it runs on), then the share of block dims that
/// are at or below its counts or whole waves of them, then the clock's closeness, then list
/// order. Throws InputError
/// when the profile gives no evidence at all (no block dims, no cycles).
[[nodiscard]] ChipMatch best_chip(const InferredChip& c, const std::vector<HwSpec>& chips);

}  // namespace npusim::app
