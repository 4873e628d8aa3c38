#pragma once
// Readers for the summary files msprof and the torch_npu profiler write. Each reads by header
// name through the alias table (profile/columns.h). The kernel table (op_summary_*.csv,
// kernel_details.csv) is streamed row by row, so a file of millions of rows is read in bounded
// memory; the small summary files are returned whole.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/error.h"

namespace npusim::profile {

/// What a task is, from its Task Type / Accelerator Core and its name.
enum class TaskKind : std::uint8_t {
  kCube,           ///< AI_CORE (cube on split-core chips)
  kVector,         ///< AI_VECTOR_CORE
  kMix,            ///< MIX_AIC, MIX_AIV
  kAicpu,          ///< AI_CPU
  kCommunication,  ///< HCCL / COMMUNICATION or an hcom_* op: kept apart from compute
  kOther,          ///< DSA_SQE, SDMA, EVENT_RECORD, ...: device tasks that are not kernels
  kUnknown         ///< N/A (profiler Level0 does not record the core type)
};
/// "cube", "vector", "mix", "aicpu", "communication", "other", "unknown".
[[nodiscard]] const char* task_kind_name(TaskKind k) noexcept;
/// Classifies a task from its type string and op name (hcom_* is communication whatever its type).
[[nodiscard]] TaskKind classify_task(std::string_view task_type, std::string_view op_name) noexcept;
/// True for kinds that run a kernel on the AI cores or AI CPU (cube, vector, mix, aicpu, unknown).
[[nodiscard]] bool is_compute(TaskKind k) noexcept;

/// Parses a profiler timestamp in microseconds ("1764246877073569.640", trailing TAB already
/// removed) into integer nanoseconds without going through a double, so values near 1.7e15 µs
/// keep their last digit. Digits past the nanosecond are rounded half up. nullopt if malformed.
[[nodiscard]] std::optional<std::int64_t> parse_time_us_to_ns(std::string_view s) noexcept;
/// True for the profilers' spellings of a missing value: "N/A", "NA", "", "-", "nan".
[[nodiscard]] bool is_missing(std::string_view s) noexcept;

/// The longest duration a profile row may carry: one day (8.64e10 us). No kernel or task runs
/// that long; a larger value is a corrupt cell, and the readers skip its row with the cell's
/// position instead of passing on a time whose sums print as hundreds of digits and whose errors
/// come out as -inf %.
inline constexpr double kMaxRowDurationUs = 8.64e10;

/// One row of op_summary_*.csv / kernel_details.csv. Metrics are 0 when the column is absent or
/// the value is missing (N/A); KernelFileInfo says which columns the file has. Strings keep the
/// profile's spelling.
struct KernelRow {
  std::uint32_t line = 0;            ///< line in the file (for messages)
  std::int64_t step_id = -1;         ///< Step Id, -1 when the file has none
  std::int64_t device_id = -1;
  std::int64_t stream_id = -1;       ///< -1 when N/A (communication rows)
  std::int64_t task_id = -1;
  std::string name;
  std::string type;                  ///< op type; empty when N/A
  std::string op_state;              ///< dynamic | static | empty
  std::string task_type;             ///< as written (AI_CORE, MIX_AIC, COMMUNICATION, N/A...)
  TaskKind kind = TaskKind::kUnknown;
  std::int64_t start_ns = 0;         ///< exact, from the µs timestamp
  double duration_us = 0;
  double wait_us = 0;                ///< 0 when missing
  int block_dim = 0;
  int mix_block_dim = 0;
  std::string input_shapes, input_dtypes, input_formats;     ///< empty when N/A
  std::string output_shapes, output_dtypes, output_formats;  ///< empty when N/A
  double aic_time_us = 0, aic_total_cycles = 0, aic_mac_time_us = 0, aic_mac_ratio = 0;
  double aic_mte2_time_us = 0, aic_mte2_ratio = 0;
  double aiv_time_us = 0, aiv_total_cycles = 0, aiv_vec_time_us = 0, aiv_vec_ratio = 0;
  double aiv_mte2_time_us = 0, aiv_mte2_ratio = 0, aiv_mte3_time_us = 0;
  /// The other pipes' shares of the core's time (PipeUtilization): cube side scalar, MTE1
  /// (L1 -> L0) and FixPipe (L0C -> GM), vector side scalar and MTE3 (UB -> GM).
  double aic_scalar_ratio = 0, aic_mte1_ratio = 0, aic_fixpipe_ratio = 0;
  double aiv_scalar_ratio = 0, aiv_mte3_ratio = 0;
  double mte2_time_us = 0, mte2_ratio = 0;  ///< unprefixed (coupled-core chips)
  double cube_utilization_pct = 0;

