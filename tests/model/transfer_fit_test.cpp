// The transfer fit on a synthetic two-chip corpus: rows "measured" on two chips that differ in
// HBM efficiency (a chip parameter) and share one kernel cost (cycles per tanh vector repeat).
// The fit must find each chip's own HBM efficiency and the shared kernel cost once.
#include <catch2/catch.hpp>

#include "test_ops.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/cross_validation.h"
#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "model/transfer_fit.h"

using namespace npusim;

namespace {

Sample elementwise(const std::string& type, std::int64_t rows, std::int64_t cols, DType dt) {
  OpText t;
  t.type = type;
  const std::string shape = std::to_string(rows) + "," + std::to_string(cols);
  t.input_shapes = type == "Tanh" ? shape : shape + ";" + shape;
  t.input_dtypes = dtype_name(dt);
  t.output_shapes = shape;
  t.output_dtypes = dtype_name(dt);
  Sample s;
  s.op = make_op(t, {"<test>", 0, 0});
  return s;
}

// A corpus "measured" on `truth`: Adds and Muls (memory-bound when large) and Tanh (vector-bound)
// from a few KB to tens of MB, fp16 and fp32.
std::vector<Sample> measured_on(const HwSpec& truth, int salt) {
  std::vector<Sample> out;
  for (std::int64_t r : {1, 8, 64, 512, 2048, 8192, 32768}) {
    for (std::int64_t c : {256, 1024 + 64 * salt, 4096}) {
      for (const char* type : {"Add", "Mul", "Tanh"}) {
        for (DType dt : {DType::kFloat16, DType::kFloat32}) {
          Sample s = elementwise(type, r, c, dt);
          s.measured_us = predict_sample(s, truth).predicted_us;
          out.push_back(std::move(s));
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("transfer fit: chip parameters per chip, shared kernel parameters once") {
  const HwSpec prior = npusim::test::chip("ascend910b3");
  HwSpec truth_a = prior, truth_b = prior;
  truth_a.memory.hbm_efficiency = 0.50;
  truth_b.memory.hbm_efficiency = 0.95;
  for (HwSpec* t : {&truth_a, &truth_b}) {
    t->vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] *= 1.6;
  }
  const std::vector<Sample> a = measured_on(truth_a, 0), b = measured_on(truth_b, 1);
  auto group = [&](const std::string& chip, const std::vector<Sample>& s) {
    FitGroup g;
    g.run = chip + "-run";
    g.chip = chip;
    g.prior = prior;
    g.samples = &s;
    for (std::size_t i = 0; i < s.size(); ++i) g.rows.push_back(i);
    return g;
  };
  TransferOptions o;
  o.validation_fraction = 0;  // every row in the fit: this checks the fit, not the spec guard
  o.max_iterations = 40;
  const TransferFit fit = fit_transfer({group("A", a), group("B", b)}, o);
  INFO(fit.verdict);
  REQUIRE_FALSE(fit.kept_spec);
  // Kernel parameters are one set for both chips; HBM efficiency is never among them.
  CHECK(fit.kernel.count("memory.hbm_efficiency") == 0);
  REQUIRE(fit.kernel.count("vector.cycles_per_repeat.tanh") == 1);
  CHECK(std::exp(fit.kernel.at("vector.cycles_per_repeat.tanh")) == Approx(1.6).epsilon(0.12));
  // Each chip gets its own HBM efficiency.
  REQUIRE(fit.chip.count("A") == 1);
  REQUIRE(fit.chip.count("B") == 1);
  const HwSpec fa = apply_transfer(prior, "A", fit), fb = apply_transfer(prior, "B", fit);
  CHECK(fa.memory.hbm_efficiency == Approx(0.50).epsilon(0.12));
  CHECK(fb.memory.hbm_efficiency == Approx(0.95).epsilon(0.12));
  // A third chip the fit never saw gets the kernel factors and keeps its spec's chip values.
  const HwSpec fc = apply_transfer(prior, "C", fit);
  CHECK(fc.memory.hbm_efficiency == prior.memory.hbm_efficiency);
  CHECK(fc.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] ==
        Approx(fa.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)]));
}

TEST_CASE("transfer fit: a fit that cannot beat the spec on held-out keys keeps the spec") {
  // Rows measured on the spec itself: nothing to gain, the validation keeps the spec.
  const HwSpec prior = npusim::test::chip("ascend910b3");
  const std::vector<Sample> a = measured_on(prior, 0);
  FitGroup g;
  g.run = "r";
  g.chip = "A";
  g.prior = prior;
  g.samples = &a;
  for (std::size_t i = 0; i < a.size(); ++i) g.rows.push_back(i);
  TransferOptions o;
  o.validation_fraction = 0.3;
  const TransferFit fit = fit_transfer({g}, o);
  CHECK(fit.kept_spec);
  CHECK(fit.kernel.empty());
  CHECK(fit.chip.empty());
  CHECK(fit.verdict.find("spec values are kept") != std::string::npos);
}

TEST_CASE("transfer fit: parameters are scoped to the chip or the kernels") {
  CHECK(param_scope("memory.hbm_efficiency") == ParamScope::kChip);
  CHECK(param_scope("chip.freq_mhz") == ParamScope::kChip);
  CHECK(param_scope("cube.efficiency") == ParamScope::kChip);  // TBE on the 910, Ascend C on 910B
  CHECK(param_scope("cube.conv_efficiency") == ParamScope::kChip);  // the conv kernels likewise
  CHECK(param_scope("cube.transposed_a_efficiency") == ParamScope::kKernel);
  CHECK(param_scope("vector.cycles_per_repeat.binary") == ParamScope::kKernel);
}

TEST_CASE("cross-validation: median and worst over runs") {
  CHECK(over_runs({0.3, 0.1, 0.2}).median == Approx(0.2));
  CHECK(over_runs({0.3, 0.1, 0.2, 0.4}).median == Approx(0.25));
  CHECK(over_runs({0.3, 0.1, 0.2, 0.4}).worst == Approx(0.4));
  CHECK(over_runs({}).worst == 0);
}

TEST_CASE("cross-validation: leave-one-run-out on runs measured with a shared kernel cost") {
  // Three runs on one chip with the same truth: every fold's fit has the other two runs and must
  // bring the held-out run's error below the spec's.
  const HwSpec prior = npusim::test::chip("ascend910b3");
  HwSpec truth = prior;
  truth.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kTanh)] *= 1.6;
  std::vector<CvRun> runs;
  for (int k = 0; k < 3; ++k) {
    CvRun r;
    r.name = "run" + std::to_string(k);
    r.workload = k < 2 ? "w" : "v";
    r.chip = "A";
    r.spec = prior;
    r.samples = measured_on(truth, k);
    runs.push_back(std::move(r));
  }
  CvOptions o;
  o.shape_seeds = 1;
  const CvReport rep = cross_validate(runs, o);
  REQUIRE(rep.runs.size() == 3);
  for (const auto& r : rep.runs) {
    INFO(r.name << ": " << r.loro_verdict);
    CHECK(r.loro.mape < r.uncalibrated.mape);
    CHECK(r.lowo.rows == r.uncalibrated.rows);
  }
  CHECK(rep.loro_mape.worst < rep.uncal_mape.worst);
  REQUIRE(rep.shape.size() == 1);
  CHECK(rep.shape[0].calibrated.mape <= rep.shape[0].uncalibrated.mape);
}
