#include "profile/mindspore_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>
#include <unordered_map>

#include "model/error.h"
#include "profile/csv_reader.h"

namespace npusim::profile {

namespace fs = std::filesystem;

namespace {

std::optional<std::size_t> column(const std::vector<std::string>& header, std::string_view name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

std::string header_list(const std::vector<std::string>& header) {
  std::string out;
  for (const auto& h : header) out += (out.empty() ? "" : ", ") + h;
  return out;
}

std::size_t require(const CsvReader& r, std::string_view name, std::string_view what) {
  if (const auto i = column(r.header(), name)) return *i;
  throw InputError({r.file(), r.header_line(), 0},
                   fmt::format("{}: missing column '{}' (columns found: {})", what, name,
                               header_list(r.header())));
}

// The time file beside an op table: exactly one aicore_intermediate_<N>_detail.csv.
fs::path times_file_for(const fs::path& op_table) {
  std::vector<fs::path> found;
  std::error_code ec;
  const fs::path folder = op_table.has_parent_path() ? op_table.parent_path() : fs::path(".");
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_mindspore_times_name(it->path().filename().string())) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) {
    throw InputError({op_table.string(), 1, 0},
                     "a MindSpore op table needs its execution times: no "
                     "aicore_intermediate_<N>_detail.csv in the same folder");
  }
  if (found.size() > 1) {
    std::string names;
    for (const auto& f : found) names += (names.empty() ? "" : ", ") + f.filename().string();
    throw InputError({op_table.string(), 1, 0},
                     fmt::format("several MindSpore time files beside the op table ({}): cannot "
                                 "tell which device it belongs to; keep one per folder",
                                 names));
  }
  return found.front();
}

// full_op_name -> execution time in microseconds.
std::unordered_map<std::string, double> read_times(const fs::path& file) {
  CsvReader r(file);
  const std::string what = "MindSpore aicore_intermediate detail";
  // The legacy (CANN 5-era) spelling of the name column is full_op_time.
  auto name_col = column(r.header(), "full_op_name");
  if (!name_col) name_col = column(r.header(), "full_op_time");
  if (!name_col) require(r, "full_op_name", what);
  const std::size_t time_col = require(r, "execution_time", what);
  std::unordered_map<std::string, double> out;
  while (r.next()) {
    const std::string_view name = r.field(*name_col);
    const std::string_view text = r.field(time_col);
    double ms = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
    const SourcePos pos{r.file(), r.line(), static_cast<std::uint32_t>(time_col + 1)};
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(ms) || ms < 0 ||
        ms * 1000.0 > kMaxRowDurationUs) {
      throw InputError(pos, fmt::format("column 'execution_time': expected a non-negative "
                                        "number of milliseconds up to one day, got '{}'",
                                        text));
    }
    if (!out.emplace(std::string(name), ms * 1000.0).second) {
      throw InputError({r.file(), r.line(), static_cast<std::uint32_t>(*name_col + 1)},
                       fmt::format("op '{}' has a second execution time: the file should hold one "
                                   "averaged time per op",
                                   name));
    }
  }
  return out;
}

// Appends `piece` to a ';'-joined list.
void append(std::string& list, std::string_view piece, bool first) {
  if (!first) list += ';';
  list.append(piece.data(), piece.size());
}

// The tensors of op_info in index order: input_0, input_1, ..., input_10 (a JSON object keeps
// its keys sorted as text, which would put input_10 before input_2).
struct Tensor {
  int index;
  const nlohmann::json* desc;
};

std::vector<Tensor> tensors(const nlohmann::json& info, std::string_view prefix) {
  std::vector<Tensor> out;
  for (auto it = info.begin(); it != info.end(); ++it) {
    const std::string& key = it.key();
    if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
    int index = 0;
    const char* b = key.data() + prefix.size();
    const auto [p, ec] = std::from_chars(b, key.data() + key.size(), index);
    if (ec != std::errc() || p != key.data() + key.size()) continue;
    out.push_back({index, &*it});
  }
  std::sort(out.begin(), out.end(), [](const Tensor& a, const Tensor& b) { return a.index < b.index; });
  return out;
}

// Fills shapes/dtypes/formats of one side (inputs or outputs) of a row from op_info.
void fill_side(const nlohmann::json& info, std::string_view prefix, std::string& shapes,
               std::string& dtypes, std::string& formats, const SourcePos& pos) {
  shapes.clear();
  dtypes.clear();
  formats.clear();
  bool first = true;
  for (const Tensor& t : tensors(info, prefix)) {
    const nlohmann::json& d = *t.desc;
    auto text = [&](const char* key) -> std::string {
      const auto it = d.find(key);
      if (it == d.end() || !it->is_string()) {
        throw InputError(pos, fmt::format("op_info {}{}: no string '{}'", prefix, t.index, key));
      }
      return it->get<std::string>();
    };
    const std::string label = text("data_type");
    const auto dtype = mindspore_dtype(label);
    if (!dtype) {
      throw InputError(pos, fmt::format("op_info {}{}: unknown data_type '{}'", prefix, t.index,
                                        label));
    }
    append(shapes, text("shape"), first);
    append(dtypes, *dtype, first);
    append(formats, mindspore_format(text("format")), first);
    first = false;
  }
}

}  // namespace

bool is_mindspore_op_table(const std::vector<std::string>& header) noexcept {
  return column(header, "full_op_name").has_value() && column(header, "op_info").has_value();
}

bool looks_like_mindspore_op_table(const fs::path& file) noexcept {
  try {
    const CsvReader r(file);
    return is_mindspore_op_table(r.header());
  } catch (...) {
    return false;
  }
}