  /// End of the task in ns (start + duration, rounded to the ns).
  [[nodiscard]] std::int64_t end_ns() const noexcept;
};

/// What the kernel-table reader found out about a file.
struct KernelFileInfo {
  std::string file;
  std::string layout;            ///< e.g. "torch_npu kernel_details (CANN 8.x, aic_/aiv_ PMU)"
  std::uint64_t rows = 0;
  bool has_step_id = false;
  bool has_start_time = false;   ///< false: msprof op's OpBasicInfo.csv, no timeline (starts 0)
  bool has_stream_id = false;
  bool has_shapes = false;       ///< Input Shapes/Data Types present
  bool has_pmu = false;          ///< any cycle or pipe-time column present
  bool has_cycles = false;       ///< aic_total_cycles present
  bool has_mte2 = false;         ///< an mte2 ratio column present
  bool has_cube_utilization = false;
  std::vector<std::string> missing_optional;  ///< canonical names of optional columns absent
  /// Malformed rows skipped (a bad cell, a row narrower or wider than the header, a database row
  /// with a NULL start or a dangling string id): counted here, the first kReportedDefects listed
  /// as "file:line:col: reason (row skipped)". Never part of `rows`, never passed to on_row.
  std::uint64_t broken_rows = 0;
  std::vector<std::string> broken_row_messages;
  /// The file ends inside a row (a short last row, or a quoted field never closed): that row is
  /// skipped and counted in broken_rows too; this says where ("file:line: ...").
  std::optional<std::string> truncated;
  /// Where the rows came from: "csv", "db" (SQLite export) or "trace" (timeline JSON).
  std::string source_kind = "csv";
  /// Database only: META_DATA's SCHEMA_VERSION ("1.0.0"), or "unknown (no META_DATA table)".
  std::string schema_version;
  /// Database only: NPU_INFO's chip name ("Ascend910B"); empty when absent.
  std::string chip;
  /// Database (AICORE_FREQ) or timeline ("AI Core Freq" counter): the highest AI Core clock seen.
  std::optional<double> aicore_freq_mhz;
};

/// How many defects a reader lists by position; the rest are only counted.
inline constexpr std::size_t kReportedDefects = 10;

/// How readers treat damaged input (docs/profile_formats.md, "Damaged input").
struct ReadOptions {
  /// false (default): a malformed row is skipped and counted (KernelFileInfo::broken_rows), a
  /// truncated last row is reported as truncation, and the file is an error only when more than
  /// half its rows are malformed or a required column/table is missing. true (--strict): the
  /// first defect is an InputError.
  bool strict = false;
};

/// Streams the rows of a per-op time source to `on_row` (the row object is reused between calls:
/// copy what you keep). The file's kind decides the reader: an op_summary / kernel_details (or
/// msprof op OpBasicInfo) CSV; a `.db` profiler database (profile/db_reader.h); a `.json`
/// timeline (profile/trace_reader.h). Throws InputError with file:line(:col) for a missing
/// required column (listing the columns found), a duplicate header, a wrong delimiter, an empty
/// file, a file whose rows are mostly malformed, and, with options.strict, at the first
/// malformed or truncated row.
KernelFileInfo read_kernel_table(const std::filesystem::path& file,
                                 const std::function<void(const KernelRow&)>& on_row,
                                 const ReadOptions& options = {});
/// The CSV reader of read_kernel_table on text held in memory (`name` is used in messages);
/// for tests and the fuzz harness.
KernelFileInfo read_kernel_table_text(const std::string& name, std::string_view text,
                                      const std::function<void(const KernelRow&)>& on_row,
                                      const ReadOptions& options = {});

/// Records a malformed row in `info` (counted; listed while fewer than kReportedDefects are), or
/// rethrows it under options.strict. Shared by the CSV, database and timeline readers.
void skip_row(KernelFileInfo& info, const InputError& defect, const ReadOptions& options);
/// Throws when more than half the rows of `info` were malformed (the file is not what it claims
/// to be, or is damaged beyond use); `pos` is where the file is named.
void check_mostly_read(const KernelFileInfo& info, const SourcePos& pos);

/// One row of op_statistic_*.csv / op_statistic.csv.
struct OpStatRow {
  std::uint32_t line = 0;
  std::string type;
  std::string core_type;
  std::int64_t count = 0;
  double total_us = 0, min_us = 0, avg_us = 0, max_us = 0, ratio_pct = 0;
};
[[nodiscard]] std::vector<OpStatRow> read_op_statistic(const std::filesystem::path& file);

/// One row of task_time_*.csv (every device task, kernels and runtime tasks alike).
struct TaskTimeRow {
  std::uint32_t line = 0;
  std::string kernel_name;  ///< empty when N/A (runtime tasks)
  std::string kernel_type;  ///< hardware task type
  std::int64_t stream_id = -1;
  std::int64_t task_id = -1;
  double task_time_us = 0;
  std::int64_t start_ns = 0;
};
[[nodiscard]] std::vector<TaskTimeRow> read_task_time(const std::filesystem::path& file);

/// One row of api_statistic_*.csv (host API time).
struct ApiStatRow {
  std::uint32_t line = 0;
  std::string level;  ///< acl, runtime, node, model, hccl, ...
  std::string api;
  double time_us = 0;
  std::int64_t count = 0;
};
[[nodiscard]] std::vector<ApiStatRow> read_api_statistic(const std::filesystem::path& file);

/// One row of pcie_*.csv: a rate (MB/s) or latency (us) mode with its min/max/avg.
struct PcieRow {
  std::uint32_t line = 0;
  std::string mode;  ///< e.g. "Tx_p_avg(MB/s)"
  double min = 0, max = 0, avg = 0;
};
[[nodiscard]] std::vector<PcieRow> read_pcie(const std::filesystem::path& file);

/// Facts from a timeline JSON (msprof_*.json or trace_view.json).
struct TraceInfo {
  std::string file;
  std::uint64_t events = 0;           ///< all events
  std::uint64_t device_tasks = 0;     ///< X events on the "Ascend Hardware" process
  std::optional<double> aicore_freq_mhz;  ///< the highest "AI Core Freq" counter value
  /// Every "AI Core Freq" counter sample in file order: (timestamp in us, MHz).
  std::vector<std::pair<double, double>> aicore_freq_samples;
};
/// Reads a Chrome-trace JSON array (or an object with "traceEvents"), streamed like
/// read_trace_kernels (profile/trace_reader.cpp). Throws InputError at the line of the first
/// malformed event, or where a cut file ends.
[[nodiscard]] TraceInfo read_trace_json(const std::filesystem::path& file);

/// Facts from torch_npu's profiler_info_<rank>.json.
struct ProfilerInfo {
  std::string cann_version;
  std::string torch_npu_version;
  std::optional<int> rank_id;
};
[[nodiscard]] ProfilerInfo read_profiler_info(const std::filesystem::path& file);

}  // namespace npusim::profile
