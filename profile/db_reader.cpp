#include "profile/db_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/csv_reader.h"

namespace npusim::profile {

namespace fs = std::filesystem;

bool is_profiler_db_name(const std::string& n) {
  const bool db = n.size() > 3 && n.compare(n.size() - 3, 3, ".db") == 0;
  return db && (n.rfind("ascend_pytorch_profiler", 0) == 0 || n.rfind("msprof_", 0) == 0);
}

namespace {

// RAII over the SQLite C API: a read-only connection and its prepared statements.
class Db {
 public:
  explicit Db(const fs::path& file) : file_(file.string()) {
    if (!fs::is_regular_file(file)) throw InputError({file_, 0, 0}, "cannot open the file");
    // Read-only and no mutex: npusim never writes a profile, and one thread reads one file.
    const int rc = sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError({file_, 0, 0}, fmt::format("cannot open the database: {}", msg));
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  [[nodiscard]] sqlite3* get() const noexcept { return db_; }
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError({file_, 0, 0}, what);
  }

 private:
  std::string file_;
  sqlite3* db_ = nullptr;
};

class Stmt {
 public:
  Stmt(const Db& db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db.get());
      sqlite3_finalize(st_);
      st_ = nullptr;
      // SQLITE_NOTADB surfaces here, at the first statement, not at open.
      db.fail(fmt::format("cannot read the database ({}): is it an SQLite profiler export?", msg));
    }
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  /// Advances to the next row; false when done. A corrupt page is an InputError.
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail(fmt::format("reading the database failed: {}", sqlite3_errmsg(db_.get())));
  }
  [[nodiscard]] int type(int i) const { return sqlite3_column_type(st_, i); }
  [[nodiscard]] std::int64_t int64(int i) const { return sqlite3_column_int64(st_, i); }
  [[nodiscard]] double real(int i) const { return sqlite3_column_double(st_, i); }
  [[nodiscard]] std::string text(int i) const {
    const auto* p = sqlite3_column_text(st_, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(st_, i)))
             : std::string();
  }

 private:
  const Db& db_;
  sqlite3_stmt* st_ = nullptr;
};

// Table and column names as the database has them (case kept), looked up case-insensitively.
class Schema {
 public:
  explicit Schema(const Db& db) : db_(db) {
    Stmt s(db, "SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name");
    while (s.step()) tables_.push_back(s.text(0));
  }
  [[nodiscard]] bool has(std::string_view table) const { return find(tables_, table).has_value(); }
  /// The table's columns; an InputError naming the table and the tables found when it is absent.
  [[nodiscard]] std::vector<std::string> columns(std::string_view table) const {
    const auto t = find(tables_, table);
    if (!t) {
      db_.fail(fmt::format("no table '{}' (tables: {}): not a profiler database of a known "
                           "schema, or an export cut short",
                           table, join(tables_)));
    }
    std::vector<std::string> cols;
    Stmt s(db_, fmt::format("PRAGMA table_info(\"{}\")", *t));
    while (s.step()) cols.push_back(s.text(1));
    return cols;
  }
  /// The first of `names` the table has, as spelled there; nullopt when none.
  [[nodiscard]] static std::optional<std::string> pick(const std::vector<std::string>& cols,
                                                       std::initializer_list<std::string_view> names) {
    for (const auto n : names) {
      if (const auto c = find(cols, n)) return c;
    }
    return std::nullopt;
  }
  /// Like pick, but an InputError naming the table, the column and the columns found.
  [[nodiscard]] std::string require(std::string_view table, const std::vector<std::string>& cols,
                                    std::initializer_list<std::string_view> names) const {
    if (auto c = pick(cols, names)) return *c;
    db_.fail(fmt::format("table '{}' has no column '{}' (columns: {})", table, *names.begin(),
                         join(cols)));
  }
  [[nodiscard]] static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

 private:
  static std::optional<std::string> find(const std::vector<std::string>& v, std::string_view n) {
    for (const auto& s : v) {
      if (s.size() == n.size() &&
          std::equal(s.begin(), s.end(), n.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          })) {
        return s;
      }
    }
    return std::nullopt;
  }

  const Db& db_;
  std::vector<std::string> tables_;
};

std::string quoted(const std::optional<std::string>& col, const char* alias) {
  return col ? fmt::format("{}.\"{}\"", alias, *col) : std::string("NULL");
}

