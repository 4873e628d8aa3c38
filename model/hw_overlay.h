#pragma once
// Hw spec overlays on their own (model/hw_spec.h loads them on top of a chip file). An overlay
// has the sections of a chip file except [chip], every key optional, plus a free-form [meta]
// table of strings (calibration records its provenance there) and an optional [intervals] table
// of prediction intervals, one [intervals.NAME] per op family or "all", each with p10, p90 and
// rows (see ErrorInterval in model/hw_spec.h). Implemented in hw_spec.cpp.

#include <filesystem>
#include <string>
#include <vector>

namespace npusim {

/// The sections of a chip file, in file order: "chip", "cube", "vector", "memory", "overhead",
/// "host", "aicpu", "pcie".
[[nodiscard]] const std::vector<std::string>& hw_spec_sections();

/// The top-level tables an overlay may hold: hw_spec_sections() without "chip", plus
/// "intervals" and "meta".
[[nodiscard]] const std::vector<std::string>& hw_overlay_sections();

/// Checks an overlay without a chip: sections, keys, types and ranges (cross-field checks need a
/// chip and run when load_hw_spec applies the overlay). Returns the "section.key" values it sets,
/// in file order. Throws InputError with file:line:col for any defect.
[[nodiscard]] std::vector<std::string> check_hw_overlay(const std::filesystem::path& file);

}  // namespace npusim
