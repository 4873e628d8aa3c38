// `npusim whatif` and `npusim analyze --estimate` end to end through the binary.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/app/cli_runner.h"

using npusim::test::read_all;
using npusim::test::run_cli;

namespace {

namespace fs = std::filesystem;

const std::string kSrc = NPUSIM_SOURCE_DIR;
// The default scenario, shortened so each simulation takes milliseconds.
const std::string kDefault = kSrc +
                             "/scenarios/default.toml --set workload.requests=2000 "
                             "--set workload.warmup_requests=200";

}  // namespace

TEST_CASE("whatif on the default scenario lists every pass its graph has, and all together",
          "[cli][whatif]") {
  const auto r = run_cli("whatif " + kDefault);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* pass : {"drop_redundant_tile", "tile_concat", "fold_bmm_batch", "int64_narrow",
                           "topk_valid_length", "fuse_masked_gather", "aicpu_to_host"}) {
    CHECK(r.out.find(pass) != std::string::npos);
  }
  CHECK(r.out.find("baseline") != std::string::npos);
  CHECK(r.out.find("\nall ") != std::string::npos);
  // The ops each change names.
  CHECK(r.out.find("'w_tile'") != std::string::npos);
  CHECK(r.out.find("'seq_clean'") != std::string::npos);
  CHECK(r.out.find("'feat_bucket'") != std::string::npos);
}

TEST_CASE("whatif --json has the documented keys and ranks passes by QPS gain", "[cli][whatif]") {
  const auto r = run_cli("whatif " + kDefault + " --json --waterfall");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"scenario", "reference_gear", "target_p99_ms", "baseline", "passes",
                          "all", "not_applicable", "waterfall"}) {
    CHECK(j.contains(key));
  }
  REQUIRE(j["passes"].is_array());
  REQUIRE(j["passes"].size() == 7);
  double last = 1e300;
  for (const auto& p : j["passes"]) {
    for (const char* key : {"name", "with", "ops", "changes", "latency_ms", "qps_at_target",
                            "latency_gain", "qps_gain", "device_us_per_batch", "p99_ms"}) {
      CHECK(p.contains(key));
    }
    CHECK(p["qps_gain"].get<double>() <= last);
    last = p["qps_gain"].get<double>();
    CHECK(p["qps_gain"].get<double>() ==
          Approx(p["qps_at_target"].get<double>() / j["baseline"]["qps_at_target"].get<double>() -
                 1));
  }
  // fold_bmm_batch needs the Tile gone first: its row says so.
  for (const auto& p : j["passes"]) {
    if (p["name"] == "fold_bmm_batch") {
      CHECK(p["with"] == nlohmann::json::array({"drop_redundant_tile"}));
    }
  }
  CHECK(j["all"]["with"].size() == 7);
  CHECK(j["all"]["qps_at_target"].get<double>() > j["baseline"]["qps_at_target"].get<double>());

  // --waterfall: step k adds the k-th ranked pass to the ones before it; the first step is the
  // first pass's row, the last is `all`.
  const auto& w = j["waterfall"];
  const auto& passes = j["passes"];
  REQUIRE(w.size() == passes.size());
  CHECK(w.front()["qps_at_target"] == passes.front()["qps_at_target"]);
  CHECK(w.front()["latency_ms"] == passes.front()["latency_ms"]);
  CHECK(w.back()["with"] == j["all"]["with"]);
  CHECK(w.back()["qps_at_target"] == j["all"]["qps_at_target"]);
  CHECK(w.back()["latency_ms"] == j["all"]["latency_ms"]);
  std::vector<std::string> prefix;
  for (std::size_t k = 0; k < w.size(); ++k) {
    INFO("step " << k);
    CHECK(w[k]["name"] == passes[k]["name"]);
    prefix.push_back(passes[k]["name"].get<std::string>());
    if (k == 0) continue;
    // Every pass the step applies is one of the first k+1, and each of those that applies
    // alone is applied; the gains are against the baseline.
    for (const auto& name : w[k]["with"]) {
      CHECK(std::find(prefix.begin(), prefix.end(), name.get<std::string>()) != prefix.end());
    }
    for (std::size_t i = 0; i <= k; ++i) {
      if (!passes[i]["with"].empty()) continue;
      const auto& with = w[k]["with"];
      CHECK(std::find(with.begin(), with.end(), passes[i]["name"]) != with.end());
    }
    CHECK(w[k]["qps_gain"].get<double>() ==
          Approx(w[k]["qps_at_target"].get<double>() / j["baseline"]["qps_at_target"].get<double>() -
                 1));
    CHECK(w[k]["simulations"].get<int>() > 1);
  }
}

