// npusim analyze and npusim graph from-profile, end to end through the built binary.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profile/readers.h"
#include "tests/app/cli_runner.h"
#include "tests/profile/db_fixture.h"

using npusim::test::run_cli;

namespace {

const std::string kData = NPUSIM_TEST_DATA_DIR;
const std::string kCrafted = kData + "/profiles/msprof_crafted";

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("npusim_cli_profile_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_CASE("analyze prints a short report ranked by time at stake", "[cli][analyze]") {
  const auto r = run_cli("analyze '" + kCrafted + "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("12 compute ops") && Catch::Contains("1. [high]") &&
                        Catch::Contains("try:"));
  CHECK_THAT(r.err, Catch::Contains("read 1 profile(s)"));
}

TEST_CASE("analyze --json is complete and parses", "[cli][analyze]") {
  const auto r = run_cli("analyze --json '" + kCrafted + "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ops"] == 12);
  CHECK(j["total_time_us"].get<double>() == Approx(1615));
  CHECK(j["findings"][0]["check"] == "op_type_share");
  // No --hw: cores and clock inferred from the cycle columns, bandwidth from the default chip.
  CHECK(j["utilization"][0]["cube_cores"] == 20);
  CHECK(j["utilization"][0]["freq_mhz"].get<double>() == 1000);
}

TEST_CASE("analyze --hw uses the named chip's cores and clock", "[cli][analyze]") {
  const auto r = run_cli("analyze --json --hw ascend910b3 '" + kCrafted + "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["utilization"][0]["chip_source"] == "--hw ascend910b3");
  // The crafted profile's cycle columns say 1000 MHz; the named chip's clock wins.
  CHECK(j["utilization"][0]["freq_mhz"].get<double>() != 1000);
}

TEST_CASE("analyze --md writes a Markdown report", "[cli][analyze]") {
  const auto md = temp_file("report.md");
  const auto r = run_cli("analyze '" + kCrafted + "' --md '" + md.string() + "'");
  REQUIRE(r.exit_code == 0);
  const std::string text = npusim::test::read_all(md);
  CHECK_THAT(text, Catch::StartsWith("# npusim analyze") && Catch::Contains("### Findings"));
  std::filesystem::remove(md);
}

TEST_CASE("analyze reads a folder of ranks, one report each", "[cli][analyze]") {
  const auto r = run_cli("analyze --json '" + kData + "/profiles/torch_cann83'");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["profiles"].size() == 2);
  CHECK(j["profiles"][0]["name"] == "rank_0_ascend_pt");
  CHECK(j["profiles"][0]["cann_version"] == "8.3.RC1");
}

TEST_CASE("analyze on a bad row skips it and says so in the header", "[cli][analyze]") {
  const std::string bad = kData + "/bad/profile_nonnumeric_duration.csv";
  const auto r = run_cli("analyze '" + bad + "'");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1 of 2 rows skipped as malformed"));
  CHECK_THAT(r.out, Catch::Contains("1 compute ops"));
}

TEST_CASE("analyze --strict on a bad file exits 2 with the file:line message", "[cli][analyze]") {
  const std::string bad = kData + "/bad/profile_nonnumeric_duration.csv";
  const auto r = run_cli("analyze --strict '" + bad + "'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(bad + ":3:5: error: column 'Task Duration(us)': expected a "
                                          "number, got 'abc'"));
  CHECK(r.out.empty());
}

TEST_CASE("analyze on a missing path exits 2", "[cli][analyze]") {
  const auto r = run_cli("analyze /nonexistent/PROF_1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent/PROF_1: error: no such file or folder"));
}

