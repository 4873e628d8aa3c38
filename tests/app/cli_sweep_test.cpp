// `npusim sweep`, `npusim merge` (and `npusim compare`) end to end through the binary.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/app/cli_runner.h"

using npusim::test::read_all;
using npusim::test::run_cli;

namespace {

namespace fs = std::filesystem;

// A small scenario (one fixed-duration op, 1000 requests) so each point runs in milliseconds.
const char* kSmall = R"(
[scenario]
name = "cli_sweep"
hw = "ascend910b3"
seed = 5

[graph]
[[graph.op]]
name = "fixed"
type = "Add"
shapes = "B,1024;B,1024"
dtypes = "FLOAT16"
duration_us = 80.0

[deployment]
streams = 1
gears = [1, 4]
batch_window_us = 20

[workload]
arrival = "poisson"
rate_qps = 5000
requests = 1000
batch_size = { 1 = 0.5, 4 = 0.5 }

[target]
p99_ms = 1.5
traffic_qps = 30000
)";

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("npusim_cli_sweep_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

fs::path small_scenario() {
  const fs::path p = temp_dir() / "small.toml";
  std::ofstream(p, std::ios::binary | std::ios::trunc) << kSmall;
  return p;
}

std::string sweep_args() {
  return "sweep '" + small_scenario().string() +
         "' --vary deployment.streams=1..3 --vary deployment.vector_cores_per_stream=10,20";
}

}  // namespace

TEST_CASE("sweep prints the table, the front, skipped points, the best point and fewest cards",
          "[cli][sweep]") {
  const auto r = run_cli(sweep_args());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("6 point(s), 5 simulated, 1 skipped") != std::string::npos);
  CHECK(r.out.find("deployment.streams") != std::string::npos);
  CHECK(r.out.find("* = on the Pareto front") != std::string::npos);
  CHECK(r.out.find("3 streams x 20 vector cores = 60 > the chip's 40") != std::string::npos);
  CHECK(r.out.find("best under P99 <= 1.5 ms: deployment.streams=") != std::string::npos);
  CHECK(r.out.find("over the scenario's own configuration") != std::string::npos);
  CHECK(r.out.find("fewest cards for 30000 QPS") != std::string::npos);
  CHECK(r.err.empty());  // not a terminal: no progress line
}

TEST_CASE("sweep writes CSV and JSON files and the same numbers with any --jobs", "[cli][sweep]") {
  const fs::path d = temp_dir();
  const auto one = run_cli(sweep_args() + " --jobs 1 --csv '" + (d / "a.csv").string() + "' -o '" +
                           (d / "a.json").string() + "'");
  const auto two = run_cli(sweep_args() + " --jobs 2 --csv '" + (d / "b.csv").string() + "' -o '" +
                           (d / "b.json").string() + "'");
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(one.out == two.out);
  CHECK(read_all(d / "a.csv") == read_all(d / "b.csv"));
  CHECK(read_all(d / "a.json") == read_all(d / "b.json"));
  const std::string csv = read_all(d / "a.csv");
  CHECK(csv.rfind("index,deployment.streams,deployment.vector_cores_per_stream,feasible,qps,", 0) ==
        0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);  // header + 6 points
}

TEST_CASE("merge of --shard runs gives the table and JSON of one run", "[cli][sweep]") {
  const fs::path d = temp_dir();
  const auto whole = run_cli(sweep_args() + " --json");
  REQUIRE(whole.exit_code == 0);
  std::string files;
  for (int k = 0; k < 4; ++k) {
    const fs::path f = d / ("shard" + std::to_string(k) + ".json");
    REQUIRE(run_cli(sweep_args() + " --shard " + std::to_string(k) + "/4 -o '" + f.string() + "'")
                .exit_code == 0);
    files += " '" + f.string() + "'";
  }
  const auto merged = run_cli("merge" + files + " --json");
  INFO(merged.err);
  REQUIRE(merged.exit_code == 0);
  CHECK(merged.out == whole.out);
  const auto table = run_cli("merge" + files);
  CHECK(table.out == run_cli(sweep_args()).out);

  const auto missing = run_cli("merge '" + (d / "shard0.json").string() + "'");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("missing shard(s) 1/4, 2/4, 3/4") != std::string::npos);
}

TEST_CASE("sweep rejects bad --vary, --shard and merge input with exit code 2", "[cli][sweep]") {
  const std::string sc = "'" + small_scenario().string() + "'";
  auto r = run_cli("sweep " + sc + " --vary deployment.streams=4..1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("<command line>: error: --vary 'deployment.streams=4..1'") != std::string::npos);
  CHECK(r.err.find("the end is below the start") != std::string::npos);
  r = run_cli("sweep " + sc + " --vary deployment.nope=1");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown key 'deployment.nope'") != std::string::npos);
  r = run_cli("sweep " + sc + " --vary deployment.streams=1 --shard 3/3");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--shard '3/3'") != std::string::npos);
  const fs::path bad = temp_dir() / "bad.json";
  std::ofstream(bad) << "[1, 2]";
  r = run_cli("merge '" + bad.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.json: error: not a sweep result") != std::string::npos);
}

TEST_CASE("compare shows the scenario as it is and changed, side by side and per op",
          "[cli][compare]") {
  const std::string sc = "'" + small_scenario().string() + "'";
  const auto r = run_cli("compare " + sc + " --set deployment.streams=2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("as it is | with deployment.streams=2") != std::string::npos);
  CHECK(r.out.find("latency P99 ms") != std::string::npos);
  CHECK(r.out.find("vector core-us / request") != std::string::npos);
  CHECK(r.out.find("cards needed") != std::string::npos);
  // The fixed-duration op keeps its 80 us and its one core: time and core-time unchanged.
  CHECK(r.out.find("fixed                   80.00      80.00   x1.00      1      1") !=
        std::string::npos);

  const auto j = run_cli("compare " + sc + " --set deployment.streams=2 --json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"latency_p99_ms\"") != std::string::npos);
  CHECK(j.out.find("\"core_time_us\": 80.0") != std::string::npos);

  const auto m = run_cli("compare " + sc + " --set deployment.streams=2 --find-max-qps");
  REQUIRE(m.exit_code == 0);
  CHECK(m.out.find("max QPS under P99 target") != std::string::npos);

  const auto none = run_cli("compare " + sc);
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("--set") != std::string::npos);
}

TEST_CASE("sweep --find-max-qps adds the max QPS column and refuses a closed loop",
          "[cli][sweep]") {
  const std::string sc = "'" + small_scenario().string() + "'";
  const auto r = run_cli("sweep " + sc + " --vary deployment.streams=1,2 --find-max-qps");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("max QPS") != std::string::npos);
  CHECK(r.out.find("best under P99 <= 1.5 ms: deployment.streams=2") != std::string::npos);
  const auto closed = run_cli("sweep " + sc +
                              " --set workload.arrival=closed --set workload.concurrency=4"
                              " --vary deployment.streams=1,2 --find-max-qps");
  CHECK(closed.exit_code == 2);
  CHECK(closed.err.find("must be \"poisson\"") != std::string::npos);
}
