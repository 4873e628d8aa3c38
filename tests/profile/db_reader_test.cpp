#include "profile/db_reader.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "db_fixture.h"
#include "profile/advisor.h"
#include "profile/discover.h"
#include "profile/observation.h"
#include "profile/op_statistic.h"
#include "test_files.h"

using npusim::InputError;
using namespace npusim::profile;
namespace fs = std::filesystem;

namespace {

std::vector<KernelRow> db_read_all(const fs::path& file, KernelFileInfo* info = nullptr,
                                ReadOptions opt = {}) {
  std::vector<KernelRow> rows;
  auto i = read_kernel_table(file, [&](const KernelRow& r) { rows.push_back(r); }, opt);
  if (info != nullptr) *info = i;
  return rows;
}

// A small crafted profile: cube, vector, mix and DSA kernels, one communication op, two steps.
std::vector<KernelRow> crafted_rows() {
  std::vector<KernelRow> rows;
  auto add = [&](std::string name, std::string type, std::string task_type, std::int64_t start_ns,
                 double dur_us, std::int64_t step) {
    KernelRow r;
    r.name = std::move(name);
    r.type = std::move(type);
    r.task_type = std::move(task_type);
    r.kind = classify_task(r.task_type, r.name);
    r.start_ns = start_ns;
    r.duration_us = dur_us;
    r.step_id = step;
    r.device_id = 0;
    r.stream_id = 2;
    r.task_id = static_cast<std::int64_t>(rows.size()) + 100;
    r.block_dim = 20;
    r.input_shapes = "64,128;128,256";
    r.input_dtypes = "FLOAT16;FLOAT16";
    r.input_formats = "ND;ND";
    r.output_shapes = "64,256";
    r.output_dtypes = "FLOAT16";
    r.output_formats = "ND";
    rows.push_back(r);
    return &rows.back();
  };
  const std::int64_t t0 = 1736410576375315901;
  KernelRow* m = add("MatMul_1", "MatMulV3", "AI_CORE", t0, 20.5, 1);
  m->wait_us = 1.25;
  m->aic_time_us = 19.5;
  m->aic_total_cycles = 19.5 * 1800 * 20;
  m->aic_mac_time_us = 15.25;
  m->aic_mac_ratio = 0.78;
  m->aic_mte2_time_us = 12.5;
  m->aic_mte2_ratio = 0.64;
  KernelRow* a = add("Add_1", "Add", "AI_VECTOR_CORE", t0 + 30000, 4.125, 1);
  a->aiv_time_us = 3.5;
  a->aiv_total_cycles = 3.5 * 1800 * 20;
  a->aiv_vec_time_us = 1.75;
  a->aiv_vec_ratio = 0.5;
  a->aiv_mte2_time_us = 2.0;
  a->aiv_mte2_ratio = 0.57;
  a->aiv_mte3_time_us = 0.75;
  add("MatMul_2", "MatMulV3", "MIX_AIC", t0 + 40000, 30.0, 1)->mix_block_dim = 40;
  KernelRow* d = add("aclnnDropout_DSAGenBitMask", "DSAGenBitMask", "DSA_SQE", t0 + 80000, 3.4, 2);
  d->block_dim = 0;
  d->input_shapes.clear();
  d->input_dtypes.clear();
  d->input_formats.clear();
  KernelRow* c = add("hcom_allReduce__1_0_1", "hcom_allReduce_", "COMMUNICATION", t0 + 90000,
                     120.0, 2);
  c->wait_us = 5;
  add("Add_2", "Add", "AI_VECTOR_CORE", t0 + 250000, 5.0, 2);
  return rows;
}

fs::path write_db(const npusim::test::TempDir& d, const std::vector<KernelRow>& rows,
                  const npusim::test::DbVariant& v = {},
                  const std::string& name = "ascend_pytorch_profiler_0.db") {
  const fs::path p = d.path() / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT" / name;
  fs::create_directories(p.parent_path());
  npusim::test::DbWriter w(p);
  w.write(rows, v);
  return p;
}

std::string db_error_of(const fs::path& file, ReadOptions opt = {}) {
  try {
    (void)db_read_all(file, nullptr, opt);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a crafted database reads back every field of its rows", "[db]") {
  npusim::test::TempDir d;
  const auto rows = crafted_rows();
  const auto p = write_db(d, rows);
  KernelFileInfo info;
  const auto got = db_read_all(p, &info);
  REQUIRE(got.size() == rows.size());
  CHECK(info.rows == rows.size());
  CHECK(info.source_kind == "db");
  CHECK(info.schema_version == "1.0.0");
  CHECK(info.chip == "Ascend910B");
  REQUIRE(info.aicore_freq_mhz.has_value());
  CHECK(*info.aicore_freq_mhz == 1800);  // the highest AICORE_FREQ sample
  CHECK(info.has_step_id);
  CHECK(info.has_pmu);
  CHECK(info.has_cycles);
  CHECK(info.has_shapes);
  CHECK(info.broken_rows == 0);
  CHECK_THAT(info.layout, Catch::StartsWith("torch_npu profiler database (schema 1.0.0), "
                                            "NPU_INFO Ascend910B, AICORE_FREQ 1800 MHz"));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO(rows[i].name);
    const KernelRow& w = rows[i];
    const KernelRow& g = got[i];
    CHECK(g.name == w.name);
    CHECK(g.type == w.type);
    CHECK(g.kind == w.kind);
    CHECK(g.start_ns == w.start_ns);
    CHECK(g.duration_us == Approx(w.duration_us).margin(1e-9));
    CHECK(g.wait_us == Approx(w.wait_us).margin(1e-9));
    CHECK(g.step_id == w.step_id);
    if (w.kind == TaskKind::kCommunication) {
      CHECK(g.task_type == "COMMUNICATION");
      continue;
    }
    CHECK(g.task_type == w.task_type);
    CHECK(g.stream_id == w.stream_id);
    CHECK(g.task_id == w.task_id);
    CHECK(g.device_id == 0);
    CHECK(g.block_dim == w.block_dim);
    CHECK(g.mix_block_dim == w.mix_block_dim);
    CHECK(g.input_shapes == w.input_shapes);  // the exports' quotes removed
    CHECK(g.input_dtypes == w.input_dtypes);
    CHECK(g.input_formats == w.input_formats);
    CHECK(g.output_shapes == w.output_shapes);
    CHECK(g.aic_time_us == Approx(w.aic_time_us));  // ns in the database, µs here
    CHECK(g.aic_total_cycles == w.aic_total_cycles);
    CHECK(g.aic_mac_time_us == Approx(w.aic_mac_time_us));
    CHECK(g.aic_mte2_ratio == Approx(w.aic_mte2_ratio));
    CHECK(g.aiv_vec_time_us == Approx(w.aiv_vec_time_us));
    CHECK(g.aiv_mte3_time_us == Approx(w.aiv_mte3_time_us));
  }
}

TEST_CASE("the CSV and the database of the same crafted profile give the same observations",
          "[db]") {
  // The crafted msprof op_summary, written into a database by the fixture, must read back as
  // the same rows, and analyze must give the same totals and op statistic either way.
  std::vector<KernelRow> csv_rows;
  const auto csv_info = read_kernel_table(npusim::test::crafted_msprof(),
                                          [&](const KernelRow& r) { csv_rows.push_back(r); });
  REQUIRE(csv_rows.size() > 5);
  npusim::test::TempDir d;
  const auto p = write_db(d, csv_rows, {}, "msprof_20260101000000.db");
  const auto db_rows = db_read_all(p);
  REQUIRE(db_rows.size() == csv_rows.size());
  OpStatistic a, b;
  for (std::size_t i = 0; i < csv_rows.size(); ++i) {
    INFO(csv_rows[i].name << " line " << csv_rows[i].line);
    CHECK(db_rows[i].name == csv_rows[i].name);
    CHECK(db_rows[i].type == csv_rows[i].type);
    CHECK(db_rows[i].kind == csv_rows[i].kind);
    CHECK(db_rows[i].start_ns == csv_rows[i].start_ns);
    CHECK(db_rows[i].duration_us == Approx(csv_rows[i].duration_us).margin(5e-4));
    CHECK(db_rows[i].input_shapes == csv_rows[i].input_shapes);
    CHECK(db_rows[i].block_dim == csv_rows[i].block_dim);
    a.add(csv_rows[i]);
    b.add(db_rows[i]);
  }
  const auto sa = a.rows(), sb = b.rows();
  REQUIRE(sa.size() == sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    CHECK(sa[i].type == sb[i].type);
    CHECK(sa[i].core_type == sb[i].core_type);
    CHECK(sa[i].count == sb[i].count);
    CHECK(sa[i].total_us == Approx(sb[i].total_us).margin(1e-3));
  }
  // Observations (what accuracy and calibrate use) agree too.
  const auto oc = read_observations({npusim::test::crafted_msprof()});
  const auto od = read_observations({p.string()});
  CHECK(oc.compute.size() == od.compute.size());
  CHECK(oc.skipped_count == od.skipped_count);
  CHECK(oc.communication.size() == od.communication.size());
  CHECK(oc.other.size() == od.other.size());
  (void)csv_info;
}

TEST_CASE("a folder holding only a database is a profile for analyze", "[db][discover]") {
  npusim::test::TempDir d;
  write_db(d, crafted_rows());
  const auto disc = discover_profiles(d.path());
  REQUIRE(disc.profiles.size() == 1);
  const auto& src = disc.profiles.front();
  CHECK(src.kernel_source == "db");
  CHECK(src.producer == "torch_npu");
  const Report r = analyze(src, AnalyzeOptions{});
  CHECK(r.ops == 4);  // MatMul_1, Add_1, MatMul_2, Add_2
  CHECK(r.total_time_us == Approx(20.5 + 4.125 + 30 + 5));
  CHECK(r.communication_ops == 1);
  CHECK(r.other_tasks == 1);
  REQUIRE(r.other_device_types.size() == 1);
  CHECK(r.other_device_types[0].type == "DSAGenBitMask");
  CHECK(r.other_device_types[0].core_type == "DSA_SQE");
  REQUIRE(r.chip.freq_mhz.has_value());
  CHECK(*r.chip.freq_mhz == 1800);
  // MatMulV3 on AI_CORE and on MIX_AIC stay two rows, as msprof writes them.
  int matmul_rows = 0;
  for (const auto& s : r.op_statistic) matmul_rows += s.type == "MatMulV3";
  CHECK(matmul_rows == 2);
}

TEST_CASE("a database beside the CSV of the same PROF_ folder is not read twice", "[db][discover]") {
  npusim::test::TempDir d;
  const fs::path prof = d.path() / "PROF_000001_1";
  fs::create_directories(prof / "mindstudio_profiler_output");
  fs::copy_file(npusim::test::crafted_msprof(),
                prof / "mindstudio_profiler_output" / "op_summary_20260101000000.csv");
  npusim::test::DbWriter(prof / "msprof_20260101000000.db").write(crafted_rows(), {});
  const auto disc = discover_profiles(d.path());
  REQUIRE(disc.profiles.size() == 1);
  CHECK(disc.profiles.front().kernel_source == "csv");
  bool noted = false;
  for (const auto& n : disc.notes) noted = noted || n.find("msprof_20260101000000.db not read") !=
                                                        std::string::npos;
  CHECK(noted);
}

TEST_CASE("schema variants of older releases read alike", "[db]") {
  npusim::test::TempDir d;
  npusim::test::DbVariant v;
  v.block_dim_snake = true;
  v.wait_column = false;
  v.meta_data = false;
  v.pmu = false;
  const auto p = write_db(d, crafted_rows(), v, "msprof_0.db");
  KernelFileInfo info;
  const auto rows = db_read_all(p, &info);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].block_dim == 20);  // block_dim found by name
  CHECK(rows[0].wait_us == 0);
  CHECK(info.schema_version == "unknown (no META_DATA table)");
  CHECK_THAT(info.layout, Catch::StartsWith("msprof database (schema unknown"));
  CHECK(!info.has_pmu);
  CHECK(std::count(info.missing_optional.begin(), info.missing_optional.end(),
                   "Task Wait Time(us)") == 1);
}

