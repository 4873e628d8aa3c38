#include "profile/columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace npusim::profile {

namespace {

// The alias table. Sources: msprof op_summary_assembler.cpp and prof_header_mapping.json,
// torch_npu _csv_headers.py, and the real files under ../shared/profiles (see
// docs/profile_formats.md). Matching ignores case and spaces, so "Stream Id" = "Stream ID".
const std::array<std::vector<std::string_view>, kColCount>& alias_table() {
  static const std::array<std::vector<std::string_view>, kColCount> table = [] {
    std::array<std::vector<std::string_view>, kColCount> t;
    auto set = [&t](Col c, std::vector<std::string_view> names) {
      t[static_cast<std::size_t>(c)] = std::move(names);
    };
    set(Col::kStepId, {"Step Id", "Iteration ID"});
    set(Col::kDeviceId, {"Device_id", "Device Id"});
    set(Col::kModelId, {"Model ID"});
    set(Col::kTaskId, {"Task ID"});
    set(Col::kStreamId, {"Stream ID"});
    set(Col::kOpName, {"Op Name", "Name"});
    set(Col::kOpType, {"OP Type", "Type"});
    set(Col::kOpState, {"OP State"});
    set(Col::kTaskType, {"Task Type", "Accelerator Core"});
    set(Col::kStartTime, {"Task Start Time(us)", "Task Start Time", "Start Time(us)"});
    set(Col::kDuration, {"Task Duration(us)", "Duration(us)"});
    set(Col::kWaitTime, {"Task Wait Time(us)", "Wait Time(us)"});
    set(Col::kBlockDim, {"Block Dim", "Block Num"});
    set(Col::kMixBlockDim, {"Mix Block Dim", "Mix Block Num"});
    set(Col::kInputShapes, {"Input Shapes"});
    set(Col::kInputDtypes, {"Input Data Types"});
    set(Col::kInputFormats, {"Input Formats"});
    set(Col::kOutputShapes, {"Output Shapes"});
    set(Col::kOutputDtypes, {"Output Data Types"});
    set(Col::kOutputFormats, {"Output Formats"});
    set(Col::kAicTime, {"aicore_time(us)", "aic_time(us)"});
    set(Col::kAicTotalCycles, {"aic_total_cycles", "total_cycles"});
    set(Col::kAicMacTime, {"aic_mac_time(us)", "aic_cube_time(us)", "mac_time(us)"});
    set(Col::kAicMacRatio, {"aic_mac_ratio", "aic_cube_ratio", "mac_ratio"});
    set(Col::kAicMte2Time, {"aic_mte2_time(us)"});
    set(Col::kAicMte2Ratio, {"aic_mte2_ratio"});
    set(Col::kAicScalarRatio, {"aic_scalar_ratio", "scalar_ratio"});
    set(Col::kAicMte1Ratio, {"aic_mte1_ratio", "mte1_ratio"});
    set(Col::kAicFixpipeRatio, {"aic_fixpipe_ratio", "fixpipe_ratio"});
    set(Col::kAivTime, {"aiv_time(us)"});
    set(Col::kAivTotalCycles, {"aiv_total_cycles"});
    set(Col::kAivVecTime, {"aiv_vec_time(us)", "vec_time(us)"});
    set(Col::kAivVecRatio, {"aiv_vec_ratio", "vec_ratio"});
    set(Col::kAivMte2Time, {"aiv_mte2_time(us)"});
    set(Col::kAivMte2Ratio, {"aiv_mte2_ratio"});
    set(Col::kAivMte3Time, {"aiv_mte3_time(us)"});
    set(Col::kAivScalarRatio, {"aiv_scalar_ratio"});
    set(Col::kAivMte3Ratio, {"aiv_mte3_ratio", "mte3_ratio"});
    set(Col::kMte2Time, {"mte2_time(us)"});
    set(Col::kMte2Ratio, {"mte2_ratio"});
    set(Col::kCubeUtilization, {"cube_utilization(%)"});
    set(Col::kCoreType, {"Core Type"});
    set(Col::kCount, {"Count"});
    set(Col::kTotalTime, {"Total Time(us)"});
    set(Col::kMinTime, {"Min Time(us)"});
    set(Col::kAvgTime, {"Avg Time(us)"});
    set(Col::kMaxTime, {"Max Time(us)"});
    set(Col::kRatio, {"Ratio(%)"});
    set(Col::kKernelName, {"kernel_name"});
    set(Col::kKernelType, {"kernel_type"});
    set(Col::kTaskTime, {"task_time(us)"});
    set(Col::kTaskStart, {"task_start(us)"});
    set(Col::kApiLevel, {"Level"});
    set(Col::kApiName, {"API Name"});
    set(Col::kApiTime, {"Time(us)"});
    set(Col::kMode, {"Mode"});
    set(Col::kMin, {"Min"});
    set(Col::kMax, {"Max"});
    set(Col::kAvg, {"Avg", "Average"});
    return t;
  }();
  return table;
}

// Lower case, spaces removed: "Stream Id" and "Stream ID" and "cube_utilization( %)" match.
std::string normalise(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == ' ' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

const std::unordered_map<std::string, Col>& alias_lookup() {
  static const std::unordered_map<std::string, Col> lookup = [] {
    std::unordered_map<std::string, Col> m;
    const auto& t = alias_table();
    for (std::size_t i = 0; i < kColCount; ++i) {
      for (std::string_view a : t[i]) m.emplace(normalise(a), static_cast<Col>(i));
    }
    return m;
  }();
  return lookup;
}

}  // namespace

const std::vector<std::string_view>& column_aliases(Col c) {
  return alias_table()[static_cast<std::size_t>(c)];
}

std::string_view column_name(Col c) { return column_aliases(c).front(); }

ColumnMap::ColumnMap(const std::vector<std::string>& header, const std::string& file,
                     std::uint32_t line)
    : header_(header), file_(file), line_(line) {
  index_.fill(-1);
  std::unordered_map<std::string, std::size_t> seen;
  const auto& lookup = alias_lookup();
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string key = normalise(header[i]);
    if (key.empty()) continue;
    if (auto [it, fresh] = seen.emplace(key, i); !fresh) {
      throw InputError({file_, line_, static_cast<std::uint32_t>(i + 1)},
                       fmt::format("duplicate column '{}' (columns {} and {})", header[i],
                                   it->second + 1, i + 1));
    }
    const auto hit = lookup.find(key);
    if (hit == lookup.end()) continue;
    int& slot = index_[static_cast<std::size_t>(hit->second)];
    if (slot >= 0) {
      throw InputError(
          {file_, line_, static_cast<std::uint32_t>(i + 1)},
          fmt::format("columns '{}' and '{}' are two names of the same column '{}': a file may "
                      "have only one",
                      header[static_cast<std::size_t>(slot)], header[i], column_name(hit->second)));
    }
    slot = static_cast<int>(i);
  }
}

std::string ColumnMap::header_name(Col c) const {
  const auto i = index(c);
  return i ? header_[*i] : std::string();
}

bool ColumnMap::header_is(Col c, std::string_view name) const {
  const auto i = index(c);
  return i && header_[*i] == name;
}

std::string ColumnMap::found_columns() const {
  std::string out;
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (i > 0) out += ", ";
    out += header_[i];
  }
  return out;
}

void ColumnMap::require(Col c, std::string_view what_file) const {
  if (has(c)) return;
  const auto& names = column_aliases(c);
  std::string also;
  for (std::size_t i = 1; i < names.size(); ++i) {
    also += i == 1 ? " (or " : ", ";
    also += fmt::format("'{}'", names[i]);
  }
  if (!also.empty()) also += ")";
  throw InputError({file_, line_, 0},
                   fmt::format("{}: missing required column '{}'{}; columns found: {}", what_file,
                               names.front(), also, found_columns()));
}

}  // namespace npusim::profile
