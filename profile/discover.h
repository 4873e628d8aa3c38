#pragma once
// Finding profiler output on disk: a single file, a PROF_* folder (msprof), a *_ascend_pt folder
// (torch_npu), or a folder holding several of them (several cards or ranks).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profile/readers.h"

namespace npusim::profile {

/// The files of one device or rank.
struct ProfileSource {
  std::string name;              ///< e.g. "rank_0_ascend_pt" or "PROF_000001_.../device_0"
  std::filesystem::path folder;  ///< the folder the files were found in
  std::string producer;          ///< "msprof", "torch_npu", "mindspore" or "file"
  std::vector<std::filesystem::path> kernel_files;  ///< op_summary slices in order / kernel_details
  std::optional<std::filesystem::path> op_statistic;
  std::optional<std::filesystem::path> task_time;
  std::optional<std::filesystem::path> api_statistic;
  std::optional<std::filesystem::path> pcie;
  std::optional<std::filesystem::path> trace_json;     ///< msprof_*.json or trace_view.json
  std::optional<std::filesystem::path> profiler_info;  ///< profiler_info_<rank>.json
  std::optional<std::filesystem::path> database;  ///< ascend_pytorch_profiler_*.db / msprof_*.db
  /// Where the per-op rows come from: "csv" (op_summary / kernel_details), "db" (the database,
  /// when no CSV kernel table is there) or "trace" (the timeline JSON, when neither is).
  std::string kernel_source = "csv";
  /// How the readers treat damaged files (discover_profiles copies its argument here).
  ReadOptions read;
  /// torch_npu's communication.json (per-collective time and transfer sizes).
  std::optional<std::filesystem::path> communication_json;
  /// torch_npu's profiler_metadata.json (environment variables, parallel groups).
  std::optional<std::filesystem::path> profiler_metadata;

  /// Every file found, for "what was used" messages.
  [[nodiscard]] std::vector<std::filesystem::path> files() const;
};

/// What discover_profiles() found, with the folders it passed over and why.
struct Discovery {
  std::vector<ProfileSource> profiles;  ///< sorted by name
  std::vector<std::string> notes;       ///< e.g. "rank_1_ascend_pt: no kernel table, skipped"
};

/// Finds the profiles under `path` (a file or a folder, searched up to 16 levels deep).
/// A single CSV whose name is not a known one is accepted when its header is a kernel table.
/// Per-op rows come from the CSV kernel tables when there are any, else from the profiler
/// database, else from the timeline JSON. Throws InputError when the path does not exist or
/// nothing usable is found (listing what the reader looks for).
[[nodiscard]] Discovery discover_profiles(const std::filesystem::path& path,
                                          const ReadOptions& read = {});

}  // namespace npusim::profile
