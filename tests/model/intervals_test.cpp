// Prediction intervals: percentiles of measured / predicted on held-out rows, the [intervals]
// tables of an overlay (written, reloaded, rejected when malformed), and which interval an op of
// each family gets.
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/test_util.h"
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/hw_overlay.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;
using npusim::test::chip;

namespace fs = std::filesystem;

namespace {

const fs::path kChip = fs::path(NPUSIM_SOURCE_DIR) / "hw_specs" / "ascend910b3.toml";


// A sample whose measured time is `ratio` times what `hw` predicts for it.
Sample sample_at_ratio(const std::string& type, const std::string& shapes, double ratio,
                       const HwSpec& hw) {
  Sample s;
  s.op = test::op(type, shapes, "FLOAT16");
  s.measured_us = predict_sample(s, hw).predicted_us * ratio;
  return s;
}

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("npusim_intervals_test_" + name);
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p;
}

}  // namespace

TEST_CASE("intervals are the hand-computed percentiles of measured over predicted", "[intervals]") {
  const HwSpec& hw = chip("ascend910b3");
  std::vector<Sample> v;
  // ten elementwise rows at ratios 0.8, 0.9, ..., 1.7
  for (int i = 0; i < 10; ++i) {
    v.push_back(sample_at_ratio("Add", fmt::format("{},1024;{},1024", 16 << i, 16 << i),
                                0.8 + 0.1 * i, hw));
  }
  // three cube rows at ratio 1: too few for a cube interval of their own
  for (int m : {256, 512, 1024}) {
    v.push_back(sample_at_ratio("MatMulV2", fmt::format("{},1024;1024,1024", m), 1.0, hw));
  }
  std::vector<std::size_t> hold(v.size());
  for (std::size_t i = 0; i < hold.size(); ++i) hold[i] = i;
  const auto iv = prediction_intervals(v, hold, hw);
  REQUIRE(iv.size() == 2);
  REQUIRE(iv.count("elementwise") == 1);
  REQUIRE(iv.count("all") == 1);
  CHECK(iv.count("cube") == 0);
  // elementwise, sorted 0.8..1.7: P10 at position 0.9 -> 0.89, P90 at 8.1 -> 1.61
  CHECK(iv.at("elementwise").p10 == Approx(0.89));
  CHECK(iv.at("elementwise").p90 == Approx(1.61));
  CHECK(iv.at("elementwise").rows == 10);
  // all 13: 0.8 0.9 1 1 1 1 1.1 1.2 ... 1.7; P10 at 1.2 -> 0.92, P90 at 10.8 -> 1.58
  CHECK(iv.at("all").p10 == Approx(0.92));
  CHECK(iv.at("all").p90 == Approx(1.58));
  CHECK(iv.at("all").rows == 13);
  // only the held-out indices count, and fewer than the minimum rows give no interval at all
  CHECK(prediction_intervals(v, {0, 1, 2, 3, 4, 5, 6}, hw).empty());
  CHECK(prediction_intervals(v, {0, 1, 2}, hw, 3).at("all").rows == 3);
}

TEST_CASE("rows without a positive measured time are left out of an interval", "[intervals]") {
  const HwSpec& hw = chip("ascend910b3");
  std::vector<Sample> v;
  for (int i = 0; i < 8; ++i) {
    v.push_back(sample_at_ratio("Relu", fmt::format("{},512", 8 << i), 1.0, hw));
  }
  v[3].measured_us = 0;
  const auto iv = prediction_intervals(v, {0, 1, 2, 3, 4, 5, 6, 7}, hw, 7);
  CHECK(iv.at("all").rows == 7);
  CHECK(iv.at("all").p10 == Approx(1.0));
  CHECK(iv.at("all").p90 == Approx(1.0));
}

TEST_CASE("an op takes its family's interval, else the pooled one, else none", "[intervals]") {
  HwSpec hw = chip("ascend910b3");
  CHECK_FALSE(interval_for(hw, OpFamily::kCube).has_value());
  CHECK(interval_factors(hw, IntervalEnd::kP10).empty());
  hw.intervals["cube"] = ErrorInterval{0.8, 1.25, 41};
  CHECK_FALSE(interval_for(hw, OpFamily::kIndex).has_value());
  hw.intervals["all"] = ErrorInterval{0.6, 1.9, 300};
  const auto cube = interval_for(hw, OpFamily::kCube);
  REQUIRE(cube);
  CHECK(cube->source == "cube");
  CHECK(cube->interval.p90 == 1.25);
  CHECK(interval_source_text(*cube) == "holdout of 41 cube rows");
  const auto index = interval_for(hw, OpFamily::kIndex);
  REQUIRE(index);
  CHECK(index->source == "all");
  CHECK(interval_source_text(*index) == "holdout of 300 rows, all families pooled");
  const auto lo = interval_factors(hw, IntervalEnd::kP10);
  const auto hi = interval_factors(hw, IntervalEnd::kP90);
  CHECK(lo.at(OpFamily::kCube) == 0.8);
  CHECK(hi.at(OpFamily::kCube) == 1.25);
  CHECK(lo.at(OpFamily::kElementwise) == 0.6);
  CHECK(hi.at(OpFamily::kGeneric) == 1.9);
  CHECK(hi.at(OpFamily::kAicpu) == 1.9);
}