// The PMU values npusim uses, by their TASK_PMU_INFO names (kernel_details' column names without
// the unit). Times are in ns in the database and µs in the CSV.
enum Pmu : std::uint8_t {
  kAicTime, kAicCycles, kAicMacTime, kAicMacRatio, kAicMte2Time, kAicMte2Ratio,
  kAivTime, kAivCycles, kAivVecTime, kAivVecRatio, kAivMte2Time, kAivMte2Ratio, kAivMte3Time,
  kMte2Time, kMte2Ratio, kCubeUtil, kPmuCount
};
struct PmuName {
  std::string_view name;
  Pmu slot;
  bool ns;  // a time in ns, converted to µs
};
constexpr std::array<PmuName, 21> kPmuNames{{
    {"aic_total_time", kAicTime, true},      {"aicore_time", kAicTime, true},
    {"aic_total_cycles", kAicCycles, false}, {"total_cycles", kAicCycles, false},
    {"aic_mac_time", kAicMacTime, true},     {"aic_cube_time", kAicMacTime, true},
    {"aic_mac_ratio", kAicMacRatio, false},  {"aic_cube_ratio", kAicMacRatio, false},
    {"aic_mte2_time", kAicMte2Time, true},   {"aic_mte2_ratio", kAicMte2Ratio, false},
    {"aiv_total_time", kAivTime, true},      {"aiv_time", kAivTime, true},
    {"aiv_total_cycles", kAivCycles, false}, {"aiv_vec_time", kAivVecTime, true},
    {"aiv_vec_ratio", kAivVecRatio, false},  {"aiv_mte2_time", kAivMte2Time, true},
    {"aiv_mte2_ratio", kAivMte2Ratio, false}, {"aiv_mte3_time", kAivMte3Time, true},
    {"mte2_time", kMte2Time, true},          {"mte2_ratio", kMte2Ratio, false},
    {"cube_utilization", kCubeUtil, false},
}};
using PmuValues = std::array<double, kPmuCount>;

struct StringIds {
  std::unordered_map<std::int64_t, std::string> by_id;
};

// A defect of one database row: which table, which row, which column.
InputError row_error(const Db& db, std::string_view table, std::string_view key, std::int64_t id,
                     std::string_view column, const std::string& what) {
  return InputError({db.file(), 0, 0},
                    fmt::format("{} {} {}: column '{}': {}", table, key, id, column, what));
}

class DbKernelReader {
 public:
  DbKernelReader(const fs::path& file, const ReadOptions& options)
      : db_(file), schema_(db_), options_(options) {}

  KernelFileInfo run(const std::function<void(const KernelRow&)>& on_row) {
    info_.file = db_.file();
    info_.source_kind = "db";
    info_.has_start_time = true;
    read_meta();
    load_strings();
    load_steps();
    load_pmu();
    load_communication();
    read_compute(on_row);
    check_mostly_read(info_, {db_.file(), 0, 0});
    describe();
    return std::move(info_);
  }

 private:
  void read_meta() {
    info_.schema_version = "unknown (no META_DATA table)";
    if (schema_.has("META_DATA")) {
      const auto cols = schema_.columns("META_DATA");
      const auto n = schema_.require("META_DATA", cols, {"name"});
      const auto v = schema_.require("META_DATA", cols, {"value"});
      std::map<std::string, std::string> meta;
      Stmt s(db_, fmt::format("SELECT \"{}\", \"{}\" FROM META_DATA", n, v));
      while (s.step()) meta[s.text(0)] = s.text(1);
      if (meta.count("SCHEMA_VERSION")) {
        info_.schema_version = meta["SCHEMA_VERSION"];
      } else if (meta.count("SCHEMA_VERSION_MAJOR")) {
        info_.schema_version = fmt::format("{}.{}.{}", meta["SCHEMA_VERSION_MAJOR"],
                                           meta["SCHEMA_VERSION_MINOR"],
                                           meta["SCHEMA_VERSION_MICRO"]);
      } else {
        info_.schema_version = "unknown (META_DATA has no SCHEMA_VERSION)";
      }
    }
    if (schema_.has("NPU_INFO")) {
      const auto cols = schema_.columns("NPU_INFO");
      if (const auto n = Schema::pick(cols, {"name"})) {
        Stmt s(db_, fmt::format("SELECT \"{}\" FROM NPU_INFO ORDER BY rowid LIMIT 1", *n));
        if (s.step()) info_.chip = s.text(0);
      }
    }
    if (schema_.has("AICORE_FREQ")) {
      const auto cols = schema_.columns("AICORE_FREQ");
      if (const auto f = Schema::pick(cols, {"freq"})) {
        Stmt s(db_, fmt::format("SELECT MAX(\"{}\") FROM AICORE_FREQ", *f));
        if (s.step() && s.type(0) != SQLITE_NULL && s.real(0) > 0) {
          info_.aicore_freq_mhz = s.real(0);
        }
      }
    }
  }

