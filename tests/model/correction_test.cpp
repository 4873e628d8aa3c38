// The learned correction (model/correction.h) on synthetic corpora whose residual is a known
// function of one feature: it must learn it and lower the error of a run it never saw; say when a
// row lies outside its training; train deterministically; and read back what it wrote.
#include <catch2/catch.hpp>

#include "test_ops.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/correction.h"
#include "model/cross_validation.h"
#include "model/error.h"
#include "model/hw_spec.h"
#include "model/op_desc.h"

using namespace npusim;

namespace {

Sample op(const std::string& type, std::int64_t rows, std::int64_t cols) {
  OpText t;
  t.type = type;
  const std::string shape = std::to_string(rows) + "," + std::to_string(cols);
  t.input_shapes = type == "Tanh" ? shape : shape + ";" + shape;
  t.input_dtypes = "FLOAT16";
  t.output_shapes = shape;
  t.output_dtypes = "FLOAT16";
  Sample s;
  s.op = make_op(t, {"<test>", 0, 0});
  return s;
}

// A run of elementwise rows "measured" as the model's prediction times truth(bytes moved).
// `salt` shifts the shapes so that runs share no shape.
template <typename Truth>
std::vector<Sample> run(const HwSpec& hw, int salt, Truth truth) {
  std::vector<Sample> out;
  for (std::int64_t r : {1, 4, 16, 64, 256, 1024, 4096, 16384}) {
    for (std::int64_t c : {128 + 32 * salt, 1024 + 64 * salt, 4096 + 128 * salt}) {
      for (const char* type : {"Add", "Mul", "Tanh"}) {
        Sample s = op(type, r, c);
        const SamplePrediction p = predict_sample(s, hw);
        s.measured_us = p.predicted_us * truth(p.cost.bytes_in + p.cost.bytes_out);
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

std::vector<std::size_t> all(const std::vector<Sample>& s) {
  std::vector<std::size_t> v(s.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

double mape(const std::vector<Sample>& s, const std::vector<double>& pred) {
  double e = 0;
  for (std::size_t i = 0; i < s.size(); ++i) e += std::abs(pred[i] - s[i].measured_us) / s[i].measured_us;
  return e / static_cast<double>(s.size());
}

}  // namespace

TEST_CASE("balanced_set: each run weighs the same in total, the mean row weight is 1",
          "[correction]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  auto one = [](double) { return 1.0; };
  const std::vector<Sample> big = run(hw, 0, one);  // 72 rows
  std::vector<Sample> small(big.begin(), big.begin() + 8);
  const CorrectionSet set =
      balanced_set({{&big, all(big), hw}, {&small, all(small), hw}}, FeatureSet{}, 0.0);
  REQUIRE(set.x.size() == 80);
  // 80 rows, 2 runs: each run weighs 40; a big-run row 40/72, a small-run row 40/8 = 5.
  CHECK(set.w.front() == Approx(40.0 / 72.0));
  CHECK(set.w.back() == Approx(5.0));
  double sum = 0;
  for (const double w : set.w) sum += w;
  CHECK(sum == Approx(80.0));
}

TEST_CASE("correction learns a residual that is a function of bytes moved and lowers the error "
          "of an unseen run",
          "[correction]") {
  // What the regressors learn, with the distance test off: the unseen run's shapes (salt 2) lie
  // beyond the training's, and some of its rows farther from them than the two training runs
  // lie from each other. The distance test has its own cases below.
  const HwSpec hw = npusim::test::chip("ascend910b3");
  SECTION("boosted trees, a step: twice as slow above 1 MB") {
    auto truth = [](double bytes) { return bytes > 1e6 ? 2.0 : 1.0; };
    const auto a = run(hw, 0, truth), b = run(hw, 1, truth), held = run(hw, 2, truth);
    CorrectionOptions o;
    o.kind = CorrectionKind::kGbt;
    o.domain.quantile = 0;
    const Correction c = Correction::train(
        balanced_set({{&a, all(a), hw}, {&b, all(b), hw}}, o.features, 0.0), o);
    const double before = mape(held, corrected_predictions(held, all(held), hw, Correction{}));
    std::size_t ood = 99;
    const double after = mape(held, corrected_predictions(held, all(held), hw, c, &ood));
    CHECK(ood == 0);
    // Without: half the rows are 50 % off. With: the step is learned.
    CHECK(before > 0.2);
    CHECK(after < 0.05);
  }
  SECTION("ridge, linear in log bytes: factor (bytes / 1 MB)^0.2") {
    auto truth = [](double bytes) { return std::pow(bytes / 1e6, 0.2); };
    const auto a = run(hw, 0, truth), b = run(hw, 1, truth), held = run(hw, 2, truth);
    CorrectionOptions o;
    o.kind = CorrectionKind::kRidge;
    o.ridge_alpha = 1e-4;
    o.domain.quantile = 0;
    const Correction c = Correction::train(
        balanced_set({{&a, all(a), hw}, {&b, all(b), hw}}, o.features, 0.0), o);
    const double before = mape(held, corrected_predictions(held, all(held), hw, Correction{}));
    const double after = mape(held, corrected_predictions(held, all(held), hw, c));
    CHECK(before > 0.3);
    // log(measured / predicted) = 0.2 log(bytes) - 0.2 log(1e6) is linear in the log_bytes
    // feature (log1p(bytes), the same to 1e-3 here): recovered almost exactly.
    CHECK(after < 0.01);
  }
}

TEST_CASE("correction: a row outside its training gets no correction and says why",
          "[correction]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  auto truth = [](double) { return 1.5; };
  const auto a = run(hw, 0, truth);
  CorrectionOptions o;
  o.kind = CorrectionKind::kGbt;
  const Correction c = Correction::train(balanced_set({{&a, all(a), hw}}, o.features, 0.0), o);
  auto features = [&](const Sample& s) {
    return correction_features(s, predict_sample(s, hw), hw, o.features);
  };
  // Inside: an Add of a trained size.
  const auto in = c.apply({features(a[10])}).front();
  CHECK_FALSE(in.ood);
  CHECK(in.factor == Approx(1.5).epsilon(0.05));
  // A cube op: the family was never trained on.
  OpText t;
  t.type = "MatMulV2";
  t.input_shapes = "1024,1024;1024,1024";
  t.input_dtypes = "FLOAT16";
  Sample mm;
  mm.op = make_op(t, {"<test>", 0, 0});
  const auto fam = c.apply({features(mm)}).front();
  CHECK(fam.ood);
  CHECK(fam.factor == 1.0);
  CHECK(fam.why == "family cube never trained on");
  // An Add far larger than any trained (the largest moved 16384 x 4096 x 2 B x 3 = 400 MB): its
  // predicted time and bytes are beyond the range by more than 10 % of it.
  const auto big = c.apply({features(op("Add", 1 << 20, 8192))}).front();
  CHECK(big.ood);
  CHECK(big.factor == 1.0);
  CHECK(big.why.find("outside [") != std::string::npos);
  // The same chip features are checked: a chip with other core counts is outside.
  HwSpec other = hw;
  other.chip.cube_cores = 32;
  other.chip.vector_cores = 64;
  const auto chip = c.apply({correction_features(a[10], predict_sample(a[10], other), other,
                                                 o.features)}).front();
  CHECK(chip.ood);
}

TEST_CASE("correction: two trainings give identical predictions, and the file reads back the same",
          "[correction]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  auto truth = [](double bytes) { return 1.0 + 0.5 * std::sin(std::log(bytes)); };
  const auto a = run(hw, 0, truth), b = run(hw, 1, truth), held = run(hw, 2, truth);
  for (const CorrectionKind kind : {CorrectionKind::kGbt, CorrectionKind::kRidge}) {
    CorrectionOptions o;
    o.kind = kind;
    const CorrectionSet set = balanced_set({{&a, all(a), hw}, {&b, all(b), hw}}, o.features, 0.0);
    const Correction c1 = Correction::train(set, o), c2 = Correction::train(set, o);
    const auto p1 = corrected_predictions(held, all(held), hw, c1);
    const auto p2 = corrected_predictions(held, all(held), hw, c2);
    CHECK(p1 == p2);  // bitwise
    const Correction back = Correction::parse(c1.serialize(), "<mem>");
    CHECK(back.kind() == kind);
    const auto p3 = corrected_predictions(held, all(held), hw, back);
    for (std::size_t i = 0; i < p1.size(); ++i) CHECK(p3[i] == Approx(p1[i]).epsilon(1e-6));
  }
}

TEST_CASE("correction file: malformed input is a file:line error", "[correction][bad]") {
  CHECK_THROWS_WITH(Correction::parse("hello\n", "f.txt"),
                    Catch::Contains("not 'npusim-correction 2'"));
  try {
    (void)Correction::parse("npusim-correction 2\nkind 1\nfeatures 3\n", "f.txt");
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 3);
    CHECK_THAT(e.detail(), Catch::Contains("another feature count"));
  }
  CHECK_THROWS_AS(Correction::parse("npusim-correction 2\nkind x\n", "f.txt"), InputError);
}

TEST_CASE("correction file: a damaged tree is refused when read, never walked",
          "[correction][bad]") {
  // The fuzz finding: XGBoost's loader took a model whose child indices were damaged and
  // crashed at prediction. A file's trees are checked node by node: children after their parent.
  const HwSpec hw = npusim::test::chip("ascend910b3");
  auto truth = [](double bytes) { return bytes > 1e6 ? 2.0 : 1.0; };
  const auto a = run(hw, 0, truth), b = run(hw, 1, truth);
  CorrectionOptions o;
  o.kind = CorrectionKind::kGbt;
  o.gbt.rounds = 2;
  o.gbt.min_child_weight = 1;
  const std::string good =
      Correction::train(balanced_set({{&a, all(a), hw}, {&b, all(b), hw}}, o.features, 0.0), o)
          .serialize();
  const std::size_t at = good.find("\nleft 1 ");
  REQUIRE(at != std::string::npos);  // the first tree splits at its root
  std::string cyclic = good;
  cyclic.replace(at, 8, "\nleft 0 ");  // the root's left child is the root itself
  try {
    (void)Correction::parse(cyclic, "c.txt");
    FAIL("no throw");
  } catch (const InputError& e) {
    CHECK_THAT(e.detail(), Catch::Contains("tree 0 node 0: children 0 and"));
  }
  std::string beyond = good;
  beyond.replace(at, 8, "\nleft 9999 ");
  CHECK_THROWS_AS(Correction::parse(beyond, "c.txt"), InputError);
  CHECK(Correction::parse(good, "c.txt").kind() == CorrectionKind::kGbt);
}

TEST_CASE("cross_validate with a correction: corrected figures per run and over runs",
          "[correction][crossval]") {
  const HwSpec hw = npusim::test::chip("ascend910b3");
  auto truth = [](double bytes) { return bytes > 1e6 ? 2.0 : 1.0; };
  std::vector<CvRun> runs;
  for (int k = 0; k < 3; ++k) {
    CvRun r;
    r.name = "r" + std::to_string(k);
    r.workload = "w" + std::to_string(k);
    r.chip = "ascend910b3";
    r.spec = hw;
    r.samples = run(hw, k, truth);
    runs.push_back(std::move(r));
  }
  CvOptions o;
  o.shape_seeds = 1;
  o.fit.max_iterations = 3;
  o.correction.kind = CorrectionKind::kGbt;
  // The runs' shapes differ by a salt that grows with the run: r0 held out lies farther from r1
  // and r2 than they lie from each other, and the distance test would rightly decline it. The
  // test is about the protocol's bookkeeping; the distance test has its own cases below.
  o.correction.domain.quantile = 0;
  const CvReport rep = cross_validate(runs, o);
  REQUIRE(rep.runs.size() == 3);
  // Three LORO folds and one shape split; LOWO reuses each LORO fold (one run per workload).
  CHECK(rep.corrections_trained == 3 + 1);
  for (const auto& r : rep.runs) {
    CHECK(r.loro_corrected.rows == r.loro.rows);
    CHECK(r.loro_corrected.mape < r.loro.mape);
    CHECK(r.loro_ood == 0);
  }
  CHECK(rep.loro_corr_mape.worst < rep.loro_mape.median);
}

namespace {

// A feature vector with log_pred_us (8) = a and log_cube_us (9) = b, every other feature 0.
CorrectionFeatures point(double a, double b) {
  CorrectionFeatures x{};
  x[8] = a;
  x[9] = b;
  return x;
}

}  // namespace

TEST_CASE(
    "correction domain: the threshold is how far the training's runs lie from each other, and "
    "a row inside every feature's range but far from every training row is declined",
    "[correction][domain]") {
  // Two runs on the diagonal: run 0 at 0, 2, 4 and run 1 at 1, 3, 5. Each feature has mean 2.5
  // and standard deviation sqrt(17.5 / 6) = 1.7078. Every row's nearest row of the other run is
  // 1 away in both features: 1 / 1.7078 = 0.5855 standard deviations (root mean square over the
  // two features that vary), the threshold at any quantile.
  std::vector<CorrectionFeatures> x;
  std::vector<int> run;
  for (int k = 0; k < 6; ++k) {
    x.push_back(point(k, k));
    run.push_back(k % 2);
  }
  const std::vector<double> w(6, 1.0);
  const CorrectionDomain d = CorrectionDomain::build(x, run, w, DomainOptions{});
  REQUIRE(d.active());
  const double sd = std::sqrt(17.5 / 6);
  CHECK(d.threshold() == Approx(1 / sd).epsilon(1e-4));
  // (2.5, 2.5): 0.5 from (2, 2) in both features, 0.29 sd: inside.
  CHECK(d.distance(point(2.5, 2.5)) == Approx(0.5 / sd).epsilon(1e-4));
  CHECK(d.outside(point(2.5, 2.5)).empty());
  // (0, 5): inside both features' ranges [0, 5], but off the diagonal. Nearest (2, 2) or (3, 3):
  // differences (2, 3), sqrt(13 / 2) / 1.7078 = 1.49 sd.
  CHECK(d.distance(point(0, 5)) == Approx(std::sqrt(6.5) / sd).epsilon(1e-4));
  CHECK_THAT(d.outside(point(0, 5)), Catch::StartsWith("distance 1.49 to the nearest training row"));
  // One run alone (one profile given to calibrate): its rows are measured against each other;
  // here each lies 1 from the next in both features, the same threshold.
  const std::vector<int> one(6, 0);
  const CorrectionDomain single = CorrectionDomain::build(x, one, w, DomainOptions{});
  REQUIRE(single.active());
  CHECK(single.threshold() == Approx(1 / sd).epsilon(1e-4));
  // Quantile 0 turns it off.
  DomainOptions off;
  off.quantile = 0;
  CHECK_FALSE(CorrectionDomain::build(x, run, w, off).active());
}

TEST_CASE("correction: the distance test declines a far row, corrects a near one, and reads back",
          "[correction][domain]") {
  // The same two runs as a training set whose residual is log 1.5 everywhere.
  CorrectionSet set;
  for (int k = 0; k < 6; ++k) {
    set.x.push_back(point(k, k));
    set.x.back()[0] = 1;  // family cube, seen
    set.y.push_back(std::log(1.5));
    set.w.push_back(1);
    set.run.push_back(k % 2);
  }
  CorrectionOptions o;
  o.kind = CorrectionKind::kGbt;
  const Correction c = Correction::train(set, o);
  CorrectionFeatures near = point(2.5, 2.5), far = point(0, 5);
  near[0] = far[0] = 1;
  for (const Correction& k : {c, Correction::parse(c.serialize(), "<mem>")}) {
    const auto a = k.apply({near, far});
    CHECK_FALSE(a[0].ood);
    CHECK(a[0].factor == Approx(1.5).epsilon(1e-3));
    CHECK(a[1].ood);
    CHECK(a[1].factor == 1.0);
    CHECK(a[1].raw_factor == Approx(1.5).epsilon(1e-3));  // what it would have applied
    CHECK_THAT(a[1].why, Catch::StartsWith("distance 1.49"));
  }
}
