// Golden end-to-end outputs of the bundled scenarios (CONVENTIONS.md "Tests"): integers compared
// exactly, doubles within a relative 1e-4 (the JSON rounds them to 6 significant digits, so a
// last-digit flip from a different compiler or sanitizer build stays inside it).
// Regenerate after an intended change with
//   NPUSIM_UPDATE_GOLDEN=1 build/<dir>/tests/npusim_sim_tests "[golden]"
// and review the diff of tests/data/scenarios/golden/ like code.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/card_sim.h"
#include "sim/report.h"
#include "sim/scenario.h"
#include "sim_test_util.h"

namespace {

void compare(const nlohmann::json& want, const nlohmann::json& got, const std::string& path) {
  INFO(path);
  REQUIRE(want.type() == got.type());
  if (want.is_object()) {
    REQUIRE(want.size() == got.size());
    for (auto it = want.begin(); it != want.end(); ++it) {
      REQUIRE(got.contains(it.key()));
      compare(it.value(), got[it.key()], path + "." + it.key());
    }
  } else if (want.is_array()) {
    REQUIRE(want.size() == got.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      compare(want[i], got[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (want.is_number_float()) {
    const double w = want.get<double>();
    const double g = got.get<double>();
    CHECK(std::fabs(w - g) <= 1e-4 * std::max(std::fabs(w), 1e-12));
  } else {
    CHECK(want == got);
  }
}

void golden(const std::string& scenario, const std::vector<std::string>& sets) {
  const auto file = std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / (scenario + ".toml");
  const npusim::sim::Scenario s = npusim::sim::load_scenario(file, sets);
  const std::string got =
      npusim::sim::result_to_json(npusim::sim::simulate(s, npusim::test::chip(s.info.hw)));
  const auto golden_file = npusim::test::data("scenarios/golden/" + scenario + ".json");
  const char* update = std::getenv("NPUSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_file, std::ios::binary | std::ios::trunc) << got;
    WARN("rewrote " << golden_file.string());
    return;
  }
  std::ifstream in(golden_file, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream want;
  want << in.rdbuf();
  compare(nlohmann::json::parse(want.str()), nlohmann::json::parse(got), scenario);
}

}  // namespace

// Shortened runs (the full ones are the benchmark's job) so the sanitizer build stays quick.
TEST_CASE("the default scenario reproduces its golden output", "[golden]") {
  golden("default", {"workload.requests=3000", "workload.warmup_requests=200"});
}

TEST_CASE("the M/D/c validation scenario reproduces its golden output", "[golden]") {
  golden("mdc_validation", {"workload.requests=3000", "workload.warmup_requests=200"});
}
