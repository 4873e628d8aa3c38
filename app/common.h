#pragma once
// Shared plumbing of the CLI subcommands: where data lives, loading a chip by name,
// writing output files atomically, printing warnings.

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "model/correction.h"
#include "model/hw_spec.h"

namespace CLI {
class App;
}

namespace npusim::app {

/// Directories searched for hw_specs/ (and scenarios/): $NPUSIM_DATA_DIR, the install prefix's
/// share/npusim, then the source tree this binary was built from.
[[nodiscard]] std::vector<std::filesystem::path> data_dirs();
/// data_dirs() with "/hw_specs" appended, existing ones only.
[[nodiscard]] std::vector<std::filesystem::path> hw_spec_dirs();
/// Loads a chip by name or path, with overlays applied in order.
[[nodiscard]] HwSpec load_hw(const std::string& name_or_path,
                             const std::vector<std::string>& overlays = {});

/// Writes `content` to `path` through a temporary file in the same folder and a rename, so a
/// failure never leaves a partial file. "-" writes to stdout.
void write_output_file(const std::filesystem::path& path, const std::string& content);

/// A scenario given as a file path, or by the name of a bundled one ("default" finds
/// scenarios/default.toml in data_dirs()). Throws InputError when neither exists.
[[nodiscard]] std::filesystem::path resolve_scenario(const std::string& given);

/// Reads a learned correction written by `npusim calibrate --correction-out` (InputError when
/// missing or malformed).
[[nodiscard]] Correction load_correction(const std::string& path);

/// A check for a floating-point option (`->check(finite_range(0, 1), "FLOAT in [0, 1]")`):
/// refuses what does not parse, NaN, infinities and values outside [lo, hi] (CLI11's Range lets
/// NaN through: every comparison with it is false).
[[nodiscard]] std::function<std::string(const std::string&)> finite_range(double lo, double hi);

/// Prints `warning: what` to stderr.
void warn(const std::string& what);

/// Lets scenarios say `[graph] onnx = "model.onnx"`: installs the frontend's ONNX importer
/// (model/graph_source.h). Its warnings are printed once per model file and process.
void install_model_importer();

/// Subcommand registration; each lives in its own cmd_*.cpp.
void register_predict(CLI::App& app);
void register_analyze(CLI::App& app);
void register_graph(CLI::App& app);
void register_crossval(CLI::App& app);
void register_hw(CLI::App& app);
void register_validate(CLI::App& app);
void register_simulate(CLI::App& app);
void register_accuracy(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_sweep(CLI::App& app);
void register_whatif(CLI::App& app);

}  // namespace npusim::app