  void load_strings() {
    const auto cols = schema_.columns("STRING_IDS");
    const auto id = schema_.require("STRING_IDS", cols, {"id"});
    const auto value = schema_.require("STRING_IDS", cols, {"value"});
    Stmt s(db_, fmt::format("SELECT \"{}\", \"{}\" FROM STRING_IDS", id, value));
    while (s.step()) strings_.by_id.emplace(s.int64(0), s.text(1));
  }

  // A text column that holds a STRING_IDS id (or, in some exports, the text itself). NULL and
  // the profilers' N/A markers read as empty; an id missing from STRING_IDS is a row defect.
  std::string str(const Stmt& s, int i, std::string_view table, std::string_view key,
                  std::int64_t id, std::string_view column) const {
    switch (s.type(i)) {
      case SQLITE_NULL: return {};
      case SQLITE_INTEGER: {
        const auto it = strings_.by_id.find(s.int64(i));
        if (it == strings_.by_id.end()) {
          throw row_error(db_, table, key, id, column,
                          fmt::format("string id {} is not in STRING_IDS", s.int64(i)));
        }
        const std::string_view v = clean_field(it->second);
        return is_missing(v) ? std::string() : std::string(v);
      }
      default: {
        const std::string t = s.text(i);
        const std::string_view v = clean_field(t);
        return is_missing(v) ? std::string() : std::string(v);
      }
    }
  }

