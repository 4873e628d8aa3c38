// Damaged kernel tables (docs/profile_formats.md, "Damaged input"): by default a malformed row is
// skipped and counted, the first few listed at file:line:col, a cut last row reported as
// truncation; --strict (ReadOptions::strict) fails at the first defect; a file mostly malformed
// or without a required column is an error either way.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "profile/advisor.h"
#include "profile/discover.h"
#include "profile/readers.h"
#include "test_files.h"

using npusim::InputError;
using namespace npusim::profile;
using npusim::test::data_dir;

namespace {

struct DamagedRead {
  std::vector<KernelRow> rows;
  KernelFileInfo info;
};

DamagedRead damaged_read(const std::string& file, bool strict = false) {
  DamagedRead r;
  r.info = read_kernel_table(file, [&](const KernelRow& k) { r.rows.push_back(k); },
                             ReadOptions{strict});
  return r;
}

std::string strict_error(const std::string& file) {
  try {
    (void)damaged_read(file, true);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kDamagedHeader = "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n";

std::string good_rows(int n, int first_line_offset = 0) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += "Op_" + std::to_string(i + first_line_offset) + ",Add,AI_VECTOR_CORE,1780000000000" +
           std::to_string(100 + i) + ".5,2.0\n";
  }
  return out;
}

}  // namespace

TEST_CASE("a bad cell skips its row, which is counted and reported at file:line:col",
          "[damaged]") {
  const std::string f = data_dir() + "/bad/profile_nonnumeric_duration.csv";
  const DamagedRead r = damaged_read(f);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].name == "MatMul_1");
  CHECK(r.info.rows == 1);
  CHECK(r.info.broken_rows == 1);
  REQUIRE(r.info.broken_row_messages.size() == 1);
  CHECK(r.info.broken_row_messages[0] ==
        f + ":3:5: error: column 'Task Duration(us)': expected a number, got 'abc' (row skipped)");
  CHECK(!r.info.truncated);
  CHECK_THAT(r.info.layout, Catch::EndsWith(", 1 of 2 rows skipped as malformed"));
  CHECK(strict_error(f) ==
        f + ":3:5: error: column 'Task Duration(us)': expected a number, got 'abc'");
}

TEST_CASE("a short last row is reported as truncation", "[damaged]") {
  const std::string f = data_dir() + "/bad/profile_short_row.csv";
  const DamagedRead r = damaged_read(f);
  CHECK(r.rows.size() == 1);
  CHECK(r.info.broken_rows == 1);
  REQUIRE(r.info.truncated.has_value());
  CHECK(*r.info.truncated == f + ":3: error: the row has 4 fields but the header has 6: the file is "
                                 "truncated or the row is broken (the last row: the file is cut "
                                 "short)");
  CHECK_THAT(r.info.layout, Catch::EndsWith("1 of 2 rows skipped as malformed (truncated file)"));
  CHECK(strict_error(f) == f + ":3: error: the row has 4 fields but the header has 6: the file is "
                               "truncated or the row is broken");
}

TEST_CASE("a file cut inside a quoted field is reported as truncation", "[damaged]") {
  const std::string f = data_dir() + "/bad/profile_truncated.csv";
  const DamagedRead r = damaged_read(f);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].input_shapes == "1,2");
  CHECK(r.info.broken_rows == 1);
  REQUIRE(r.info.truncated.has_value());
  CHECK_THAT(*r.info.truncated,
             Catch::StartsWith(f + ":3: error: a quoted field is never closed"));
  CHECK_THAT(strict_error(f), Catch::StartsWith(f + ":3: error: a quoted field is never closed"));
}

TEST_CASE("a short row in the middle is skipped, and --strict fails on it", "[damaged]") {
  npusim::test::TempDir d;
  const auto f = d.write("kernel_details.csv",
                         kDamagedHeader + good_rows(3) + "Broken,Add,AI_VECTOR_CORE\n" + good_rows(3, 3))
                     .string();
  const DamagedRead r = damaged_read(f);
  CHECK(r.rows.size() == 6);
  CHECK(r.info.broken_rows == 1);
  CHECK(!r.info.truncated);
  CHECK_THAT(r.info.broken_row_messages.at(0), Catch::StartsWith(f + ":5: error: the row has 3 "
                                                                     "fields but the header has 5"));
  CHECK_THAT(strict_error(f), Catch::StartsWith(f + ":5: error: the row has 3 fields"));
}

