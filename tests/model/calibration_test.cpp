// Accuracy summaries, L2 residency from the op sequence, splits, and calibration recovering known
// parameters from a synthetic profile.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "model/calibration.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;
using npusim::test::chip;
using npusim::test::op;

TEST_CASE("error summaries are the hand-computed figures", "[accuracy]") {
  // APEs 0.1, 0.1, 0 -> MAPE 0.0667, median 0.1; totals 69 vs 70 -> 1/70
  const ErrorSummary e = summarize({10, 20, 40}, {11, 18, 40});
  CHECK(e.rows == 3);
  CHECK(e.mape == Approx(0.2 / 3));
  CHECK(e.median_ape == Approx(0.1));
  CHECK(e.p90_ape == Approx(0.1));
  CHECK(e.step_total_error == Approx(1.0 / 70));
  CHECK(e.pearson_r_log > 0.99);
  CHECK(summarize({}, {}).rows == 0);
}

namespace {

// A sample of group "g" starting at `t`, for the L2 residency cases (formats empty: plain).
Sample l2_sample(const char* type, const char* in, const char* in_dtypes, const char* out,
                 std::int64_t t, const char* in_formats = "", const char* out_formats = "") {
  OpText x;
  x.type = type;
  x.input_shapes = in;
  x.input_dtypes = in_dtypes;
  x.input_formats = in_formats;
  x.output_shapes = out;
  x.output_dtypes = "FLOAT";
  x.output_formats = out_formats;
  Sample s;
  s.op = make_op(x, SourcePos{"<test>", 0, 0});
  s.measured_us = 1;
  s.group = "g";
  s.start_ns = t;
  return s;
}

}  // namespace

TEST_CASE("an input produced by a recent op is an L2 hit until the L2's worth has been written",
          "[accuracy][l2]") {
  const HwSpec& hw = chip("ascend910b3");  // 192 MiB L2
  auto sample = [](const char* type, const char* in, const char* out, std::int64_t t) {
    return l2_sample(type, in, "FLOAT", out, t);
  };
  std::vector<Sample> v = {
      sample("Relu", "1024,1024", "1024,1024", 0),          // produces a 4 MiB tensor
      sample("Relu", "1024,1024", "2048,1024", 1),          // reads it: hit
      sample("Relu", "512,512", "64,1024,1024", 2),         // never produced: miss; writes 256 MiB
      sample("Relu", "1024,1024", "8", 3),                  // its producer is now evicted: miss
  };
  infer_l2_hits(v, hw);
  CHECK(v[0].l2_hit_ratio == 0);
  CHECK(v[1].l2_hit_ratio == 1);
  CHECK(v[2].l2_hit_ratio == 0);
  CHECK(v[3].l2_hit_ratio == 0);
}

TEST_CASE("a tiled tensor is not an L2 hit for a plain read of the same element count",
          "[accuracy][l2]") {
  const HwSpec& hw = chip("ascend910b3");
  auto sample = [](const char* in, const char* in_fmt, const char* out, const char* out_fmt,
                   std::int64_t t) {
    return l2_sample("TransData", in, "FLOAT", out, t, in_fmt, out_fmt);
  };
  std::vector<Sample> v = {
      // an optimizer converting two states ND -> NZ one after the other (9 MiB each)
      sample("768,3072", "ND", "192,48,16,16", "FRACTAL_NZ", 0),
      // its ND input has the count and dtype of the NZ tensor just written, not its bytes: miss
      sample("3072,768", "ND", "48,192,16,16", "FRACTAL_NZ", 1),
      // a read of that NZ tensor (as a view of another shape) hits
      sample("192,48,256", "FRACTAL_NZ", "768,3072", "ND", 2),
      // and a plain read of the ND tensor this one wrote hits, under another plain format too
      sample("1,1,768,3072", "NCHW", "192,48,16,16", "FRACTAL_NZ", 3),
  };
  infer_l2_hits(v, hw);
  CHECK(v[0].l2_hit_ratio == 0);
  CHECK(v[1].l2_hit_ratio == 0);
  CHECK(v[2].l2_hit_ratio == 1);
  CHECK(v[3].l2_hit_ratio == 1);
}

TEST_CASE("an op's own earlier inputs evict its later ones from L2 (a multi-tensor op)",
          "[accuracy][l2]") {
  const HwSpec& hw = chip("ascend910b3");  // 192 MiB L2
  auto sample = [](const char* in, const char* out, std::int64_t t) {
    return l2_sample("AddN", in, "FLOAT;FLOAT", out, t);
  };
  std::vector<Sample> v = {
      sample("8;8", "16,1024,1024", 0),  // writes X, 64 MiB
      sample("8;8", "24,1024,1024", 1),  // writes Y, 96 MiB: X has 96 MiB written after it
      // Y first: Y 0 + 0 + 96 <= 192 hits; X 96 written since + 96 read before + 64 = 256 > 192
      // misses (alone, 96 + 64 = 160 would fit): 96 of 160 MiB hit
      sample("24,1024,1024;16,1024,1024", "8", 2),
  };
  infer_l2_hits(v, hw);
  CHECK(v[2].l2_hit_ratio == Approx(96.0 / 160.0));
  // X first: X 96 + 0 + 64 = 160 and Y 0 + 64 + 96 = 160 both fit: all hit
  std::vector<Sample> w = {v[0], v[1], sample("16,1024,1024;24,1024,1024", "8", 2)};
  infer_l2_hits(w, hw);
  CHECK(w[2].l2_hit_ratio == 1);
}