TEST_CASE("graph from-profile writes a graph TOML of one step", "[cli][graph]") {
  const auto out = temp_file("graph.toml");
  const auto r = run_cli("graph from-profile '" + kData +
                         "/profiles/torch_cann83/rank_0_ascend_pt' --step 12 -o '" + out.string() +
                         "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string toml = npusim::test::read_all(out);
  CHECK_THAT(toml, Catch::Contains("[graph]") && Catch::Contains("[[graph.op]]") &&
                       Catch::Contains("type = \"MatMulV3\"") &&
                       Catch::Contains("# dropped: 1 communication tasks"));
  CHECK_THAT(r.err, Catch::Contains("2 ops of step 12"));
  std::filesystem::remove(out);
}

TEST_CASE("graph from-profile on several ranks asks for one, and writes nothing", "[cli][graph]") {
  const auto out = temp_file("none.toml");
  const auto r = run_cli("graph from-profile '" + kData + "/profiles/torch_cann83' -o '" +
                         out.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("holds 2 profiles"));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("analyze on a file with the wrong delimiter says so", "[cli][analyze]") {
  const std::string bad = kData + "/bad/profile_semicolon.csv";
  const auto r = run_cli("analyze '" + bad + "'");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(bad + ":1: error: wrong delimiter"));
}

TEST_CASE("analyze, accuracy and graph from-profile accept a folder holding only a .db",
          "[cli][db]") {
  // The crafted msprof op_summary written into a torch_npu database by the test fixture.
  std::vector<npusim::profile::KernelRow> rows;
  (void)npusim::profile::read_kernel_table(
      kCrafted + "/PROF_000001_20260101000000000_CRAFTED/mindstudio_profiler_output/"
                 "op_summary_20260101000000.csv",
      [&](const npusim::profile::KernelRow& r) { rows.push_back(r); });
  const auto dir = temp_file("db") / "rank0_ascend_pt" / "ASCEND_PROFILER_OUTPUT";
  std::filesystem::create_directories(dir);
  npusim::test::DbWriter(dir / "ascend_pytorch_profiler_0.db").write(rows, {});
  const std::string folder = temp_file("db").string();

  const auto a = run_cli("analyze '" + folder + "'");
  INFO(a.err);
  CHECK(a.exit_code == 0);
  CHECK_THAT(a.out, Catch::Contains("read: ascend_pytorch_profiler_0.db"));
  CHECK_THAT(a.out, Catch::Contains("layout: torch_npu profiler database (schema 1.0.0)"));

  const auto acc = run_cli("accuracy --hw ascend910b3 '" + folder + "'");
  INFO(acc.err);
  CHECK(acc.exit_code == 0);
  CHECK_THAT(acc.out, Catch::Contains("used rank0_ascend_pt (db): "));

  const auto out = temp_file("db_graph.toml");
  const auto g = run_cli("graph from-profile '" + folder + "' -o '" + out.string() + "'");
  INFO(g.err);
  CHECK(g.exit_code == 0);
  CHECK(std::filesystem::exists(out));
  std::filesystem::remove(out);
  std::filesystem::remove_all(folder);
}

TEST_CASE("a MindSpore folder is read by analyze, accuracy and graph from-profile",
          "[cli][mindspore]") {
  const std::string ms = kData + "/profiles/mindspore_crafted";
  const auto a = run_cli("analyze '" + ms + "'");
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK_THAT(a.out, Catch::Contains("6 compute ops") && Catch::Contains("MindSpore op_info table"));
  const auto acc = run_cli("accuracy '" + ms + "' --hw auto --json");
  INFO(acc.err);
  REQUIRE(acc.exit_code == 0);
  const auto j = nlohmann::json::parse(acc.out);
  CHECK(j["chip"] == "ascend910");
  CHECK(j["overall"]["rows"] == 6);
  CHECK(j["chip_note"].get<std::string>().find("nominal clock 1000 MHz") != std::string::npos);
  const auto out = temp_file("ms_graph.toml");
  const auto g = run_cli("graph from-profile '" + ms + "' -o '" + out.string() + "'");
  INFO(g.err);
  CHECK(g.exit_code == 0);
  CHECK(std::filesystem::exists(out));
  std::filesystem::remove(out);
}

TEST_CASE("accuracy reads a profile reached from two of its paths once", "[cli][accuracy]") {
  // Given twice, or as a folder and a folder inside it, its rows counted twice before.
  const std::string ranks = kData + "/profiles/torch_cann83";
  const auto one = run_cli("accuracy '" + ranks + "' --hw ascend910b3 --json");
  const auto twice = run_cli("accuracy '" + ranks + "' '" + ranks +
                             "/rank_0_ascend_pt' --hw ascend910b3 --json");
  INFO(twice.err);
  REQUIRE(one.exit_code == 0);
  REQUIRE(twice.exit_code == 0);
  CHECK(nlohmann::json::parse(twice.out)["overall"]["rows"] ==
        nlohmann::json::parse(one.out)["overall"]["rows"]);
  CHECK_THAT(nlohmann::json::parse(twice.out)["notes"].dump(),
             Catch::Contains("rank_0_ascend_pt") &&
                 Catch::Contains("was already read from an earlier path; read once"));
}