TEST_CASE("whatif --emit writes a graph that validate and a scenario accept", "[cli][whatif]") {
  const fs::path dir = fs::temp_directory_path() / ("npusim_whatif_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path graph = dir / "rewritten.toml";
  const auto r = run_cli("whatif " + kDefault + " --pass drop_redundant_tile --pass tile_concat " +
                         "--emit '" + graph.string() + "'");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = read_all(graph);
  CHECK(text.find("name = \"w_tile\"") == std::string::npos);  // the Tile is gone
  CHECK(text.find("type = \"Tile\"") != std::string::npos);    // the Concat became one
  const auto v = run_cli("validate '" + graph.string() + "'");
  INFO(v.out << v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("graph 'rec coarse ranking': 18 ops") != std::string::npos);

  // A scenario running the emitted graph: the same passes then find nothing to do.
  std::string sc = read_all(kSrc + "/scenarios/default.toml");
  const std::size_t from = sc.find("[graph]");
  const std::size_t to = sc.find("[deployment]");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  sc.replace(from, to - from, "[graph]\nfile = \"" + graph.string() + "\"\n\n");
  std::ofstream(dir / "scenario.toml") << sc;
  const auto again = run_cli("whatif '" + (dir / "scenario.toml").string() +
                             "' --set workload.requests=500 --pass drop_redundant_tile --pass "
                             "tile_concat");
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("no pass applies") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("whatif refuses an unknown pass and lists the valid ones", "[cli][whatif]") {
  const auto r = run_cli("whatif " + kDefault + " --pass drop_tile");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown pass 'drop_tile'") != std::string::npos);
  CHECK(r.err.find("fuse_masked_gather") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("whatif refuses --assume-fits for an op the graph does not have", "[cli][whatif]") {
  const auto r = run_cli("whatif " + kDefault + " --assume-fits no_such_op");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--assume-fits no_such_op") != std::string::npos);
}

TEST_CASE("whatif on a graph with nothing to rewrite says so and succeeds", "[cli][whatif]") {
  const fs::path dir =
      fs::temp_directory_path() / ("npusim_whatif_none_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "plain.toml") << R"(
[scenario]
name = "plain"
hw = "ascend910b3"

[graph]
[[graph.op]]
name = "mm"
type = "MatMulV2"
shapes = "B,256;256,64"
dtypes = "FLOAT16"
[[graph.op]]
name = "act"
type = "Relu"
shapes = "B,64"
dtypes = "FLOAT16"

[deployment]
streams = 1
gears = [1, 8]

[workload]
arrival = "poisson"
rate_qps = 2000
requests = 500
batch_size = 1

[target]
p99_ms = 0.5  # 500 requests of this graph meet 5 ms even arriving all at once: no capacity
)";
  const auto r = run_cli("whatif '" + (dir / "plain.toml").string() + "'");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("no pass applies") != std::string::npos);
  const auto j = run_cli("whatif '" + (dir / "plain.toml").string() + "' --json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["passes"].empty());
  CHECK(doc["all"].is_null());
  CHECK(doc["not_applicable"].size() == 7);
  fs::remove_all(dir);
}

TEST_CASE("analyze --estimate ranks findings by the predicted gain of their remedy",
          "[cli][whatif][analyze]") {
  const fs::path md =
      fs::temp_directory_path() / ("npusim_estimate_" + std::to_string(::getpid()) + ".md");
  const std::string args = "analyze " + std::string(NPUSIM_TEST_DATA_DIR) +
                           "/profiles/msprof_crafted --estimate " + kDefault + " --json --md '" +
                           md.string() + "'";
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("estimate_basis"));
  CHECK(j["estimate_basis"]["scenario"] == "rec_coarse_ranking");
  CHECK(j["estimate_basis"]["baseline_qps_at_target"].get<double>() > 0);
  const auto& f = j["findings"];
  REQUIRE(f.size() >= 5);
  // The AI CPU finding maps to the passes that take the AI CPU op off the device.
  bool seen_aicpu = false;
  bool seen_none = false;
  double last_gain = 1e300;
  for (const auto& x : f) {
    REQUIRE(x.contains("estimate"));
    if (x["estimate"].is_null()) {
      seen_none = true;
      continue;
    }
    CHECK_FALSE(seen_none);  // every estimated finding ranks above the ones without
    const double g = x["estimate"]["qps_gain"].get<double>();
    CHECK(g <= last_gain);
    last_gain = g;
    if (x["check"] == "aicpu") {
      seen_aicpu = true;
      const std::string via = x["estimate"]["via"].get<std::string>();
      CHECK((via == "fuse_masked_gather" || via == "aicpu_to_host" || via == "int64_narrow"));
    }
    if (x["check"] == "idle_gaps") CHECK(x["estimate"]["kind"] == "setting");
  }
  CHECK(seen_aicpu);
  CHECK(seen_none);  // PCIe has no remedy the simulator can price
  for (const auto& x : f) {
    if (x["check"] == "pcie") CHECK(x["estimate"].is_null());
  }
  const std::string report = read_all(md);
  CHECK(report.find("## Findings ranked by predicted gain on rec_coarse_ranking") !=
        std::string::npos);
  CHECK(report.find("no estimate") != std::string::npos);
  fs::remove(md);
}

TEST_CASE("whatif gives the same numbers with one thread and with two", "[cli][whatif]") {
  const std::string args = "whatif " + kSrc +
                           "/scenarios/default.toml --set workload.requests=500 --set "
                           "workload.warmup_requests=50 --pass drop_redundant_tile --pass "
                           "fuse_masked_gather --json --jobs ";
  const auto one = run_cli(args + "1");
  const auto two = run_cli(args + "2");
  INFO(one.err << two.err);
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(one.out == two.out);
}