  static std::optional<std::int64_t> integer(const Stmt& s, int i) {
    if (s.type(i) == SQLITE_INTEGER) return s.int64(i);
    if (s.type(i) == SQLITE_FLOAT) {
      const double d = s.real(i);
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e18) {
        return static_cast<std::int64_t>(d);
      }
    }
    return std::nullopt;
  }
  std::int64_t required_int(const Stmt& s, int i, std::string_view table, std::string_view key,
                            std::int64_t id, std::string_view column) const {
    if (auto v = integer(s, i)) return *v;
    throw row_error(db_, table, key, id, column,
                    fmt::format("expected an integer, got {}",
                                s.type(i) == SQLITE_NULL ? "NULL" : "'" + s.text(i) + "'"));
  }

  void load_steps() {
    if (!schema_.has("STEP_TIME")) return;
    const auto cols = schema_.columns("STEP_TIME");
    const auto id = Schema::pick(cols, {"id"});
    const auto b = Schema::pick(cols, {"startNs"});
    const auto e = Schema::pick(cols, {"endNs"});
    if (!id || !b || !e) return;
    Stmt s(db_, fmt::format("SELECT \"{}\", \"{}\", \"{}\" FROM STEP_TIME ORDER BY \"{}\"", *id,
                            *b, *e, *b));
    while (s.step()) {
      const auto sid = integer(s, 0), sb = integer(s, 1), se = integer(s, 2);
      if (sid && sb && se) steps_.push_back({*sid, *sb, *se});
    }
    info_.has_step_id = !steps_.empty();
  }
  // torch_npu's kernel_details writes the step a task starts in; outside every step: -1.
  [[nodiscard]] std::int64_t step_of(std::int64_t start_ns) const {
    for (const auto& st : steps_) {
      if (start_ns >= st.begin && start_ns <= st.end) return st.id;
    }
    return -1;
  }

  void load_pmu() {
    if (!schema_.has("TASK_PMU_INFO")) return;
    const auto cols = schema_.columns("TASK_PMU_INFO");
    const auto g = schema_.require("TASK_PMU_INFO", cols, {"globalTaskId"});
    const auto n = schema_.require("TASK_PMU_INFO", cols, {"name"});
    const auto v = schema_.require("TASK_PMU_INFO", cols, {"value"});
    // Resolve each PMU name id once.
    std::unordered_map<std::int64_t, const PmuName*> slot_of_id;
    for (const auto& [id, text] : strings_.by_id) {
      for (const auto& p : kPmuNames) {
        if (text == p.name) slot_of_id[id] = &p;
      }
    }
    Stmt s(db_, fmt::format("SELECT \"{}\", \"{}\", \"{}\" FROM TASK_PMU_INFO", g, n, v));
    bool any = false;
    while (s.step()) {
      const auto task = integer(s, 0);
      if (!task || s.type(1) != SQLITE_INTEGER || s.type(2) == SQLITE_NULL) continue;
      const auto it = slot_of_id.find(s.int64(1));
      if (it == slot_of_id.end()) continue;  // a PMU event npusim does not use
      const double value = s.real(2);
      if (!std::isfinite(value)) continue;
      auto& vals = pmu_.try_emplace(*task, PmuValues{}).first->second;
      vals[it->second->slot] = it->second->ns ? value / 1000.0 : value;
      seen_[it->second->slot] = true;
      any = true;
    }
    info_.has_cycles = seen_[kAicCycles];
    info_.has_mte2 = seen_[kAicMte2Ratio] || seen_[kAivMte2Ratio] || seen_[kMte2Ratio];
    info_.has_pmu = any;
    info_.has_cube_utilization = seen_[kCubeUtil];
  }

  void load_communication() {
    if (!schema_.has("COMMUNICATION_OP")) return;
    const auto cols = schema_.columns("COMMUNICATION_OP");
    const auto name = schema_.require("COMMUNICATION_OP", cols, {"opName"});
    const auto b = schema_.require("COMMUNICATION_OP", cols, {"startNs"});
    const auto e = schema_.require("COMMUNICATION_OP", cols, {"endNs"});
    const auto id = Schema::pick(cols, {"opId"});
    const auto type = Schema::pick(cols, {"opType"});
    const auto wait = Schema::pick(cols, {"waitNs"});
    Stmt s(db_, fmt::format("SELECT {}, {}, {}, {}, {}, {} FROM COMMUNICATION_OP c",
                            id ? quoted(id, "c") : "c.rowid", quoted(name, "c"), quoted(b, "c"),
                            quoted(e, "c"), quoted(type, "c"), quoted(wait, "c")));
    while (s.step()) {
      const std::int64_t op = integer(s, 0).value_or(-1);
      try {
        KernelRow r;
        r.line = clamp_line(op);
        r.name = str(s, 1, "COMMUNICATION_OP", "opId", op, name);
        r.type = str(s, 4, "COMMUNICATION_OP", "opId", op, type.value_or("opType"));
        r.task_type = "COMMUNICATION";
        r.kind = TaskKind::kCommunication;
        fill_times(r, s, 2, 3, 5, "COMMUNICATION_OP", "opId", op, b, e);
        comm_.push_back(std::move(r));
      } catch (const InputError& err) {
        skip_row(info_, err, options_);
      }
    }
    std::stable_sort(comm_.begin(), comm_.end(),
                     [](const KernelRow& x, const KernelRow& y) { return x.start_ns < y.start_ns; });
  }

  void fill_times(KernelRow& r, const Stmt& s, int b, int e, int wait, std::string_view table,
                  std::string_view key, std::int64_t id, std::string_view b_col,
                  std::string_view e_col) const {
    const std::int64_t start = required_int(s, b, table, key, id, b_col);
    const std::int64_t end = required_int(s, e, table, key, id, e_col);
    if (end < start) {
      throw row_error(db_, table, key, id, e_col,
                      fmt::format("the task ends before it starts ({} < {})", end, start));
    }
    // end - start would overflow for a negative start far from a positive end; a task's times
    // are nanoseconds since the epoch, and no task lasts a day (kMaxRowDurationUs).
    if (start < 0 || static_cast<double>(end) - static_cast<double>(start) >
                         kMaxRowDurationUs * 1000.0) {
      throw row_error(db_, table, key, id, start < 0 ? b_col : e_col,
                      start < 0 ? fmt::format("a negative timestamp ({} ns)", start)
                                : fmt::format("the task lasts more than a day ({} to {} ns)",
                                              start, end));
    }
    r.start_ns = start;
    r.duration_us = static_cast<double>(end - start) / 1000.0;
    const auto w = integer(s, wait);
    r.wait_us = w && *w > 0 ? static_cast<double>(*w) / 1000.0 : 0;
    r.step_id = step_of(start);
  }

  static std::uint32_t clamp_line(std::int64_t id) {
    if (id < 0) return 0;
    return static_cast<std::uint32_t>(
        std::min<std::int64_t>(id, std::numeric_limits<std::uint32_t>::max()));
  }

  void read_compute(const std::function<void(const KernelRow&)>& on_row) {
    const auto tc = schema_.columns("TASK");
    const auto cc = schema_.columns("COMPUTE_TASK_INFO");
    const auto t_id = schema_.require("TASK", tc, {"globalTaskId"});
    const auto t_b = schema_.require("TASK", tc, {"startNs"});
    const auto t_e = schema_.require("TASK", tc, {"endNs"});
    const auto c_id = schema_.require("COMPUTE_TASK_INFO", cc, {"globalTaskId"});
    const auto c_name = schema_.require("COMPUTE_TASK_INFO", cc, {"name"});
    const auto c_type = schema_.require("COMPUTE_TASK_INFO", cc, {"taskType"});
    const auto c_wait = Schema::pick(cc, {"waitNs"});
    const std::optional<std::string> t_dev = Schema::pick(tc, {"deviceId"});
    const std::optional<std::string> t_stream = Schema::pick(tc, {"streamId"});
    const std::optional<std::string> t_task = Schema::pick(tc, {"taskId"});
    struct Opt {
      std::optional<std::string> col;
      const char* what;
    };
    const std::array<Opt, 9> opt{{
        {Schema::pick(cc, {"opType"}), "opType"},
        {Schema::pick(cc, {"blockDim", "block_dim"}), "blockDim"},
        {Schema::pick(cc, {"mixBlockDim", "mix_block_dim"}), "mixBlockDim"},
        {Schema::pick(cc, {"inputShapes"}), "inputShapes"},
        {Schema::pick(cc, {"inputDataTypes"}), "inputDataTypes"},
        {Schema::pick(cc, {"inputFormats"}), "inputFormats"},
        {Schema::pick(cc, {"outputShapes"}), "outputShapes"},
        {Schema::pick(cc, {"outputDataTypes"}), "outputDataTypes"},
        {Schema::pick(cc, {"outputFormats"}), "outputFormats"},
    }};
    info_.has_stream_id = t_stream.has_value();
    info_.has_shapes = opt[3].col && opt[4].col;
    // The advisor and the notes speak of the CSV's column names.
    if (!c_wait) info_.missing_optional.emplace_back("Task Wait Time(us)");
    if (!opt[0].col) info_.missing_optional.emplace_back("OP Type");
    if (!opt[1].col) info_.missing_optional.emplace_back("Block Dim");
    if (!t_stream) info_.missing_optional.emplace_back("Stream ID");
    if (!info_.has_shapes) info_.missing_optional.emplace_back("Input Shapes");
    if (!info_.has_cycles) info_.missing_optional.emplace_back("aic_total_cycles");
    if (!info_.has_cube_utilization) info_.missing_optional.emplace_back("cube_utilization(%)");
    if (!info_.has_mte2) info_.missing_optional.emplace_back("aic_mte2_ratio/aiv_mte2_ratio");

    std::string sql = fmt::format("SELECT {}, {}, {}, {}, {}, {}, {}, {}, {}", quoted(c_id, "c"),
                                  quoted(t_b, "t"), quoted(t_e, "t"), quoted(t_dev, "t"),
                                  quoted(t_stream, "t"), quoted(t_task, "t"), quoted(c_name, "c"),
                                  quoted(c_type, "c"), quoted(c_wait, "c"));
    for (const auto& o : opt) sql += ", " + quoted(o.col, "c");
    sql += fmt::format(" FROM \"COMPUTE_TASK_INFO\" c JOIN \"TASK\" t ON t.\"{}\" = c.\"{}\" "
                       "ORDER BY t.\"{}\", c.\"{}\"",
                       t_id, c_id, t_b, c_id);
    Stmt s(db_, sql);
    KernelRow row;
    std::size_t next_comm = 0;
    auto emit_comm_before = [&](std::int64_t start_ns) {
      while (next_comm < comm_.size() && comm_[next_comm].start_ns <= start_ns) {
        ++info_.rows;
        on_row(comm_[next_comm++]);
      }
    };
    constexpr const char* kT = "COMPUTE_TASK_INFO";
    constexpr const char* kKey = "globalTaskId";
    while (s.step()) {
      const std::int64_t id = integer(s, 0).value_or(-1);
      try {
        row = KernelRow{};
        row.line = clamp_line(id);
        fill_times(row, s, 1, 2, 8, "TASK", kKey, id, t_b, t_e);
        row.device_id = integer(s, 3).value_or(-1);
        row.stream_id = integer(s, 4).value_or(-1);
        row.task_id = integer(s, 5).value_or(-1);
        row.name = str(s, 6, kT, kKey, id, c_name);
        row.task_type = str(s, 7, kT, kKey, id, c_type);
        row.type = str(s, 9, kT, kKey, id, "opType");
        row.block_dim = static_cast<int>(std::clamp<std::int64_t>(integer(s, 10).value_or(0), 0,
                                                                  1 << 20));
        row.mix_block_dim = static_cast<int>(
            std::clamp<std::int64_t>(integer(s, 11).value_or(0), 0, 1 << 20));
        row.input_shapes = str(s, 12, kT, kKey, id, "inputShapes");
        row.input_dtypes = str(s, 13, kT, kKey, id, "inputDataTypes");
        row.input_formats = str(s, 14, kT, kKey, id, "inputFormats");
        row.output_shapes = str(s, 15, kT, kKey, id, "outputShapes");
        row.output_dtypes = str(s, 16, kT, kKey, id, "outputDataTypes");
        row.output_formats = str(s, 17, kT, kKey, id, "outputFormats");
        row.kind = classify_task(row.task_type, row.name);
        if (row.task_type.empty()) row.task_type = "N/A";
        apply_pmu(row, id);
      } catch (const InputError& err) {
        skip_row(info_, err, options_);
        continue;
      }
      emit_comm_before(row.start_ns);
      ++info_.rows;
      on_row(row);
    }
    emit_comm_before(std::numeric_limits<std::int64_t>::max());
  }

  void apply_pmu(KernelRow& r, std::int64_t id) const {
    const auto it = pmu_.find(id);
    if (it == pmu_.end()) return;
    const PmuValues& v = it->second;
    r.aic_time_us = v[kAicTime];
    r.aic_total_cycles = v[kAicCycles];
    r.aic_mac_time_us = v[kAicMacTime];
    r.aic_mac_ratio = v[kAicMacRatio];
    r.aic_mte2_time_us = v[kAicMte2Time];
    r.aic_mte2_ratio = v[kAicMte2Ratio];
    r.aiv_time_us = v[kAivTime];
    r.aiv_total_cycles = v[kAivCycles];
    r.aiv_vec_time_us = v[kAivVecTime];
    r.aiv_vec_ratio = v[kAivVecRatio];
    r.aiv_mte2_time_us = v[kAivMte2Time];
    r.aiv_mte2_ratio = v[kAivMte2Ratio];
    r.aiv_mte3_time_us = v[kAivMte3Time];
    r.mte2_time_us = v[kMte2Time];
    r.mte2_ratio = v[kMte2Ratio];
    r.cube_utilization_pct = v[kCubeUtil];
  }

  void describe() {
    const std::string n = fs::path(db_.file()).filename().string();
    std::string l = n.rfind("ascend_pytorch_profiler", 0) == 0 ? "torch_npu profiler database"
                                                               : "msprof database";
    l += fmt::format(" (schema {})", info_.schema_version);
    if (!info_.chip.empty()) l += ", NPU_INFO " + info_.chip;
    if (info_.aicore_freq_mhz) l += fmt::format(", AICORE_FREQ {} MHz", *info_.aicore_freq_mhz);
    l += info_.has_pmu ? ", TASK_PMU_INFO PMU" : ", no PMU";
    if (info_.broken_rows > 0) {
      l += fmt::format(", {} of {} rows skipped as malformed", info_.broken_rows,
                       info_.broken_rows + info_.rows);
    }
    info_.layout = l;
  }

  struct Step {
    std::int64_t id, begin, end;
  };

  Db db_;
  Schema schema_;
  ReadOptions options_;
  KernelFileInfo info_;
  StringIds strings_;
  std::vector<Step> steps_;
  std::unordered_map<std::int64_t, PmuValues> pmu_;
  std::array<bool, kPmuCount> seen_{};
  std::vector<KernelRow> comm_;
};

}  // namespace

KernelFileInfo read_db_kernels(const fs::path& file,
                               const std::function<void(const KernelRow&)>& on_row,
                               const ReadOptions& options) {
  DbKernelReader r(file, options);
  return r.run(on_row);
}

}  // namespace npusim::profile
