#include "profile/readers.h"

#include "profile/json_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "profile/columns.h"
#include "profile/csv_reader.h"
#include "profile/db_reader.h"
#include "profile/trace_reader.h"
#include "profile/mindspore_reader.h"

namespace npusim::profile {

namespace fs = std::filesystem;

const char* task_kind_name(TaskKind k) noexcept {
  switch (k) {
    case TaskKind::kCube: return "cube";
    case TaskKind::kVector: return "vector";
    case TaskKind::kMix: return "mix";
    case TaskKind::kAicpu: return "aicpu";
    case TaskKind::kCommunication: return "communication";
    case TaskKind::kOther: return "other";
    case TaskKind::kUnknown: return "unknown";
  }
  return "unknown";
}

TaskKind classify_task(std::string_view task_type, std::string_view op_name) noexcept {
  // Communication ops are named hcom_* by HCCL in every CANN version we have seen, and their
  // task type changed from HCCL to COMMUNICATION; the name decides first.
  if (op_name.substr(0, 5) == "hcom_") return TaskKind::kCommunication;
  if (task_type == "AI_CORE") return TaskKind::kCube;
  if (task_type == "AI_VECTOR_CORE") return TaskKind::kVector;
  if (task_type == "MIX_AIC" || task_type == "MIX_AIV") return TaskKind::kMix;
  if (task_type == "AI_CPU") return TaskKind::kAicpu;
  if (task_type == "HCCL" || task_type == "COMMUNICATION" || task_type == "HCCL_AI_CPU") {
    return TaskKind::kCommunication;
  }
  if (is_missing(task_type)) return TaskKind::kUnknown;
  return TaskKind::kOther;
}

bool is_compute(TaskKind k) noexcept {
  return k == TaskKind::kCube || k == TaskKind::kVector || k == TaskKind::kMix ||
         k == TaskKind::kAicpu || k == TaskKind::kUnknown;
}

bool is_missing(std::string_view s) noexcept {
  if (!s.empty() && s.front() >= '0' && s.front() <= '9') return false;  // the common case
  return s.empty() || s == "N/A" || s == "NA" || s == "-" || s == "nan" || s == "NaN";
}

std::optional<std::int64_t> parse_time_us_to_ns(std::string_view s) noexcept {
  if (s.empty()) return std::nullopt;
  const std::size_t dot = s.find('.');
  const std::string_view ip = s.substr(0, dot);
  std::int64_t whole = 0;
  if (ip.empty() || ip.front() == '-' || ip.front() == '+') return std::nullopt;
  const auto [p, ec] = std::from_chars(ip.data(), ip.data() + ip.size(), whole);
  if (ec != std::errc() || p != ip.data() + ip.size()) return std::nullopt;
  std::int64_t frac_ns = 0;
  if (dot != std::string_view::npos) {
    const std::string_view fp = s.substr(dot + 1);
    int digits = 0;
    for (char c : fp) {
      if (c < '0' || c > '9') return std::nullopt;
    }
    for (char c : fp) {
      if (digits == 3) {
        if (c >= '5') ++frac_ns;  // round half up on the first dropped digit
        break;
      }
      frac_ns = frac_ns * 10 + (c - '0');
      ++digits;
    }
    if (digits < 3) {
      for (int i = digits; i < 3; ++i) frac_ns *= 10;
    }
  }
  constexpr std::int64_t kMaxWholeUs = INT64_MAX / 1000 - 1;
  if (whole > kMaxWholeUs) return std::nullopt;
  return whole * 1000 + frac_ns;
}

std::int64_t KernelRow::end_ns() const noexcept {
  // Saturate instead of overflowing on an absurd duration (the reader rejects only negatives).
  // In doubles: a negative start (a damaged database row) would overflow max - start_ns.
  const double room = static_cast<double>(std::numeric_limits<std::int64_t>::max()) -
                      static_cast<double>(start_ns);
  const double d_ns = duration_us * 1000.0;
  if (!(d_ns < room)) return std::numeric_limits<std::int64_t>::max();
  return start_ns + static_cast<std::int64_t>(std::llround(d_ns));
}

namespace {

// Exact fast path for the short decimals that fill profiler tables ("0.0", "96.160"): with at
// most 15 significant digits the mantissa and 10^k are exact doubles, so one division rounds
// correctly. Anything else (exponents, long mantissas) goes through std::from_chars.
bool parse_double(std::string_view s, double& out) noexcept {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const char* p = s.data();
  const char* const end = p + s.size();
  bool neg = false;
  if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
  std::uint64_t mant = 0;
  int digits = 0, frac = 0;
  bool dot = false, any = false;
  for (; p < end; ++p) {
    const char c = *p;
    if (c >= '0' && c <= '9') {
      any = true;
      if (mant == 0 && c == '0' && !dot) continue;  // leading zeros are not significant
      if (++digits > 15) break;
      mant = mant * 10 + static_cast<std::uint64_t>(c - '0');
      if (dot) ++frac;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (p == end && any && digits <= 15) {
    // Zeros after the dot before the first significant digit still shift the scale.
    if (dot) {
      const std::size_t dpos = s.find('.');
      frac = static_cast<int>(s.size() - dpos - 1);
    }
    if (frac <= 15) {
      const double v = static_cast<double>(mant) / kPow10[frac];
      out = neg ? -v : v;
      return true;
    }
  }
  const char* b = s.data();
  if (b < end && *b == '+') ++b;
  const auto [q, ec] = std::from_chars(b, end, out);
  return ec == std::errc() && q == end;
}

// Reads typed values out of the current record of a CsvReader, with errors that name the file,
// line, column number and the column's header as written.
class RowParser {
 public:
  RowParser(const CsvReader& r, const ColumnMap& m) : r_(r), m_(m) {}

  [[nodiscard]] std::string_view text(Col c) const noexcept {
    const auto i = m_.index(c);
    return i ? r_.field(*i) : std::string_view{};
  }
  /// Text with the profilers' missing markers mapped to "".
  [[nodiscard]] std::string_view text_or_empty(Col c) const noexcept {
    const std::string_view s = text(c);
    return is_missing(s) ? std::string_view{} : s;
  }
  /// A number; `fallback` when the column is absent or the value missing (unless required).
  [[nodiscard]] double number(Col c, double fallback = 0, bool required = false) const {
    const auto i = m_.index(c);
    if (!i) return fallback;
    const std::string_view s = r_.field(*i);
    if (is_missing(s) && !required) return fallback;
    double v = 0;
    if (!parse_double(s, v) || !std::isfinite(v)) fail(*i, s);
    return v;
  }
  [[nodiscard]] std::int64_t integer(Col c, std::int64_t fallback) const {
    const auto i = m_.index(c);
    if (!i) return fallback;
    const std::string_view s = r_.field(*i);
    if (is_missing(s)) return fallback;
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) return v;
    // Some exporters write integers with decimals ("40.0").
    const double d = number(c, static_cast<double>(fallback));
    if (d != std::floor(d) || std::fabs(d) > 9e15) {
      throw InputError(pos(*i), fmt::format("column '{}': expected an integer, got '{}'",
                                            m_.header_at(*i), s));
    }
    return static_cast<std::int64_t>(d);
  }
  // A block dim: an int in [0, 2^20] (no chip has a million cores; larger is a damaged field,
  // not a number to narrow silently).
  [[nodiscard]] int block_dim(Col c) const {
    const std::int64_t v = integer(c, 0);
    if (v < 0 || v > (std::int64_t{1} << 20)) {
      const auto i = m_.index(c);
      throw InputError(pos(*i), fmt::format("column '{}': expected a block count in [0, 1048576], "
                                            "got {}",
                                            m_.header_at(*i), v));
    }
    return static_cast<int>(v);
  }
  [[nodiscard]] std::int64_t time_ns(Col c) const {
    const auto i = m_.index(c);
    if (!i) return 0;
    const std::string_view s = r_.field(*i);
    const auto v = parse_time_us_to_ns(s);
    if (!v) {
      throw InputError(pos(*i), fmt::format("column '{}': expected a timestamp in microseconds, "
                                            "got '{}'",
                                            m_.header_at(*i), s));
    }
    return *v;
  }
  /// The error for a record narrower than the header, or nullopt when it is wide enough.
  [[nodiscard]] std::optional<InputError> short_row() const {
    if (r_.size() >= m_.width()) return std::nullopt;
    return InputError(r_.pos(), fmt::format("the row has {} fields but the header has {}: the "
                                            "file is truncated or the row is broken",
                                            r_.size(), m_.width()));
  }
  /// Checks the record is as wide as the header (a short row is a truncated or broken file).
  void check_width() const {
    if (auto e = short_row()) throw *e;
    for (std::size_t i = m_.width(); i < r_.size(); ++i) {
      if (!r_.field(i).empty()) {
        throw InputError(r_.pos(), fmt::format("the row has {} fields but the header has {}: an "
                                               "unquoted comma in a field?",
                                               r_.size(), m_.width()));
      }
    }
  }

 private:
  [[nodiscard]] SourcePos pos(std::size_t i) const {
    return SourcePos{r_.file(), r_.line(), static_cast<std::uint32_t>(i + 1)};
  }
  [[noreturn]] void fail(std::size_t i, std::string_view s) const {
    throw InputError(pos(i), fmt::format("column '{}': expected a number, got '{}'",
                                         m_.header_at(i), s));
  }

  const CsvReader& r_;
  const ColumnMap& m_;
};

// A header that is one field holding another delimiter is a file in the wrong format.
void check_delimiter(const CsvReader& r) {
  if (r.header().size() != 1) return;
  const std::string& h = r.header().front();
  for (const char d : {';', '\t', '|'}) {
    const auto n = std::count(h.begin(), h.end(), d);
    if (n > 0) {
      const std::string shown = d == '\t' ? "TAB" : std::string(1, d);
      throw InputError({r.file(), r.header_line(), 0},
                       fmt::format("wrong delimiter: expected comma-separated columns, but the "
                                   "header has no comma and {} '{}' characters",
                                   n, shown));
    }
  }
}

std::string describe_layout(const ColumnMap& m) {
  std::vector<std::string> traits;
  const bool torch = m.header_is(Col::kOpName, "Name");
  traits.emplace_back(torch ? "torch_npu kernel_details" : "msprof op_summary");
  if (!m.has(Col::kStartTime)) {
    traits.emplace_back("no start time (msprof op OpBasicInfo: one kernel, no timeline)");
  } else if (m.header_is(Col::kBlockDim, "Block Num")) {
    traits.emplace_back("Block Num (CANN 9.x / MindStudio 26)");
  } else if (m.header_is(Col::kStartTime, "Task Start Time")) {
    traits.emplace_back("Task Start Time without unit (CANN <= 6.x)");
  } else if (m.has(Col::kOpState)) {
    traits.emplace_back(m.has(Col::kDeviceId) ? "OP State + Device_id (CANN 8.x)"
                                              : "OP State (CANN 8.0)");
  } else if (m.has(Col::kMixBlockDim)) {
    traits.emplace_back("Mix Block Dim (CANN 7.x)");
  }
  if (m.header_is(Col::kAicTotalCycles, "aic_total_cycles")) {
    traits.emplace_back("aic_/aiv_ PMU columns");
  } else if (m.has(Col::kAicTotalCycles)) {
    traits.emplace_back("unprefixed PMU columns");
  } else if (!m.has(Col::kInputShapes) && m.has(Col::kStartTime)) {
    traits.emplace_back("Level0 (no shapes, no PMU)");
  }
  std::string out;
  for (std::size_t i = 0; i < traits.size(); ++i) out += (i ? ", " : "") + traits[i];
  return out;
}

void assign(std::string& dst, std::string_view src) { dst.assign(src.data(), src.size()); }

}  // namespace

void skip_row(KernelFileInfo& info, const InputError& defect, const ReadOptions& options) {
  if (options.strict) throw defect;
  ++info.broken_rows;
  if (info.broken_row_messages.size() < kReportedDefects) {
    info.broken_row_messages.push_back(std::string(defect.what()) + " (row skipped)");
  }
}

void check_mostly_read(const KernelFileInfo& info, const SourcePos& pos) {
  // More than half the rows malformed: whatever was read is not a fair sample of the file.
  if (info.broken_rows == 0 || info.broken_rows <= info.rows) return;
  throw InputError(pos, fmt::format("{} of {} rows are malformed: not read (first: {})",
                                    info.broken_rows, info.broken_rows + info.rows,
                                    info.broken_row_messages.empty()
                                        ? std::string("-")
                                        : info.broken_row_messages.front()));
}

namespace {

KernelFileInfo read_kernel_csv(CsvReader& r, const std::function<void(const KernelRow&)>& on_row,
                               const ReadOptions& options) {
  check_delimiter(r);
  // MindSpore's per-op table holds no times itself: its reader joins the time file beside it.
  if (is_mindspore_op_table(r.header())) return read_mindspore_table(fs::path(r.file()), on_row);
  const ColumnMap m(r.header(), r.file(), r.header_line());
  const std::string what = "op_summary/kernel_details";
  m.require(Col::kOpName, what);
  m.require(Col::kDuration, what);

  KernelFileInfo info;
  info.file = r.file();
  info.layout = describe_layout(m);
  info.has_step_id = m.has(Col::kStepId);
  info.has_start_time = m.has(Col::kStartTime);
  info.has_stream_id = m.has(Col::kStreamId);
  info.has_shapes = m.has(Col::kInputShapes) && m.has(Col::kInputDtypes);
  info.has_cycles = m.has(Col::kAicTotalCycles);
  info.has_mte2 = m.has(Col::kAicMte2Ratio) || m.has(Col::kAivMte2Ratio) || m.has(Col::kMte2Ratio);
  info.has_pmu = info.has_cycles || info.has_mte2 || m.has(Col::kAivTotalCycles);
  info.has_cube_utilization = m.has(Col::kCubeUtilization);
  for (Col c : {Col::kStartTime, Col::kOpType, Col::kTaskType, Col::kWaitTime, Col::kBlockDim,
                Col::kStreamId, Col::kInputShapes, Col::kInputDtypes, Col::kAicTotalCycles,
                Col::kCubeUtilization}) {
    if (!m.has(c)) info.missing_optional.emplace_back(column_name(c));
  }
  if (!info.has_mte2) info.missing_optional.emplace_back("aic_mte2_ratio/aiv_mte2_ratio");

  const RowParser p(r, m);
  KernelRow row;
  // Every cell is parsed into `row` before on_row sees it: a row that throws half-way is skipped
  // whole, never passed on half-filled.
  auto parse = [&] {
    p.check_width();
    row.line = r.line();
    row.step_id = p.integer(Col::kStepId, -1);
    row.device_id = p.integer(Col::kDeviceId, -1);
    row.stream_id = p.integer(Col::kStreamId, -1);
    row.task_id = p.integer(Col::kTaskId, -1);
    assign(row.name, p.text(Col::kOpName));
    assign(row.type, p.text_or_empty(Col::kOpType));
    assign(row.op_state, p.text_or_empty(Col::kOpState));
    assign(row.task_type, p.text(Col::kTaskType));
    row.kind = classify_task(row.task_type, row.name);
    row.start_ns = p.time_ns(Col::kStartTime);
    row.duration_us = p.number(Col::kDuration, 0, true);
    if (row.duration_us < 0 || row.duration_us > kMaxRowDurationUs) {
      throw InputError(
          {r.file(), r.line(), static_cast<std::uint32_t>(*m.index(Col::kDuration) + 1)},
          row.duration_us < 0
              ? fmt::format("column '{}': a duration cannot be negative, got {}",
                            m.header_name(Col::kDuration), row.duration_us)
              : fmt::format("column '{}': a duration above one day ({:g} us) is not a kernel's, "
                            "got {:g}",
                            m.header_name(Col::kDuration), kMaxRowDurationUs, row.duration_us));
    }
    row.wait_us = p.number(Col::kWaitTime);
    row.block_dim = p.block_dim(Col::kBlockDim);
    row.mix_block_dim = p.block_dim(Col::kMixBlockDim);
    assign(row.input_shapes, p.text_or_empty(Col::kInputShapes));
    assign(row.input_dtypes, p.text_or_empty(Col::kInputDtypes));
    assign(row.input_formats, p.text_or_empty(Col::kInputFormats));
    assign(row.output_shapes, p.text_or_empty(Col::kOutputShapes));
    assign(row.output_dtypes, p.text_or_empty(Col::kOutputDtypes));
    assign(row.output_formats, p.text_or_empty(Col::kOutputFormats));
    row.aic_time_us = p.number(Col::kAicTime);
    row.aic_total_cycles = p.number(Col::kAicTotalCycles);
    row.aic_mac_time_us = p.number(Col::kAicMacTime);
    row.aic_mac_ratio = p.number(Col::kAicMacRatio);
    row.aic_mte2_time_us = p.number(Col::kAicMte2Time);
    row.aic_mte2_ratio = p.number(Col::kAicMte2Ratio);
    row.aiv_time_us = p.number(Col::kAivTime);
    row.aiv_total_cycles = p.number(Col::kAivTotalCycles);
    row.aiv_vec_time_us = p.number(Col::kAivVecTime);
    row.aiv_vec_ratio = p.number(Col::kAivVecRatio);
    row.aiv_mte2_time_us = p.number(Col::kAivMte2Time);
    row.aiv_mte2_ratio = p.number(Col::kAivMte2Ratio);
    row.aiv_mte3_time_us = p.number(Col::kAivMte3Time);
    row.aic_scalar_ratio = p.number(Col::kAicScalarRatio);
    row.aic_mte1_ratio = p.number(Col::kAicMte1Ratio);
    row.aic_fixpipe_ratio = p.number(Col::kAicFixpipeRatio);
    row.aiv_scalar_ratio = p.number(Col::kAivScalarRatio);
    row.aiv_mte3_ratio = p.number(Col::kAivMte3Ratio);
    row.mte2_time_us = p.number(Col::kMte2Time);
    row.mte2_ratio = p.number(Col::kMte2Ratio);
    row.cube_utilization_pct = p.number(Col::kCubeUtilization);
  };

  std::optional<InputError> pending;  // a short row: truncation if it is the last one
  for (;;) {
    bool more = false;
    try {
      more = r.next();
    } catch (const InputError& e) {
      // A quoted field never closed: the file was cut inside the last row.
      if (options.strict) throw;
      if (pending) skip_row(info, *pending, options);
      pending.reset();
      info.truncated = std::string(e.what());
      skip_row(info, e, options);
      break;
    }
    if (!more) break;
    if (pending) {
      skip_row(info, *pending, options);
      pending.reset();
    }
    if ((pending = p.short_row())) {
      if (options.strict) {
        // A short row in the middle is damage; at the end it is truncation. Either fails.
        throw *pending;
      }
      continue;
    }
    try {
      parse();
    } catch (const InputError& e) {
      skip_row(info, e, options);
      continue;
    }
    ++info.rows;
    on_row(row);
  }
  if (pending) {
    const InputError cut(pending->pos(), pending->detail() + " (the last row: the file is cut "
                                                             "short)");
    info.truncated = std::string(cut.what());
    skip_row(info, cut, options);
  }
  check_mostly_read(info, {r.file(), r.header_line(), 0});
  if (info.broken_rows > 0) {
    info.layout += fmt::format(", {} of {} rows skipped as malformed{}", info.broken_rows,
                               info.broken_rows + info.rows,
                               info.truncated ? " (truncated file)" : "");
  }
  return info;
}

}  // namespace

KernelFileInfo read_kernel_table(const fs::path& file,
                                 const std::function<void(const KernelRow&)>& on_row,
                                 const ReadOptions& options) {
  const std::string ext = file.extension().string();
  if (ext == ".db") return read_db_kernels(file, on_row, options);
  if (ext == ".json") return read_trace_kernels(file, on_row, options);
  CsvReader r(file);
  return read_kernel_csv(r, on_row, options);
}

KernelFileInfo read_kernel_table_text(const std::string& name, std::string_view text,
                                      const std::function<void(const KernelRow&)>& on_row,
                                      const ReadOptions& options) {
  CsvReader r(name, text);
  return read_kernel_csv(r, on_row, options);
}

namespace {

// Opens a small summary file and checks its required columns.
struct SmallFile {
  CsvReader r;
  ColumnMap m;
  SmallFile(const fs::path& file, std::initializer_list<Col> required, std::string_view what)
      : r(file), m((check_delimiter(r), r.header()), r.file(), r.header_line()) {
    for (Col c : required) m.require(c, what);
  }
};

}  // namespace

std::vector<OpStatRow> read_op_statistic(const fs::path& file) {
  SmallFile f(file, {Col::kOpType, Col::kCount, Col::kTotalTime}, "op_statistic");
  const RowParser p(f.r, f.m);
  std::vector<OpStatRow> out;
  while (f.r.next()) {
    p.check_width();
    OpStatRow row;
    row.line = f.r.line();
    row.type = std::string(p.text(Col::kOpType));
    row.core_type = std::string(p.text_or_empty(Col::kCoreType));
    row.count = p.integer(Col::kCount, 0);
    row.total_us = p.number(Col::kTotalTime, 0, true);
    row.min_us = p.number(Col::kMinTime);
    row.avg_us = p.number(Col::kAvgTime);
    row.max_us = p.number(Col::kMaxTime);
    row.ratio_pct = p.number(Col::kRatio);
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<TaskTimeRow> read_task_time(const fs::path& file) {
  SmallFile f(file, {Col::kKernelType, Col::kTaskTime}, "task_time");
  const RowParser p(f.r, f.m);
  std::vector<TaskTimeRow> out;
  while (f.r.next()) {
    p.check_width();
    TaskTimeRow row;
    row.line = f.r.line();
    row.kernel_name = std::string(p.text_or_empty(Col::kKernelName));
    row.kernel_type = std::string(p.text(Col::kKernelType));
    row.stream_id = p.integer(Col::kStreamId, -1);
    row.task_id = p.integer(Col::kTaskId, -1);
    row.task_time_us = p.number(Col::kTaskTime, 0, true);
    row.start_ns = f.m.has(Col::kTaskStart) ? p.time_ns(Col::kTaskStart) : 0;
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<ApiStatRow> read_api_statistic(const fs::path& file) {
  SmallFile f(file, {Col::kApiName, Col::kApiTime}, "api_statistic");
  const RowParser p(f.r, f.m);
  std::vector<ApiStatRow> out;
  while (f.r.next()) {
    p.check_width();
    ApiStatRow row;
    row.line = f.r.line();
    row.level = std::string(p.text_or_empty(Col::kApiLevel));
    row.api = std::string(p.text(Col::kApiName));
    row.time_us = p.number(Col::kApiTime, 0, true);
    row.count = p.integer(Col::kCount, 0);
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<PcieRow> read_pcie(const fs::path& file) {
  SmallFile f(file, {Col::kMode, Col::kMax, Col::kAvg}, "pcie");
  const RowParser p(f.r, f.m);
  std::vector<PcieRow> out;
  while (f.r.next()) {
    p.check_width();
    PcieRow row;
    row.line = f.r.line();
    row.mode = std::string(p.text(Col::kMode));
    row.min = p.number(Col::kMin);
    row.max = p.number(Col::kMax, 0, true);
    row.avg = p.number(Col::kAvg, 0, true);
    out.push_back(std::move(row));
  }
  return out;
}

ProfilerInfo read_profiler_info(const fs::path& file) {
  const nlohmann::json j = read_json_file(file);
  ProfilerInfo info;
  if (!j.is_object()) return info;
  if (j.contains("cann_version") && j["cann_version"].is_string()) {
    info.cann_version = j["cann_version"].get<std::string>();
  }
  if (j.contains("torch_npu_version") && j["torch_npu_version"].is_string()) {
    info.torch_npu_version = j["torch_npu_version"].get<std::string>();
  }
  if (j.contains("rank_id")) {
    const auto& r = j["rank_id"];
    if (r.is_number_integer()) {
      // A rank beyond int is not a rank: left unknown rather than wrapped to another number.
      const bool fits = r.is_number_unsigned()
                            ? r.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                            : r.get<std::int64_t>() >= INT_MIN && r.get<std::int64_t>() <= INT_MAX;
      if (fits) info.rank_id = static_cast<int>(r.get<std::int64_t>());
    } else if (r.is_string()) {
      int v = 0;
      const std::string s = r.get<std::string>();
      const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec == std::errc() && p == s.data() + s.size()) info.rank_id = v;
    }
  }
  return info;
}

}  // namespace npusim::profile
