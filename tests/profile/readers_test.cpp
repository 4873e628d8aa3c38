#include "profile/readers.h"

#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "profile/advisor.h"
#include "profile/columns.h"
#include "profile/discover.h"
#include "profile/json_file.h"
#include "test_files.h"

using npusim::InputError;
using namespace npusim::profile;
using npusim::test::data_dir;

namespace {

std::vector<KernelRow> read_all(const std::string& file, KernelFileInfo* info = nullptr) {
  std::vector<KernelRow> rows;
  auto i = read_kernel_table(file, [&](const KernelRow& r) { rows.push_back(r); });
  if (info != nullptr) *info = i;
  return rows;
}

// The error a bad file gives under --strict, as `file:line:col: error: ...` (without it a bad row
// is skipped: damaged_input_test.cpp).
std::string error_of(const std::string& file) {
  try {
    (void)read_kernel_table(file, [](const KernelRow&) {}, ReadOptions{true});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("timestamps near 1.7e15 us are kept exact to the nanosecond", "[readers]") {
  CHECK(parse_time_us_to_ns("1780748105187895.870") == 1780748105187895870LL);
  CHECK(parse_time_us_to_ns("1699529622790614.8") == 1699529622790614800LL);
  CHECK(parse_time_us_to_ns("1695115378713661") == 1695115378713661000LL);
  // Digits past the nanosecond round half up.
  CHECK(parse_time_us_to_ns("1.0005") == 1001LL);
  CHECK(parse_time_us_to_ns("1.0004") == 1000LL);
  CHECK_FALSE(parse_time_us_to_ns("12a.5").has_value());
  CHECK_FALSE(parse_time_us_to_ns("").has_value());
  CHECK_FALSE(parse_time_us_to_ns("-5").has_value());
}

TEST_CASE("task types map to kinds and hcom_ ops are communication whatever their type",
          "[readers]") {
  CHECK(classify_task("AI_CORE", "MatMul") == TaskKind::kCube);
  CHECK(classify_task("AI_VECTOR_CORE", "Add") == TaskKind::kVector);
  CHECK(classify_task("MIX_AIC", "FA") == TaskKind::kMix);
  CHECK(classify_task("MIX_AIV", "FA") == TaskKind::kMix);
  CHECK(classify_task("AI_CPU", "Where") == TaskKind::kAicpu);
  CHECK(classify_task("HCCL", "x") == TaskKind::kCommunication);
  CHECK(classify_task("COMMUNICATION", "x") == TaskKind::kCommunication);
  CHECK(classify_task("N/A", "hcom_allReduce__1") == TaskKind::kCommunication);
  CHECK(classify_task("DSA_SQE", "rand") == TaskKind::kOther);
  CHECK(classify_task("N/A", "trans_TransData_0") == TaskKind::kUnknown);
}

TEST_CASE("an msprof CANN 8 op_summary is read by header name with its quirks", "[readers]") {
  KernelFileInfo info;
  const auto rows = read_all(npusim::test::crafted_msprof(), &info);
  REQUIRE(rows.size() == 13);
  CHECK(info.rows == 13);
  CHECK(info.has_cycles);
  CHECK(info.has_mte2);
  CHECK_FALSE(info.has_step_id);
  CHECK_THAT(info.layout, Catch::Contains("msprof op_summary"));
  const KernelRow& mm = rows[0];
  CHECK(mm.name == "aclnnMatmul_MatMulV2_1");
  CHECK(mm.type == "MatMulV2");
  CHECK(mm.kind == TaskKind::kCube);
  CHECK(mm.stream_id == 5);
  CHECK(mm.start_ns == 1780000000000000123LL);  // trailing TAB stripped, exact
  CHECK(mm.duration_us == 20.0);
  CHECK(mm.block_dim == 20);
  CHECK(mm.input_shapes == "1024,64;64,256");   // triple quotes stripped
  CHECK(mm.input_dtypes == "FLOAT16;FLOAT16");
  CHECK(mm.output_shapes.empty());              // N/A
  CHECK(mm.aic_total_cycles == 200000);
  CHECK(mm.cube_utilization_pct == 50);
  CHECK(rows[4].wait_us == 100.0);              // "100.000000"
  const KernelRow& hc = rows[8];
  CHECK(hc.kind == TaskKind::kCommunication);
  CHECK(hc.stream_id == -1);                    // N/A
  CHECK(hc.aic_total_cycles == 0);              // N/A
}

TEST_CASE("torch_npu kernel_details names (Name, Type, Accelerator Core, Start Time(us)) are "
          "aliases",
          "[readers]") {
  KernelFileInfo info;
  const auto rows = read_all(
      data_dir() + "/profiles/torch_cann83/rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
      &info);
  REQUIRE(rows.size() == 7);
  CHECK(info.has_step_id);
  CHECK_THAT(info.layout, Catch::Contains("torch_npu kernel_details"));
  CHECK(rows[0].step_id == 12);
  CHECK(rows[0].name == "aclnnMatmul_MatMulV3Common_MatMulV3");
  CHECK(rows[0].type == "MatMulV3");
  CHECK(rows[0].kind == TaskKind::kCube);
  CHECK(rows[0].start_ns == 1764246877073569640LL);
  CHECK(rows[0].duration_us == 100.5);
  CHECK(rows[1].wait_us == 1.5);
  CHECK(rows[2].kind == TaskKind::kCommunication);
  CHECK(rows[4].kind == TaskKind::kMix);
  CHECK(rows[4].mix_block_dim == 40);
}

TEST_CASE("CANN 9 Block Num / Mix Block Num are Block Dim / Mix Block Dim", "[readers]") {
  KernelFileInfo info;
  const auto rows = read_all(data_dir() + "/profiles/cann9_block_num/op_summary_20261001000000.csv",
                             &info);
  REQUIRE(rows.size() == 3);
  CHECK_THAT(info.layout, Catch::Contains("Block Num"));
  CHECK(rows[0].kind == TaskKind::kOther);  // DSA_SQE
  CHECK(rows[0].input_shapes.empty());
  CHECK(rows[1].block_dim == 40);
  CHECK(rows[1].wait_us == Approx(904.33));
  CHECK(rows[2].block_dim == 9);
  CHECK(rows[2].mix_block_dim == 18);
  CHECK(rows[2].input_shapes == "384,384;384,384;384");
  // No PMU columns: the checks that need them are told so.
  CHECK_FALSE(info.has_cycles);
  CHECK(std::count(info.missing_optional.begin(), info.missing_optional.end(),
                   "aic_total_cycles") == 1);
}

TEST_CASE("CANN 6 'Task Start Time' and unprefixed PMU columns are read", "[readers]") {
  KernelFileInfo info;
  const auto rows = read_all(data_dir() + "/profiles/cann6_unprefixed/op_summary_0_1_1.csv", &info);
  REQUIRE(rows.size() == 2);
  CHECK_THAT(info.layout, Catch::Contains("CANN <= 6"));
  CHECK(rows[0].start_ns == 1043640017380831LL);
  CHECK(rows[0].aic_total_cycles == 78923);
  CHECK(rows[0].mte2_ratio == Approx(0.3887));
  CHECK(rows[1].mte2_ratio == Approx(0.85));
  CHECK(info.has_mte2);
}

TEST_CASE("profiler Level0 kernel_details (8 columns, CRLF, N/A types) is read", "[readers]") {
  KernelFileInfo info;
  const auto rows = read_all(data_dir() + "/profiles/torch_level0/kernel_details.csv", &info);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].type.empty());
  CHECK(rows[0].kind == TaskKind::kUnknown);
  CHECK(rows[1].wait_us == Approx(105.722));
  CHECK(rows[2].kind == TaskKind::kCommunication);
  CHECK_FALSE(info.has_shapes);
}

TEST_CASE("the small summary files are read by header name", "[readers]") {
  const std::string dir = data_dir() +
      "/profiles/msprof_crafted/PROF_000001_20260101000000000_CRAFTED/mindstudio_profiler_output/";
  const auto stat = read_op_statistic(dir + "op_statistic_20260101000000.csv");
  REQUIRE(stat.size() == 7);
  CHECK(stat[0].type == "ScatterNdUpdate");
  CHECK(stat[0].core_type == "AI_CPU");
  CHECK(stat[0].total_us == 1500);
  const auto tt = read_task_time(dir + "task_time_20260101000000.csv");
  REQUIRE(tt.size() == 2);
  CHECK(tt[0].kernel_name.empty());
  CHECK(tt[0].kernel_type == "PROFILING_ENABLE");
  CHECK(tt[1].start_ns == 1780000000000000100LL);
  const auto api = read_api_statistic(dir + "api_statistic_20260101000000.csv");
  REQUIRE(api.size() == 2);
  CHECK(api[0].api == "aclopCompileAndExecute");
  CHECK(api[0].count == 2);
  const auto pcie = read_pcie(dir + "pcie_20260101000000.csv");
  REQUIRE(pcie.size() == 3);
  CHECK(pcie[0].mode == "Tx_p_avg(MB/s)");
  CHECK(pcie[0].max == 3000);
}

TEST_CASE("bad profile files each give their clear file:line error", "[readers][bad]") {
  const std::string bad = data_dir() + "/bad/";
  SECTION("a non-numeric duration names the line, column and value") {
    CHECK(error_of(bad + "profile_nonnumeric_duration.csv") ==
          bad + "profile_nonnumeric_duration.csv:3:5: error: column 'Task Duration(us)': "
                "expected a number, got 'abc'");
  }
  SECTION("a duration beyond a day (a corrupt cell) names the line, column and value") {
    // Read as a time it printed a 309-digit total and a -inf % error in `accuracy`.
    CHECK(error_of(bad + "profile_duration_beyond_a_day.csv") ==
          bad + "profile_duration_beyond_a_day.csv:3:5: error: column 'Task Duration(us)': a "
                "duration above one day (8.64e+10 us) is not a kernel's, got 1e+308");
  }
  SECTION("an empty file") {
    CHECK(error_of(bad + "profile_empty.csv") ==
          bad + "profile_empty.csv:1: error: empty file: expected a header line of column names");
  }
  SECTION("a wrong delimiter") {
    CHECK_THAT(error_of(bad + "profile_semicolon.csv"),
               Catch::StartsWith(bad + "profile_semicolon.csv:1: error: wrong delimiter") &&
                   Catch::Contains("4 ';'"));
  }
  SECTION("a duplicate header") {
    CHECK(error_of(bad + "profile_duplicate_header.csv") ==
          bad + "profile_duplicate_header.csv:1:5: error: duplicate column 'OP Type' (columns 2 "
                "and 5)");
  }
  SECTION("two aliases of one column") {
    CHECK_THAT(error_of(bad + "profile_alias_twice.csv"),
               Catch::StartsWith(bad + "profile_alias_twice.csv:1:4: error: columns 'Duration(us)' "
                                       "and 'Task Duration(us)' are two names of the same column"));
  }
  SECTION("a truncated file (a quote never closed)") {
    CHECK_THAT(error_of(bad + "profile_truncated.csv"),
               Catch::StartsWith(bad + "profile_truncated.csv:3: error: a quoted field is never "
                                       "closed"));
  }
  SECTION("a truncated row") {
    CHECK(error_of(bad + "profile_short_row.csv") ==
          bad + "profile_short_row.csv:3: error: the row has 4 fields but the header has 6: the "
                "file is truncated or the row is broken");
  }
  SECTION("an unknown layout lists the columns it found") {
    CHECK(error_of(bad + "profile_unknown_layout.csv") ==
          bad + "profile_unknown_layout.csv:1: error: op_summary/kernel_details: missing required "
                "column 'Op Name' (or 'Name'); columns found: Kernel, Elapsed(ms), Grid");
  }
}

TEST_CASE("a missing required column in a summary file lists the columns found", "[readers][bad]") {
  npusim::test::TempDir d;
  const auto p = d.write("op_statistic.csv", "OP Type,Core Type,Count\nAdd,AI_VECTOR_CORE,3\n");
  try {
    (void)read_op_statistic(p);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.detail() == "op_statistic: missing required column 'Total Time(us)'; columns found: "
                        "OP Type, Core Type, Count");
    CHECK(e.pos().line == 1);
  }
}