bool is_mindspore_times_name(std::string_view n) noexcept {
  constexpr std::string_view kHead = "aicore_intermediate_";
  constexpr std::string_view kTail = "_detail.csv";
  if (n.size() <= kHead.size() + kTail.size()) return false;
  if (n.substr(0, kHead.size()) != kHead || n.substr(n.size() - kTail.size()) != kTail) return false;
  const std::string_view mid = n.substr(kHead.size(), n.size() - kHead.size() - kTail.size());
  return std::all_of(mid.begin(), mid.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::string> mindspore_dtype(std::string_view label) noexcept {
  // Label as printed -> the type it stands for (one enum entry higher; see the header).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kShift{{
      {"NUMBER_TYPE_BEGIN", "BOOL"},
      {"NUMBER_TYPE_BOOL", "INT32"},  // kNumberTypeInt: MindSpore's default int is int32
      {"NUMBER_TYPE_INT", "INT8"},
      {"NUMBER_TYPE_INT8", "INT16"},
      {"NUMBER_TYPE_INT16", "INT32"},
      {"NUMBER_TYPE_INT32", "INT64"},
      {"NUMBER_TYPE_INT64", "UINT32"},  // kNumberTypeUInt: unsized, read as uint32
      {"NUMBER_TYPE_UINT", "UINT8"},
      {"NUMBER_TYPE_UINT8", "UINT16"},
      {"NUMBER_TYPE_UINT16", "UINT32"},
      {"NUMBER_TYPE_UINT32", "UINT64"},
      {"NUMBER_TYPE_UINT64", "FLOAT"},  // kNumberTypeFloat: unsized, MindSpore's float is fp32
      {"NUMBER_TYPE_FLOAT", "FLOAT16"},
      {"NUMBER_TYPE_FLOAT16", "FLOAT"},
      {"NUMBER_TYPE_FLOAT32", "DOUBLE"},
  }};
  for (const auto& [from, to] : kShift) {
    if (label == from) return std::string(to);
  }
  return std::nullopt;
}

std::string mindspore_format(std::string_view label) {
  if (label == "DefaultFormat" || label.empty()) return "ND";
  if (label == "FracZ") return "FRACTAL_Z";
  return std::string(label);
}

KernelFileInfo read_mindspore_table(const fs::path& file,
                                    const std::function<void(const KernelRow&)>& on_row) {
  const fs::path times_path = times_file_for(file);
  const auto times = read_times(times_path);

  CsvReader r(file);
  const std::string what = "MindSpore op table";
  const std::size_t name_col = require(r, "full_op_name", what);
  const std::size_t type_col = require(r, "op_type", what);
  const std::size_t info_col = require(r, "op_info", what);
  const auto task_col = column(r.header(), "task_id");
  const auto stream_col = column(r.header(), "stream_id");
  const auto block_col = column(r.header(), "block_dim");

  KernelFileInfo info;
  info.file = r.file();
  info.has_stream_id = stream_col.has_value();
  info.has_shapes = true;
  info.missing_optional = {"Task Start Time(us)", "Task Wait Time(us)", "aic_total_cycles",
                           "cube_utilization(%)", "aic_mte2_ratio/aiv_mte2_ratio"};
  auto integer = [&](std::optional<std::size_t> col, std::int64_t fallback) -> std::int64_t {
    if (!col) return fallback;
    const std::string_view s = r.field(*col);
    if (is_missing(s)) return fallback;
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) {
      throw InputError({r.file(), r.line(), static_cast<std::uint32_t>(*col + 1)},
                       fmt::format("column '{}': expected an integer, got '{}'", r.header()[*col],
                                   s));
    }
    return v;
  };

  KernelRow row;
  row.task_type = "AI_CORE";
  row.kind = TaskKind::kCube;
  std::uint64_t without_time = 0;
  while (r.next()) {
    if (r.size() < r.header().size()) {
      throw InputError(r.pos(), fmt::format("the row has {} fields but the header has {}: the "
                                            "file is truncated or the row is broken",
                                            r.size(), r.header().size()));
    }
    const std::string_view name = r.field(name_col);
    const auto t = times.find(std::string(name));
    if (t == times.end()) {
      ++without_time;
      continue;
    }
    const SourcePos info_pos{r.file(), r.line(), static_cast<std::uint32_t>(info_col + 1)};
    nlohmann::json op_info;
    try {
      op_info = nlohmann::json::parse(r.field(info_col));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(info_pos, fmt::format("op_info is not JSON: {}", e.what()));
    }
    if (!op_info.is_object()) throw InputError(info_pos, "op_info is not a JSON object");
    row.line = r.line();
    row.stream_id = integer(stream_col, -1);
    row.task_id = integer(task_col, -1);
    row.block_dim = static_cast<int>(integer(block_col, 0));
    row.name.assign(name.data(), name.size());
    const std::string_view type = r.field(type_col);
    row.type.assign(type.data(), type.size());
    row.duration_us = t->second;
    fill_side(op_info, "input_", row.input_shapes, row.input_dtypes, row.input_formats, info_pos);
    fill_side(op_info, "output_", row.output_shapes, row.output_dtypes, row.output_formats,
              info_pos);
    ++info.rows;
    on_row(row);
  }
  info.layout = fmt::format("MindSpore op_info table joined with {} (no start times, no PMU; {} "
                            "ops without an AI Core time left out)",
                            times_path.filename().string(), without_time);
  return info;
}

}  // namespace npusim::profile