TEST_CASE("a database missing a table or column names it", "[db][bad]") {
  npusim::test::TempDir d;
  SECTION("no COMPUTE_TASK_INFO") {
    npusim::test::DbVariant v;
    v.drop_table = "COMPUTE_TASK_INFO";
    const auto p = write_db(d, crafted_rows(), v);
    CHECK_THAT(db_error_of(p), Catch::StartsWith(p.string() + ": error: no table "
                                                           "'COMPUTE_TASK_INFO' (tables: "));
  }
  SECTION("no STRING_IDS") {
    npusim::test::DbVariant v;
    v.drop_table = "STRING_IDS";
    const auto p = write_db(d, crafted_rows(), v);
    CHECK_THAT(db_error_of(p), Catch::Contains("no table 'STRING_IDS'"));
  }
  SECTION("TASK without endNs") {
    npusim::test::DbVariant v;
    v.drop_task_column = "endNs";
    const auto p = write_db(d, crafted_rows(), v);
    CHECK_THAT(db_error_of(p), Catch::StartsWith(p.string() + ": error: table 'TASK' has no column "
                                                           "'endNs' (columns: startNs, "));
  }
  SECTION("not a database at all") {
    const auto p = d.write("msprof_1.db", "Op Name,OP Type\nMatMul,MatMul\n");
    CHECK_THAT(db_error_of(p), Catch::Contains("is it an SQLite profiler export?"));
  }
}

