#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using npusim::test::run_cli;

namespace {
const std::string kSimSrc = NPUSIM_SOURCE_DIR;
const std::string kSimData = NPUSIM_TEST_DATA_DIR;
}  // namespace

TEST_CASE("simulate --json prints the documented keys", "[cli][simulate]") {
  const auto r = run_cli("simulate " + kSimSrc +
                         "/scenarios/mdc_validation.toml --set workload.requests=2000 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"requests", "qps", "throughput", "latency_ms", "utilization", "cards_needed"}) {
    CHECK(j.contains(key));
  }
  for (const char* key : {"mean", "p50", "p90", "p99", "p999"})
    CHECK(j["latency_ms"].contains(key));
  CHECK(j["utilization"].contains("cube"));
  CHECK(j["utilization"].contains("vector"));
  CHECK(j["requests"] == 2000);
  CHECK(j["cards_needed"].is_number_integer());
}

TEST_CASE("simulate finds a bundled scenario by name and prints a short summary",
          "[cli][simulate]") {
  const auto r =
      run_cli("simulate default --set workload.requests=500 --set workload.warmup_requests=50");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Catch::Contains("QPS") && Catch::Contains("p99") && Catch::Contains("utilisation"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') <= 12);
}

TEST_CASE("simulate --trace writes Chrome-trace JSON", "[cli][simulate]") {
  const auto trace = std::filesystem::temp_directory_path() / "npusim_cli_sim_trace.json";
  std::filesystem::remove(trace);
  const auto r = run_cli("simulate " + kSimData + "/scenarios/split.toml --trace " + trace.string());
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(npusim::test::read_all(trace));
  CHECK(j["traceEvents"].size() > 3);
  std::filesystem::remove(trace);
}

TEST_CASE("a bad --set exits 2 at the command line and writes no trace", "[cli][simulate]") {
  const auto trace = std::filesystem::temp_directory_path() / "npusim_cli_sim_no_trace.json";
  std::filesystem::remove(trace);
  const auto r =
      run_cli("simulate default --set deployment.streams=zero --trace " + trace.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("<command line>: error: --set 'deployment.streams=zero'"));
  CHECK_FALSE(std::filesystem::exists(trace));
}

TEST_CASE("a bad scenario exits 2 with its file:line diagnostic", "[cli][simulate]") {
  const auto r = run_cli("simulate " + kSimData + "/bad/scenario_unknown_key.toml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("scenario_unknown_key.toml:14:1: error:") &&
                        Catch::Contains("unknown key 'streamz'"));
  CHECK(r.out.empty());
}

TEST_CASE("validate recognises scenarios and graphs", "[cli][validate]") {
  const auto r = run_cli("validate " + kSimSrc + "/scenarios/default.toml " + kSimData +
                         "/scenarios/host_bound_graph.toml");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("(scenario rec_coarse_ranking: 19 ops on ascend910b3") &&
                        Catch::Contains("(graph '20 tiny ops': 20 ops"));
  const auto bad = run_cli("validate " + kSimData + "/bad/scenario_core_limit_too_big.toml");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("scenario_core_limit_too_big.toml:15:25: error:"));
  const auto cyc = run_cli("validate " + kSimData + "/bad/graph_cycle.toml");
  CHECK(cyc.exit_code == 2);
  CHECK_THAT(cyc.err, Catch::Contains("graph_cycle.toml:8:9: error:"));
}
