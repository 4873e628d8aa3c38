#pragma once
// The profiler's SQLite exports as a per-op time source: torch_npu's
// ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_<rank>.db (export_type=db) and msprof's
// PROF_*/msprof_<ts>.db. Both share one schema family (docs/profile_formats.md, "Profiler
// databases"): TASK (one row per device task, integer ns), COMPUTE_TASK_INFO (kernel facts keyed
// by globalTaskId, text as ids into STRING_IDS), TASK_PMU_INFO (name/value PMU rows),
// COMMUNICATION_OP, NPU_INFO, AICORE_FREQ, STEP_TIME and META_DATA (schema version). Columns are
// found by name (PRAGMA table_info), so the CANN releases' variants (blockDim / block_dim, with
// or without waitNs) read alike; the rows come out as the CSV readers' KernelRows.

#include <filesystem>
#include <functional>

#include "profile/readers.h"

namespace npusim::profile {

/// Reads the compute tasks (TASK joined with COMPUTE_TASK_INFO) and communication ops
/// (COMMUNICATION_OP) of a profiler database, in start order, into `on_row`. KernelRow::line is
/// the task's globalTaskId (the communication op's opId), the key to find it again in the
/// database. KernelFileInfo carries the schema version, the chip (NPU_INFO) and the AI Core clock
/// (AICORE_FREQ). Throws InputError naming the file and the missing table or column (listing
/// those found), for a file that is not an SQLite database, and per `options` for bad rows (a
/// NULL or non-integer time, an end before the start, a string id missing from STRING_IDS).
KernelFileInfo read_db_kernels(const std::filesystem::path& file,
                               const std::function<void(const KernelRow&)>& on_row,
                               const ReadOptions& options = {});

/// True for the file names of the profiler databases npusim reads (ascend_pytorch_profiler*.db,
/// msprof_*.db); torch_npu's analysis.db and other .db files are not kernel tables.
[[nodiscard]] bool is_profiler_db_name(const std::string& filename);

}  // namespace npusim::profile
