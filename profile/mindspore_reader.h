#pragma once
// Reader for MindSpore's legacy (CANN 5-era) profiler output as the Huawei-Performance-Model
// dataset keeps it (docs/profile_formats.md "MindSpore"): a per-op table `<workload>.csv`
// (task_id, stream_id, block_dim, full_op_name, op_name, op_type, subgraph, op_info) whose op_info
// is a JSON object with each input's and output's format, NUMBER_TYPE_* dtype and shape, joined
// on full_op_name with `aicore_intermediate_<device>_detail.csv` (full_op_name, execution_time in
// ms, averaged over the profiled steps) in the same folder. The rows come out as KernelRows, so
// every command that reads a kernel table reads these folders too.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/readers.h"

namespace npusim::profile {

/// True when a CSV header is a MindSpore per-op table (has full_op_name and op_info columns).
[[nodiscard]] bool is_mindspore_op_table(const std::vector<std::string>& header) noexcept;

/// True when `file` is a CSV whose header is a MindSpore per-op table (reads the header only;
/// false for anything unreadable).
[[nodiscard]] bool looks_like_mindspore_op_table(const std::filesystem::path& file) noexcept;

/// True for the name MindSpore gives its AI Core time file: aicore_intermediate_<N>_detail.csv.
[[nodiscard]] bool is_mindspore_times_name(std::string_view filename) noexcept;

/// The dtype a MindSpore profiler label stands for, in CANN spelling. The profiler of this era
/// prints the TypeId one below the real one (its name table lags MindSpore's enum by one entry):
/// NUMBER_TYPE_FLOAT16 is fp32, NUMBER_TYPE_FLOAT is fp16, NUMBER_TYPE_INT16 is int32,
/// NUMBER_TYPE_UINT is uint8, NUMBER_TYPE_BEGIN is bool. The evidence is in the files themselves
/// (docs/profile_formats.md): the AMP Cast of the fp32 input image reads FLOAT16 and writes FLOAT,
/// every cube operand (the 910's cube has no fp32) is FLOAT, comparisons write BEGIN, the
/// ReLU/dropout masks are UINT and the argmax of MaxPoolWithArgmax (uint16 on Ascend) is UINT8.
/// nullopt for a label it does not know.
[[nodiscard]] std::optional<std::string> mindspore_dtype(std::string_view label) noexcept;

/// The CANN spelling of a MindSpore format label: DefaultFormat -> ND, FracZ -> FRACTAL_Z; others
/// (NC1HWC0, FRACTAL_NZ, C1HWNCoC0, NCHW...) pass through.
[[nodiscard]] std::string mindspore_format(std::string_view label);

/// Streams the rows of a MindSpore per-op table, each joined with its execution time from the
/// aicore_intermediate_*_detail.csv beside it. Rows of ops without an AI Core time (host or AI
/// CPU ops) are left out and counted in KernelFileInfo::layout. Every row is an AI_CORE task
/// (the 910's cores are coupled: the op's family decides cube or vector); there are no start
/// times (has_start_time = false), so rows keep their task order with start 0.
/// Throws InputError (file:line[:col]) when the time file is missing or ambiguous, a required
/// column is absent, op_info is not the expected JSON, a dtype label is unknown, an execution
/// time is not a non-negative number, or the time file names an op twice.
KernelFileInfo read_mindspore_table(const std::filesystem::path& file,
                                    const std::function<void(const KernelRow&)>& on_row);

}  // namespace npusim::profile
