// Anchoring end to end through the built binary: graph from-profile records where its durations
// were measured, simulate says which ops ran measured, anchored or predicted, and accuracy
// --anchor-from compares anchored with plain predictions of unseen shapes (docs/accuracy.md).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using npusim::test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kAnchorData = NPUSIM_TEST_DATA_DIR;

fs::path anchor_temp_dir() {
  static int n = 0;
  const fs::path d = fs::temp_directory_path() /
                     ("npusim_cli_anchor_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("a profile's graph runs measured on its chip and anchored on another",
          "[cli][anchor]") {
  const fs::path d = anchor_temp_dir();
  const auto g = run_cli("graph from-profile '" + kAnchorData +
                         "/profiles/torch_cann83/rank_0_ascend_pt' --step 12 --hw ascend910b3 -o '" +
                         (d / "graph.toml").string() + "'");
  INFO(g.err);
  REQUIRE(g.exit_code == 0);
  CHECK_THAT(npusim::test::read_all(d / "graph.toml"),
             Catch::Contains("[graph.measured]\nhw = \"ascend910b3\""));
  std::ofstream(d / "s.toml") << R"([scenario]
hw = "ascend910b3"
[graph]
file = "graph.toml"
[deployment]
streams = 1
gears = [1]
[workload]
arrival = "closed"
concurrency = 1
requests = 10
batch_size = 1
)";
  const std::string sim = "simulate '" + (d / "s.toml").string() + "' ";
  SECTION("on the chip it was measured on: every op measured") {
    const auto r = run_cli(sim + "--json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["time_sources"]["ops"]["measured"] == 2);
    CHECK(j["time_sources"]["ops"]["anchored"] == 0);
    CHECK(j["time_sources"]["ops"]["predicted"] == 0);
    CHECK(j["time_sources"]["executions"]["measured"] == 20);
    CHECK(j["ops"][0]["mean_us"].get<double>() == Approx(100.5));  // the MatMulV3 as measured
  }
  SECTION("on another chip: every op anchored, said in the text summary") {
    const auto r = run_cli(sim + "--set scenario.hw=ascend910b4");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("op times: 0 measured, 2 anchored, 0 predicted"));
    const auto j = nlohmann::json::parse(run_cli(sim + "--set scenario.hw=ascend910b4 --json").out);
    CHECK(j["time_sources"]["executions"]["anchored"] == 20);
    CHECK(j["ops"][0]["source"] == "anchored");
    CHECK(j["ops"][0]["mean_us"].get<double>() != Approx(100.5));
  }
  SECTION("with a cube core limit: the MatMul anchored, the vector Add still measured") {
    const auto j = nlohmann::json::parse(
        run_cli(sim + "--set deployment.cube_cores_per_stream=10 --json").out);
    CHECK(j["time_sources"]["ops"]["anchored"] == 1);
    CHECK(j["time_sources"]["ops"]["measured"] == 1);
    CHECK(j["ops"][0]["source"] == "anchored");
    CHECK(j["ops"][0]["mean_us"].get<double>() > 100.5);  // 10 of 20 cube cores: slower
  }
  SECTION("compare and sweep over chips anchor the other chip too") {
    const auto c = run_cli("compare '" + (d / "s.toml").string() +
                           "' --set scenario.hw=ascend910b4 --json");
    INFO(c.err);
    REQUIRE(c.exit_code == 0);
    const auto s = run_cli("sweep '" + (d / "s.toml").string() +
                           "' --vary scenario.hw=ascend910b3,ascend910b4 --jobs 1");
    INFO(s.err);
    CHECK(s.exit_code == 0);
    CHECK_THAT(s.out, Catch::Contains("ascend910b4"));
  }
  SECTION("measured on an unknown chip: an error at [graph.measured]") {
    std::string text = npusim::test::read_all(d / "graph.toml");
    text.replace(text.find("hw = \"ascend910b3\""), 18, "hw = \"ascend999\"");
    std::ofstream(d / "graph.toml", std::ios::trunc) << text;
    const auto r = run_cli(sim + "--set scenario.hw=ascend910b4");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("graph.toml:12:") && Catch::Contains("[graph.measured].hw") &&
                          Catch::Contains("ascend999"));
  }
  fs::remove_all(d);
}

TEST_CASE("accuracy --anchor-from compares anchored and plain predictions of unseen shapes",
          "[cli][anchor][real]") {
  const fs::path level2 =
      fs::path(NPUSIM_SHARED_PROFILES_DIR) / "Ascend_msinsight" / "test" / "st" / "level2";
  if (!fs::exists(level2 / "rank_0_ascend_pt") || !fs::exists(level2 / "rank_2_ascend_pt")) {
    WARN("skipped: ../shared/profiles is absent (a fresh clone); nothing to guard");
    return;
  }
  // The figures of docs/accuracy.md "Anchoring on measured shapes".
  const auto r = run_cli("accuracy '" + (level2 / "rank_2_ascend_pt").string() +
                         "' --anchor-from '" + (level2 / "rank_0_ascend_pt").string() + "' --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  INFO(j.dump(1));
  CHECK(j["seen_shapes"].get<int>() + j["no_same_type"].get<int>() + j["compared"].get<int>() ==
        j["target_rows"].get<int>());
  CHECK(j["compared"] == 68);
  CHECK(j["plain"]["rows"] == 68);
  CHECK(j["anchored"]["rows"] == 68);
  // What the page reports: anchoring on any same-type shape halves the median error and the
  // step total but loses on MAPE; on the shapes of the same structure it wins on both.
  CHECK(j["anchored"]["median_ape"].get<double>() < j["plain"]["median_ape"].get<double>());
  CHECK(j["anchored"]["mape"].get<double>() > j["plain"]["mape"].get<double>());
  const auto& same = j["same_structure_rows"];
  CHECK(same["anchored"]["mape"].get<double>() < same["plain"]["mape"].get<double>());
  CHECK(same["anchored"]["median_ape"].get<double>() < same["plain"]["median_ape"].get<double>());
}