TEST_CASE("only the first ten defects are listed, all are counted", "[damaged]") {
  npusim::test::TempDir d;
  std::string text = kDamagedHeader + good_rows(20);
  for (int i = 0; i < 15; ++i) text += "Bad_" + std::to_string(i) + ",Add,AI_CORE,x,1.0\n";
  const auto f = d.write("op_summary_1.csv", text).string();
  const DamagedRead r = damaged_read(f);
  CHECK(r.rows.size() == 20);
  CHECK(r.info.broken_rows == 15);
  CHECK(r.info.broken_row_messages.size() == kReportedDefects);
  CHECK(r.info.broken_row_messages.front() ==
        f + ":22:4: error: column 'Task Start Time(us)': expected a timestamp in microseconds, "
            "got 'x' (row skipped)");
}

TEST_CASE("a file whose rows are mostly malformed is still an error", "[damaged]") {
  npusim::test::TempDir d;
  std::string text = kDamagedHeader + good_rows(2);
  for (int i = 0; i < 3; ++i) text += "Bad,Add,AI_CORE,1780000000000000.0,n/a?\n";
  const auto f = d.write("op_summary_1.csv", text).string();
  try {
    (void)damaged_read(f);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith(f + ":1: error: 3 of 5 rows are malformed: not read "
                                               "(first: " +
                                           f + ":4:5: error: column 'Task Duration(us)'"));
  }
}

TEST_CASE("a missing required column is still an error, lenient or not", "[damaged]") {
  const std::string f = data_dir() + "/bad/profile_unknown_layout.csv";
  CHECK_THROWS_AS(damaged_read(f), InputError);
  CHECK_THROWS_AS(damaged_read(f, true), InputError);
}

TEST_CASE("no number comes from a half-parsed row", "[damaged]") {
  // The bad cell is the last one damaged_read (Block Dim after the duration): the row must not be
  // passed on with the duration already set.
  npusim::test::TempDir d;
  const auto f = d.write("op_summary_1.csv",
                         "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Block "
                         "Dim\nA,Add,AI_CORE,1.0,5.0,8\nB,Add,AI_CORE,2.0,7.0,eight\nC,Add,AI_CORE,"
                         "3.0,9.0,8\n")
                     .string();
  const DamagedRead r = damaged_read(f);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].duration_us + r.rows[1].duration_us == 14.0);
  CHECK(r.info.broken_rows == 1);
}

TEST_CASE("CSV text in memory reads like the same file", "[damaged]") {
  const std::string text = kDamagedHeader + good_rows(4) + "Cut,Add,AI_CORE,1780000000000999.5";
  std::vector<KernelRow> rows;
  const auto info = read_kernel_table_text("mem.csv", text,
                                           [&](const KernelRow& k) { rows.push_back(k); });
  CHECK(rows.size() == 4);
  CHECK(info.broken_rows == 1);
  REQUIRE(info.truncated.has_value());
  CHECK_THAT(*info.truncated, Catch::StartsWith("mem.csv:6: error: the row has 4 fields"));
  CHECK_THROWS_AS(read_kernel_table_text("", "", [](const KernelRow&) {}), InputError);
}

TEST_CASE("the analysis header says how much was skipped", "[damaged][advisor]") {
  const std::string f = data_dir() + "/bad/profile_nonnumeric_duration.csv";
  const auto disc = discover_profiles(f);
  const Report r = analyze(disc.profiles.front(), AnalyzeOptions{});
  CHECK(r.ops == 1);
  REQUIRE(r.layouts.size() == 1);
  CHECK_THAT(r.layouts[0], Catch::Contains("1 of 2 rows skipped as malformed"));
  const std::string text = render_text({r});
  CHECK_THAT(text, Catch::Contains("1 of 2 rows skipped as malformed"));
  const auto strict = discover_profiles(f, ReadOptions{true});
  CHECK_THROWS_AS(analyze(strict.profiles.front(), AnalyzeOptions{}), InputError);
}

TEST_CASE("a block dim beyond any chip skips its row instead of narrowing", "[damaged]") {
  // A block dim used to be narrowed from int64 to int unchecked: 4294967297 damaged_read as 1.
  const std::string text =
      "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Block Dim\n"
      "A,Add,AI_VECTOR_CORE,1780000000000100.5,2.0,40\n"
      "B,Add,AI_VECTOR_CORE,1780000000000101.5,2.0,4294967297\n"
      "C,Add,AI_VECTOR_CORE,1780000000000102.5,2.0,48\n";
  std::vector<KernelRow> rows;
  const auto info = read_kernel_table_text("mem.csv", text,
                                           [&](const KernelRow& k) { rows.push_back(k); });
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].block_dim == 40);
  CHECK(rows[1].block_dim == 48);
  REQUIRE(info.broken_row_messages.size() == 1);
  CHECK(info.broken_row_messages[0] ==
        "mem.csv:3:6: error: column 'Block Dim': expected a block count in [0, 1048576], got "
        "4294967297 (row skipped)");
}