TEST_CASE("a malformed database row is skipped and reported, or fails with --strict", "[db][bad]") {
  npusim::test::TempDir d;
  const auto p = write_db(d, crafted_rows());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(p.string().c_str(), &db) == SQLITE_OK);
  // Task 1 (Add_1) loses its start; task 2's op type points at no string.
  REQUIRE(sqlite3_exec(db, "UPDATE TASK SET startNs = NULL WHERE globalTaskId = 1; "
                           "UPDATE COMPUTE_TASK_INFO SET opType = 99999 WHERE globalTaskId = 2",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  KernelFileInfo info;
  const auto rows = db_read_all(p, &info);
  CHECK(rows.size() == 4);
  CHECK(info.broken_rows == 2);
  REQUIRE(info.broken_row_messages.size() == 2);
  CHECK_THAT(info.layout, Catch::EndsWith("2 of 6 rows skipped as malformed"));
  bool start = false, string_id = false;
  for (const auto& m : info.broken_row_messages) {
    start = start || m.find("globalTaskId 1: column 'startNs': expected an integer, got NULL") !=
                         std::string::npos;
    string_id = string_id || m.find("globalTaskId 2: column 'opType': string id 99999 is not in "
                                    "STRING_IDS") != std::string::npos;
  }
  CHECK(start);
  CHECK(string_id);
  CHECK_THAT(db_error_of(p, ReadOptions{true}), Catch::Contains("expected an integer, got NULL"));
}

TEST_CASE("a database row with a negative start or a task longer than a day is skipped", "[db][bad]") {
  npusim::test::TempDir d;
  const auto p = write_db(d, crafted_rows());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(p.string().c_str(), &db) == SQLITE_OK);
  // Task 1 starts far below zero and ends far above it: end - start overflowed 64 bits (undefined
  // behaviour) before. Task 2 lasts 1e18 ns, 31 years: it printed as a kernel time.
  REQUIRE(sqlite3_exec(db, "UPDATE TASK SET startNs = -9223372036854775000, endNs = "
                           "9223372036854775000 WHERE globalTaskId = 1; UPDATE TASK SET endNs = "
                           "startNs + 1000000000000000000 WHERE globalTaskId = 2",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  KernelFileInfo info;
  const auto rows = db_read_all(p, &info);
  CHECK(rows.size() == 4);
  REQUIRE(info.broken_row_messages.size() == 2);
  CHECK_THAT(info.broken_row_messages.at(0) + info.broken_row_messages.at(1),
             Catch::Contains("a negative timestamp (-9223372036854775000 ns)") &&
                 Catch::Contains("the task lasts more than a day"));
}

// ---- the shared databases, against an independent SQL sum --------------------------------------

namespace {

const fs::path kDbShared = NPUSIM_SHARED_PROFILES_DIR;

std::vector<fs::path> shared_dbs() {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(kDbShared, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(kDbShared, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file() && is_profiler_db_name(it->path().filename().string())) {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Rows and Σ(end - start) by (opType, taskType) text, straight from SQL.
std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>> sql_groups(
    const fs::path& file) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.string().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT COALESCE(o.value, n.value), COALESCE(k.value, ''), COUNT(*), "
      "SUM(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = "
      "c.globalTaskId LEFT JOIN STRING_IDS o ON o.id = c.opType LEFT JOIN STRING_IDS n ON n.id = "
      "c.name LEFT JOIN STRING_IDS k ON k.id = c.taskType GROUP BY 1, 2";
  REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
  std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto text = [&](int i) {
      const auto* p = sqlite3_column_text(st, i);
      return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
    };
    out[{text(0), text(1)}] = {sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("every shared profiler database reads as its own SQL sums", "[db][real]") {
  const auto dbs = shared_dbs();
  if (dbs.empty()) return;  // ../shared/profiles absent: skipped
  REQUIRE(dbs.size() >= 3);
  for (const auto& f : dbs) {
    INFO(f.string());
    OpStatistic stat;
    std::uint64_t comm = 0;
    KernelFileInfo info;
    const auto rows = db_read_all(f, &info);
    for (const auto& r : rows) {
      stat.add(r);
      comm += r.kind == TaskKind::kCommunication;
    }
    CHECK(info.broken_rows == 0);
    CHECK(!info.schema_version.empty());
    CHECK(info.chip == "Ascend910B");
    const auto expected = sql_groups(f);
    std::int64_t expected_rows = 0;
    for (const auto& [k, v] : expected) expected_rows += v.first;
    CHECK(rows.size() - comm == static_cast<std::size_t>(expected_rows));
    const auto got = stat.rows();
    CHECK(got.size() == expected.size());
    for (const auto& s : got) {
      INFO(s.type << " / " << s.core_type);
      const auto it = expected.find({s.type, s.core_type});
      REQUIRE(it != expected.end());
      CHECK(s.count == it->second.first);
      CHECK(s.total_us == Approx(static_cast<double>(it->second.second) / 1000.0).margin(1e-6));
    }
  }
}
