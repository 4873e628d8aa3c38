#pragma once
// Glue between profiles and the model for accuracy and calibration: find the profiles under the
// paths a user gives, turn their compute rows into model Samples, and infer the chip the profile
// was taken on from the cycle/time arithmetic of its rows (profile_formats.md §7).

#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/hw_spec.h"
#include "profile/readers.h"

namespace npusim::app {

/// What the rows say about the device.
struct InferredChip {
  int cube_cores = 0;     ///< from cube_utilization = aic_cycles / (f × N_aic × duration)
  int vector_cores = 0;   ///< the largest vector block dim seen (or 2 × cube on split chips)
  double freq_mhz = 0;    ///< median of total_cycles / (pipe time × block dim)
  std::size_t rows_used = 0;
  std::string evidence;   ///< one line: how each figure was found
};

/// Samples of every profile under `paths`, with what was used and skipped.
struct ProfileSamples {
  std::vector<Sample> samples;
  std::vector<std::string> notes;  ///< "used rank_0_ascend_pt: kernel_details.csv (2463 rows)"
  std::size_t skipped = 0;         ///< compute rows without usable shapes
  InferredChip chip;
};

/// Reads the kernel tables of every profile under each path (file, PROF_*, *_ascend_pt, or a
/// folder of several). Sample::group is the profile's name. Throws InputError when nothing
/// usable is found or no compute row has shapes.
/// `read` says how damaged files are treated (--strict).
[[nodiscard]] ProfileSamples load_samples(const std::vector<std::string>& paths,
                                          const profile::ReadOptions& read = {});

/// The chip to model the profile with. `hw` is a name/path or "auto": auto picks the chip file
/// whose cube/vector core counts match the inferred ones and sets its clock to the inferred one.
/// An explicit chip whose core counts contradict the profile is an InputError naming both.
[[nodiscard]] HwSpec hw_for_profiles(const std::string& hw, const std::vector<std::string>& overlays,
                                     const InferredChip& chip, std::string* note);

}  // namespace npusim::app