TEST_CASE("a malformed timeline JSON names its line", "[readers][bad]") {
  npusim::test::TempDir d;
  const auto p = d.write("trace_view.json", "[\n{\"ph\": \"X\"},\n{oops}\n]\n");
  try {
    (void)read_trace_json(p);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 3);
    CHECK_THAT(e.detail(), Catch::Contains("malformed JSON"));
  }
}

TEST_CASE("a JSON number beyond a double is malformed JSON, not a library exception",
          "[readers][bad]") {
  npusim::test::TempDir d;
  const auto p = d.write("profiler_metadata.json", "{\"x\": 1e400}\n");
  CHECK_THROWS_WITH(npusim::profile::read_json_file(p),
                    Catch::Contains("malformed JSON") && Catch::Contains("number overflow"));
}

TEST_CASE("a timeline JSON gives its device task count and AI core clock", "[readers]") {
  npusim::test::TempDir d;
  const auto p = d.write(
      "msprof_1.json",
      R"([{"name":"process_name","ph":"M","pid":7,"args":{"name":"Ascend Hardware"}},
          {"name":"MatMul","ph":"X","pid":7,"tid":2,"ts":"1.0","dur":3},
          {"name":"Add","ph":"X","pid":7,"tid":2,"ts":"4.0","dur":1},
          {"name":"Enqueue","ph":"X","pid":9,"tid":1,"ts":"1.0","dur":1},
          {"name":"AI Core Freq","ph":"C","pid":8,"ts":"1.0","args":{"MHz":800}},
          {"name":"AI Core Freq","ph":"C","pid":8,"ts":"2.0","args":{"MHz":1800}}])");
  const auto t = read_trace_json(p);
  CHECK(t.events == 6);
  CHECK(t.device_tasks == 2);
  REQUIRE(t.aicore_freq_mhz.has_value());
  CHECK(*t.aicore_freq_mhz == 1800);
}

