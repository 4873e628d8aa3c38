#pragma once
// Writes small profiler databases for the tests, in the torch_npu / msprof schema (TASK,
// COMPUTE_TASK_INFO, STRING_IDS, TASK_PMU_INFO, COMMUNICATION_OP, NPU_INFO, AICORE_FREQ,
// STEP_TIME, META_DATA), from KernelRows. Written with the SQLite C API directly, independent of
// the reader under test.

#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile/readers.h"

namespace npusim::test {

/// Schema variants seen across CANN releases, and defects to inject.
struct DbVariant {
  bool block_dim_snake = false;  ///< old msprof: block_dim instead of blockDim
  bool wait_column = true;       ///< COMPUTE_TASK_INFO.waitNs (absent in older exports)
  bool meta_data = true;         ///< META_DATA with SCHEMA_VERSION 1.0.0
  bool pmu = true;               ///< TASK_PMU_INFO rows for the PMU values
  std::string drop_table;        ///< a table left out ("COMPUTE_TASK_INFO", ...)
  std::string drop_task_column;  ///< a TASK column left out ("endNs", ...)
  std::vector<std::int64_t> step_ids;  ///< one STEP_TIME row per distinct step id of the rows
};

class DbWriter {
 public:
  explicit DbWriter(const std::filesystem::path& file) {
    std::filesystem::remove(file);
    if (sqlite3_open(file.string().c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open");
  }
  ~DbWriter() { sqlite3_close(db_); }
  DbWriter(const DbWriter&) = delete;
  DbWriter& operator=(const DbWriter&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(msg + " in " + sql);
    }
  }
  /// The STRING_IDS id of `s` (NULL for an empty string: the exports write N/A as a string, but
  /// a NULL must read as missing too).
  std::string id(const std::string& s) {
    if (s.empty()) return "NULL";
    auto [it, fresh] = ids_.try_emplace(s, static_cast<std::int64_t>(ids_.size()));
    return std::to_string(it->second);
  }
  static std::string q(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }

  /// Writes every table of the schema for `rows` (compute rows to TASK + COMPUTE_TASK_INFO,
  /// communication rows to COMMUNICATION_OP).
  void write(const std::vector<profile::KernelRow>& rows, const DbVariant& v) {
    exec("BEGIN");
    const bool drop = !v.drop_table.empty();
    std::string task_cols = "startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,"
                            "globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,"
                            "contextId INTEGER,streamId INTEGER,taskId INTEGER,modelId INTEGER";
    if (!v.drop_task_column.empty()) {
      const auto at = task_cols.find(v.drop_task_column + " INTEGER,");
      task_cols.erase(at, v.drop_task_column.size() + 9);
    }
    if (!(drop && v.drop_table == "TASK")) exec("CREATE TABLE TASK (" + task_cols + ")");
    exec(std::string("CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY "
                     "KEY,") +
         (v.block_dim_snake ? "block_dim" : "blockDim") +
         " INTEGER,mixBlockDim INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,"
         "inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes "
         "INTEGER,outputShapes INTEGER,attrInfo INTEGER" +
         (v.wait_column ? ", waitNs INTEGER" : "") + ")");
    exec("CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER,name INTEGER,value NUMERIC)");
    exec("CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,"
         "connectionId INTEGER,groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry "
         "INTEGER,dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER, waitNs INTEGER)");
    exec("CREATE TABLE NPU_INFO (id INTEGER,name TEXT)");
    exec("INSERT INTO NPU_INFO VALUES (0,'Ascend910B')");
    exec("CREATE TABLE AICORE_FREQ (deviceId INTEGER,timestampNs NUMERIC,freq INTEGER)");
    exec("INSERT INTO AICORE_FREQ VALUES (0,1,1650),(0,2,1800)");
    if (v.meta_data) {
      exec("CREATE TABLE META_DATA (name TEXT,value TEXT)");
      exec("INSERT INTO META_DATA VALUES ('SCHEMA_VERSION_MAJOR','1'),('SCHEMA_VERSION','1.0.0')");
    }
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> steps;
    std::int64_t gid = 0;
    for (const auto& r : rows) {
      const std::int64_t end =
          r.start_ns + static_cast<std::int64_t>(std::llround(r.duration_us * 1000.0));
      if (r.step_id >= 0) {
        auto [it, fresh] = steps.try_emplace(r.step_id, r.start_ns, end);
        it->second.first = std::min(it->second.first, r.start_ns);
        it->second.second = std::max(it->second.second, end);
      }
      const std::string wait = std::to_string(std::llround(r.wait_us * 1000.0));
      if (r.kind == profile::TaskKind::kCommunication) {
        exec("INSERT INTO COMMUNICATION_OP (opName,startNs,endNs,opId,opType,waitNs) VALUES (" +
             id(r.name) + "," + std::to_string(r.start_ns) + "," + std::to_string(end) + "," +
             std::to_string(gid++) + "," + id(r.type) + "," + wait + ")");
        continue;
      }
      const std::string g = std::to_string(gid++);
      if (!(drop && v.drop_table == "TASK")) {
        std::string cols = "startNs,endNs,deviceId,globalTaskId,taskType,streamId,taskId";
        std::string vals = std::to_string(r.start_ns) + "," + std::to_string(end) + "," +
                           std::to_string(r.device_id) + "," + g + "," + id("KERNEL_AICORE") +
                           "," + std::to_string(r.stream_id) + "," + std::to_string(r.task_id);
        if (v.drop_task_column == "endNs") {
          cols = "startNs,deviceId,globalTaskId,taskType,streamId,taskId";
          vals = std::to_string(r.start_ns) + "," + std::to_string(r.device_id) + "," + g + "," +
                 id("KERNEL_AICORE") + "," + std::to_string(r.stream_id) + "," +
                 std::to_string(r.task_id);
        }
        exec("INSERT INTO TASK (" + cols + ") VALUES (" + vals + ")");
      }
      exec("INSERT INTO COMPUTE_TASK_INFO VALUES (" + id(r.name) + "," + g + "," +
           std::to_string(r.block_dim) + "," + std::to_string(r.mix_block_dim) + "," +
           id(r.task_type) + "," + id(r.type) + "," + id(r.input_formats) + "," +
           id(r.input_dtypes) + "," + id(quote_shapes(r.input_shapes)) + "," +
           id(r.output_formats) + "," + id(r.output_dtypes) + "," +
           id(quote_shapes(r.output_shapes)) + ",NULL" + (v.wait_column ? "," + wait : "") + ")");
      if (v.pmu) {
        const std::pair<const char*, double> pmu[] = {
            {"aic_total_time", r.aic_time_us * 1000},      {"aic_total_cycles", r.aic_total_cycles},
            {"aic_mac_time", r.aic_mac_time_us * 1000},    {"aic_mac_ratio", r.aic_mac_ratio},
            {"aic_mte2_time", r.aic_mte2_time_us * 1000},  {"aic_mte2_ratio", r.aic_mte2_ratio},
            {"aiv_total_time", r.aiv_time_us * 1000},      {"aiv_total_cycles", r.aiv_total_cycles},
            {"aiv_vec_time", r.aiv_vec_time_us * 1000},    {"aiv_vec_ratio", r.aiv_vec_ratio},
            {"aiv_mte2_time", r.aiv_mte2_time_us * 1000},  {"aiv_mte2_ratio", r.aiv_mte2_ratio},
            {"aiv_mte3_time", r.aiv_mte3_time_us * 1000},  {"aic_icache_miss_rate", 0.5}};
        for (const auto& [name, value] : pmu) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.17g", value);
          exec("INSERT INTO TASK_PMU_INFO VALUES (" + g + "," + id(name) + "," + buf + ")");
        }
      }
    }
    exec("CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)");
    for (const auto& [s, be] : steps) {
      exec("INSERT INTO STEP_TIME VALUES (" + std::to_string(s) + "," +
           std::to_string(be.first) + "," + std::to_string(be.second) + ")");
    }
    if (!(drop && v.drop_table == "STRING_IDS")) {
      exec("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT)");
      for (const auto& [s, i] : ids_) {
        exec("INSERT INTO STRING_IDS VALUES (" + std::to_string(i) + "," + q(s) + ")");
      }
    }
    if (drop && v.drop_table != "TASK" && v.drop_table != "STRING_IDS") {
      exec("DROP TABLE " + v.drop_table);
    }
    exec("COMMIT");
  }

 private:
  // The exports write shapes in double quotes ("32,3,224,224"); the reader strips them.
  static std::string quote_shapes(const std::string& s) { return s.empty() ? s : '"' + s + '"'; }

  sqlite3* db_ = nullptr;
  std::map<std::string, std::int64_t> ids_;
};

}  // namespace npusim::test