TEST_CASE("the intervals an overlay writes load back as they were written",
          "[intervals][overlay]") {
  CalibrationResult r;
  r.params = calibration_parameters(chip("ascend910b3"));
  const std::map<std::string, ErrorInterval> written = {{"all", {0.698994, 1.72382, 731}},
                                                        {"cube", {0.711226, 1.09178, 140}},
                                                        {"reduction", {0.953504, 1.04721, 72}}};
  const fs::path p = write_temp(
      "roundtrip.toml",
      overlay_toml(r, {"test"}, {{"chip", "ascend910b3"}}, written, {"from a test holdout"}));
  const HwSpec hw = load_hw_spec(kChip, {p});
  REQUIRE(hw.intervals.size() == written.size());
  for (const auto& [name, e] : written) {
    INFO(name);
    CHECK(hw.intervals.at(name).p10 == Approx(e.p10).epsilon(1e-6));
    CHECK(hw.intervals.at(name).p90 == Approx(e.p90).epsilon(1e-6));
    CHECK(hw.intervals.at(name).rows == e.rows);
  }
  const auto keys = check_hw_overlay(p);
  CHECK(std::find(keys.begin(), keys.end(), "intervals.cube") != keys.end());
}

TEST_CASE(
    "a later overlay's intervals replace earlier ones, and new values without intervals "
    "drop them",
    "[intervals][overlay]") {
  const fs::path a = write_temp("a.toml", "[intervals.cube]\np10 = 0.8\np90 = 1.2\nrows = 10\n");
  const fs::path b = write_temp("b.toml", "[intervals.all]\np10 = 0.7\np90 = 1.5\nrows = 20\n");
  const fs::path meta_only = write_temp("meta.toml", "[meta]\nnote = \"provenance only\"\n");
  const fs::path values = write_temp("values.toml", "[memory]\nhbm_efficiency = 0.6\n");
  CHECK(load_hw_spec(kChip).intervals.empty());
  const HwSpec ab = load_hw_spec(kChip, {a, b});
  CHECK(ab.intervals.size() == 1);
  CHECK(ab.intervals.count("all") == 1);
  // an overlay that changes nothing the intervals describe keeps them
  CHECK(load_hw_spec(kChip, {a, meta_only}).intervals.count("cube") == 1);
  // new parameter values: the old intervals measured other values
  const HwSpec av = load_hw_spec(kChip, {a, values});
  CHECK(av.intervals.empty());
  CHECK(std::none_of(av.overlaid_keys.begin(), av.overlaid_keys.end(),
                     [](const std::string& k) { return k.rfind("intervals.", 0) == 0; }));
}

TEST_CASE("each malformed interval table fails at its own file and line",
          "[intervals][overlay][bad]") {
  struct Case {
    const char* file;
    const char* message;  // after "<path>"
  };
  const Case cases[] = {
      {"hw_overlay_interval_p10_above_p90.toml",
       ":4:7: error: [intervals.cube].p90: expected at least p10 (1.2), got 0.9"},
      {"hw_overlay_interval_zero_factor.toml",
       ":3:7: error: [intervals.all].p10: expected a number > 0, got 0"},
      {"hw_overlay_interval_missing_rows.toml",
       ":2:1: error: [intervals.elementwise]: missing required key 'rows'"},
      {"hw_overlay_interval_zero_rows.toml",
       ":5:8: error: [intervals.cube].rows: expected an integer in [1, 2147483647], got 0"},
      {"hw_overlay_interval_unknown_family.toml",
       ":2:12: error: [intervals]: unknown key 'cubes'; accepted keys: aicpu, all, cube, "
       "data_movement, elementwise, generic, index, reduction, sort"},
      {"hw_overlay_interval_unknown_key.toml",
       ":4:1: error: [intervals.cube]: unknown key 'p50'; accepted keys: p10, p90, rows"},
      {"hw_overlay_interval_not_table.toml",
       ":3:8: error: [intervals].cube: expected a table, got a float"},
      {"hw_overlay_interval_empty.toml",
       ":5:1: error: [intervals]: expected at least one [intervals.NAME] table, NAME one of: "
       "cube, elementwise, reduction, data_movement, index, sort, aicpu, generic, all"},
  };
  for (const Case& c : cases) {
    INFO(c.file);
    CHECK_THROWS_WITH(load_hw_spec(kChip, {npusim::test::bad_file(c.file)}), npusim::test::bad_file(c.file) + c.message);
    CHECK_THROWS_WITH(check_hw_overlay(npusim::test::bad_file(c.file)), npusim::test::bad_file(c.file) + c.message);
  }
}

TEST_CASE("a chip file cannot carry intervals", "[intervals][bad]") {
  std::ifstream in(kChip, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text += "\n[intervals.cube]\np10 = 0.9\np90 = 1.1\nrows = 9\n";
  const fs::path dir = fs::temp_directory_path() / "npusim_intervals_test_chip";
  fs::create_directories(dir);
  const fs::path p = dir / "ascend910b3.toml";
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  CHECK_THROWS_WITH(load_hw_spec(p), Catch::Contains("unknown key 'intervals'"));
}
