#pragma once
// The one alias table: every column npusim reads from a profiler CSV, under every name a CANN
// version or the torch_npu profiler has given it (docs/profile_formats.md lists the layouts).
// Columns are always found by header name, never by position.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace npusim::profile {

/// Canonical columns. Names in comments are the current msprof spelling.
enum class Col : std::uint8_t {
  // op_summary / kernel_details
  kStepId,          ///< Step Id (torch_npu with a schedule)
  kDeviceId,        ///< Device_id
  kModelId,         ///< Model ID
  kTaskId,          ///< Task ID
  kStreamId,        ///< Stream ID
  kOpName,          ///< Op Name | Name
  kOpType,          ///< OP Type | Type
  kOpState,         ///< OP State (dynamic | static)
  kTaskType,        ///< Task Type | Accelerator Core
  kStartTime,       ///< Task Start Time(us) | Task Start Time | Start Time(us)
  kDuration,        ///< Task Duration(us) | Duration(us)
  kWaitTime,        ///< Task Wait Time(us) | Wait Time(us)
  kBlockDim,        ///< Block Dim | Block Num
  kMixBlockDim,     ///< Mix Block Dim | Mix Block Num
  kInputShapes,     ///< Input Shapes
  kInputDtypes,     ///< Input Data Types
  kInputFormats,    ///< Input Formats
  kOutputShapes,    ///< Output Shapes
  kOutputDtypes,    ///< Output Data Types
  kOutputFormats,   ///< Output Formats
  kAicTime,         ///< aicore_time(us) | aic_time(us)
  kAicTotalCycles,  ///< aic_total_cycles | total_cycles (coupled cores)
  kAicMacTime,      ///< aic_mac_time(us) | aic_cube_time(us) | mac_time(us)
  kAicMacRatio,     ///< aic_mac_ratio | aic_cube_ratio | mac_ratio
  kAicMte2Time,     ///< aic_mte2_time(us)
  kAicMte2Ratio,    ///< aic_mte2_ratio
  kAicScalarRatio,  ///< aic_scalar_ratio | scalar_ratio (coupled cores)
  kAicMte1Ratio,    ///< aic_mte1_ratio | mte1_ratio (coupled cores)
  kAicFixpipeRatio, ///< aic_fixpipe_ratio
  kAivTime,         ///< aiv_time(us)
  kAivTotalCycles,  ///< aiv_total_cycles
  kAivVecTime,      ///< aiv_vec_time(us) | vec_time(us)
  kAivVecRatio,     ///< aiv_vec_ratio | vec_ratio
  kAivMte2Time,     ///< aiv_mte2_time(us)
  kAivMte2Ratio,    ///< aiv_mte2_ratio
  kAivMte3Time,     ///< aiv_mte3_time(us)
  kAivScalarRatio,  ///< aiv_scalar_ratio
  kAivMte3Ratio,    ///< aiv_mte3_ratio | mte3_ratio (coupled cores)
  kMte2Time,        ///< mte2_time(us) (coupled cores, no prefix)
  kMte2Ratio,       ///< mte2_ratio (coupled cores, no prefix)
  kCubeUtilization, ///< cube_utilization(%) (also the typo cube_utilization( %))
  // op_statistic
  kCoreType,        ///< Core Type
  kCount,           ///< Count
  kTotalTime,       ///< Total Time(us)
  kMinTime,         ///< Min Time(us)
  kAvgTime,         ///< Avg Time(us)
  kMaxTime,         ///< Max Time(us)
  kRatio,           ///< Ratio(%)
  // task_time
  kKernelName,      ///< kernel_name
  kKernelType,      ///< kernel_type
  kTaskTime,        ///< task_time(us)
  kTaskStart,       ///< task_start(us)
  // api_statistic
  kApiLevel,        ///< Level
  kApiName,         ///< API Name
  kApiTime,         ///< Time(us)
  // pcie
  kMode,            ///< Mode
  kMin,             ///< Min
  kMax,             ///< Max
  kAvg,             ///< Avg | Average
  kColCount
};
inline constexpr std::size_t kColCount = static_cast<std::size_t>(Col::kColCount);

/// Every accepted spelling of a column; the first is the one used in messages.
[[nodiscard]] const std::vector<std::string_view>& column_aliases(Col c);
/// The name used in messages ("Task Duration(us)").
[[nodiscard]] std::string_view column_name(Col c);

/// Which column of a file holds which canonical column, resolved once from its header.
class ColumnMap {
 public:
  /// Resolves `header` through the alias table. Throws InputError at `file`:`line` when two header
  /// fields resolve to the same column (a duplicate header).
  ColumnMap(const std::vector<std::string>& header, const std::string& file, std::uint32_t line);

  /// Index of the column in the record, or nullopt when the file lacks it.
  [[nodiscard]] std::optional<std::size_t> index(Col c) const noexcept {
    const int i = index_[static_cast<std::size_t>(c)];
    return i < 0 ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(i));
  }
  [[nodiscard]] bool has(Col c) const noexcept { return index_[static_cast<std::size_t>(c)] >= 0; }
  /// The header field that matched `c` (as written in the file), empty when absent.
  [[nodiscard]] std::string header_name(Col c) const;
  /// Whether column `c` is present and written exactly as `name` (no string built).
  [[nodiscard]] bool header_is(Col c, std::string_view name) const;
  /// The header field at index `i` as written.
  [[nodiscard]] const std::string& header_at(std::size_t i) const { return header_.at(i); }
  /// Throws InputError naming the missing column, its aliases and the columns found.
  void require(Col c, std::string_view what_file) const;
  /// Header fields as written, comma-separated, for messages.
  [[nodiscard]] std::string found_columns() const;
  /// Number of header fields.
  [[nodiscard]] std::size_t width() const noexcept { return header_.size(); }

 private:
  std::array<int, kColCount> index_{};
  std::vector<std::string> header_;
  std::string file_;
  std::uint32_t line_ = 0;
};

}  // namespace npusim::profile
