#pragma once
// Glue between profiles and the model for accuracy and calibration: find the profiles under the
// paths a user gives, turn their compute rows into model Samples, and infer the chip the profile
// was taken on from the cycle/time arithmetic of its rows (profile_formats.md §7).

#include <string>
#include <vector>

#include "app/chip_inference.h"
#include "model/accuracy.h"
#include "model/hw_spec.h"
#include "profile/readers.h"

namespace npusim::app {

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
/// that fits the rows best (best_chip), with its clock set to the measured one when the rows
/// have cycle counts, and prints a warning when the best match is inexact. An explicit chip
/// whose cube core count contradicts cube_utilization is an InputError naming both.
[[nodiscard]] HwSpec hw_for_profiles(const std::string& hw, const std::vector<std::string>& overlays,
                                     const InferredChip& chip, std::string* note);

}  // namespace npusim::app