TEST_CASE("a shape split keeps every (type, shapes, dtypes) key on one side, deterministically",
          "[calibration][split]") {
  std::vector<Sample> v;
  for (int i = 0; i < 400; ++i) {
    Sample s;
    s.op = op("Add", fmt::format("{},64;{},64", 1 + i % 50, 1 + i % 50), "FLOAT16");
    s.measured_us = 1;
    s.group = i < 200 ? "rank0" : "rank1";
    v.push_back(s);
  }
  std::vector<std::size_t> fit, hold, fit2, hold2;
  split_samples(v, SplitKind::kShape, 0.3, 7, fit, hold);
  split_samples(v, SplitKind::kShape, 0.3, 7, fit2, hold2);
  CHECK(fit == fit2);
  CHECK(hold == hold2);
  CHECK(fit.size() + hold.size() == v.size());
  std::set<std::string> fit_keys;
  for (auto i : fit) fit_keys.insert(v[i].op.inputs[0].shape == std::vector<std::int64_t>{} ? "" : std::to_string(v[i].op.inputs[0].shape[0]));
  for (auto i : hold) CHECK(fit_keys.count(std::to_string(v[i].op.inputs[0].shape[0])) == 0);
  CHECK(hold.size() > 40);
  CHECK(hold.size() < 240);
  // a file split holds out whole groups, minus shapes the fit group has
  split_samples(v, SplitKind::kFile, 0.5, 3, fit, hold);
  std::set<std::string> fit_groups, hold_groups;
  for (auto i : fit) fit_groups.insert(v[i].group);
  for (auto i : hold) hold_groups.insert(v[i].group);
  CHECK(fit_groups.size() == 1);
  CHECK(hold.empty());  // every shape of the held-out rank also occurs in the fit rank
}

namespace {

// A synthetic profile: varied ops predicted on a chip with known "true" parameters, with 5 %
// log-normal noise (the measured noise floor is 6-7 %, observations.md).
std::vector<Sample> synthetic(const HwSpec& truth, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<Sample> v;
  auto add = [&](const std::string& type, const std::string& shapes, const std::string& dtypes,
                 int repeat) {
    for (int r = 0; r < repeat; ++r) {
      Sample s;
      s.op = op(type, shapes, dtypes);
      s.measured_us = predict_sample(s, truth).predicted_us * std::exp(noise(rng));
      s.group = "synthetic";
      v.push_back(s);
    }
  };
  for (int m : {64, 256, 1024, 2048, 4096, 8192}) {
    for (int k : {256, 1024, 4096}) {
      add("MatMulV2", fmt::format("{},{};{},1024", m, k, k), "FLOAT16", 2);
    }
  }
  for (int rows : {1, 8, 64, 512, 4096, 16384, 65536}) {
    add("Add", fmt::format("{},1024;{},1024", rows, rows), "FLOAT", 2);
    add("Cast", fmt::format("{},1024", rows), "FLOAT16", 2);
    add("Relu", fmt::format("{},512", rows), "FLOAT16", 2);
    add("TensorMove", fmt::format("{},2048", rows), "FLOAT", 2);
    add("Mul", fmt::format("{},1000;{},1", rows, rows), "FLOAT", 2);
  }
  return v;
}

}  // namespace

TEST_CASE("calibration recovers known parameters from a synthetic profile", "[calibration]") {
  const HwSpec& prior = chip("ascend910b3");
  HwSpec truth = prior;
  truth.memory.hbm_efficiency = 0.5;       // prior 0.79
  truth.overhead.launch_cycles = 900;      // prior 300
  truth.cube.efficiency = 0.65;            // prior 0.80
  const std::vector<Sample> v = synthetic(truth, 42);
  std::vector<std::size_t> fit, hold;
  split_samples(v, SplitKind::kShape, 0.3, 1, fit, hold);
  REQUIRE(hold.size() > 20);
  const CalibrationResult r = calibrate(v, fit, prior);
  // the strongly identified parameters come back within a stated tolerance
  CHECK(get_param(r.fitted, "memory.hbm_efficiency") == Approx(0.5).epsilon(0.15));
  CHECK(get_param(r.fitted, "cube.efficiency") == Approx(0.65).epsilon(0.10));
  // launch cost and first-read/last-write latencies are all paid once per op: these data pin
  // their sum (truth 900 + 1400 + 300), not each one
  const double fixed = get_param(r.fitted, "overhead.launch_cycles") +
                       get_param(r.fitted, "memory.read_latency_cycles") +
                       get_param(r.fitted, "memory.write_latency_cycles");
  CHECK(fixed == Approx(2600).epsilon(0.2));
  // and the held-out error falls to the noise level
  const AccuracyReport before = evaluate_accuracy_subset(v, hold, prior);
  const AccuracyReport after = evaluate_accuracy_subset(v, hold, r.fitted);
  CHECK(after.overall.mape < before.overall.mape);
  CHECK(after.overall.mape < 0.10);
  CHECK(r.final_cost < r.initial_cost);
}

TEST_CASE("the overlay a fit writes loads back onto the chip with the fitted values",
          "[calibration]") {
  const HwSpec& prior = chip("ascend910b3");
  HwSpec truth = prior;
  truth.memory.hbm_efficiency = 0.5;
  const std::vector<Sample> v = synthetic(truth, 3);
  std::vector<std::size_t> all(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) all[i] = i;
  const CalibrationResult r = calibrate(v, all, prior);
  const std::string text = overlay_toml(r, {"test overlay"}, {{"split", "none"}});
  const auto path = std::filesystem::temp_directory_path() / "npusim_calib_overlay_test.toml";
  {
    std::ofstream out(path);
    out << text;
  }
  const HwSpec loaded = load_hw_spec(prior.source, {path});
  for (const auto& p : r.params) {
    if (!p.identified) continue;
    INFO(p.key);
    CHECK(get_param(loaded, p.key) == Approx(p.value).epsilon(1e-5));
  }
  std::filesystem::remove(path);
}