// Found by fuzz/fuzz_profile_json: members of an unexpected type made nlohmann throw its own
// type_error out of the old whole-file reader (a crash at the CLI's level, not a diagnostic).
// The streaming reader's summary is strict (the whole file or nothing): a mistyped member is an
// InputError at the event's line, which analyze turns into a note.
TEST_CASE("a timeline whose fields have unexpected types gives a file:line error, never a raw one",
          "[readers][bad]") {
  npusim::test::TempDir d;
  const auto p = d.write(
      "trace_view.json",
      R"([{"name":"process_name","ph":"M","pid":7,"args":{"name":"Ascend Hardware"}},
          {"name":"process_name","ph":"M","pid":8,"args":[1, 2]},
          {"name":"process_name","ph":"M","pid":9,"args":{"name":5}},
          {"name":"MatMul","ph":"X","pid":7,"ts":"1.0","dur":3},
          {"name":"MatMul","ph":5,"pid":7},
          {"name":"MatMul","ph":"X","pid":18446744073709551615},
          {"name":7,"ph":"C","args":{"MHz":900}},
          {"name":"AI Core Freq","ph":"C","args":"1800"},
          {"name":"AI Core Freq","ph":"C","args":{"MHz":"1800"}},
          {"name":"AI Core Freq","ph":"C","args":{"MHz":1000}}, 3, null])");
  try {
    (void)read_trace_json(p);
    FAIL("a mistyped member was accepted by the strict summary");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains(p.string() + ":"));
    CHECK_THAT(e.what(), Catch::Contains("malformed JSON in this event"));
  }
}

TEST_CASE("an absurd duration saturates the end time instead of overflowing", "[readers]") {
  KernelRow r;
  r.start_ns = 1780000000000000000LL;
  r.duration_us = 1e300;
  CHECK(r.end_ns() == std::numeric_limits<std::int64_t>::max());
  r.duration_us = 1.5;
  CHECK(r.end_ns() == 1780000000000001500LL);
  // fuzz_profile_db's finding: a negative start (a damaged database row) overflowed max - start.
  r.start_ns = -2198264;
  CHECK(r.end_ns() == -2198264 + 1500);
  r.duration_us = 1e300;
  CHECK(r.end_ns() == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("invalid UTF-8 in an op name does not break the JSON report", "[readers]") {
  npusim::test::TempDir d;
  const auto p = d.write("op_summary_1.csv",
                         "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n"
                         "bad\xff\xfename,Add,AI_VECTOR_CORE,100.0,5.0\n"
                         "ok,Add,AI_VECTOR_CORE,105.0,5.0\n");
  const auto disc = discover_profiles(p);
  const auto json = render_json({analyze(disc.profiles.front(), AnalyzeOptions{})});
  CHECK_THAT(json, Catch::Contains("\"ops\": 2"));
}
