#include "model/correction.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

#include "model/op_table.h"

namespace npusim {

const char* correction_kind_name(CorrectionKind k) noexcept {
  switch (k) {
    case CorrectionKind::kNone:
      return "none";
    case CorrectionKind::kRidge:
      return "ridge";
    case CorrectionKind::kGbt:
      return "gbt";
  }
  return "none";
}

std::optional<CorrectionKind> parse_correction_kind(std::string_view s) noexcept {
  if (s == "none") return CorrectionKind::kNone;
  if (s == "ridge") return CorrectionKind::kRidge;
  if (s == "gbt") return CorrectionKind::kGbt;
  return std::nullopt;
}

std::size_t CorrectionSet::add_run(const std::vector<Sample>& samples,
                                   const std::vector<std::size_t>& rows, const HwSpec& hw,
                                   double weight, FeatureSet features, int run_index) {
  std::size_t n = 0;
  for (const std::size_t i : rows) {
    const Sample& s = samples.at(i);
    const SamplePrediction p = predict_sample(s, hw);
    if (!(s.measured_us > 0) || !(p.predicted_us > 0)) continue;
    x.push_back(correction_features(s, p, hw, features));
    y.push_back(std::log(s.measured_us / p.predicted_us));
    w.push_back(weight);
    run.push_back(run_index);
    ++n;
  }
  return n;
}

CorrectionSet balanced_set(const std::vector<CorrectionRunRows>& runs, FeatureSet features,
                           double power) {
  CorrectionSet set;
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // [begin, end) of each run's rows
  for (const auto& r : runs) {
    const std::size_t begin = set.x.size();
    set.add_run(*r.samples, r.rows, r.hw, 1.0, features, static_cast<int>(spans.size()));
    if (set.x.size() > begin) spans.emplace_back(begin, set.x.size());
  }
  // Run j weighs rows_j^power in proportion; the mean row weight is 1. Power 0: every run the
  // same in total.
  double sum = 0;
  for (const auto& [b, e] : spans) sum += std::pow(static_cast<double>(e - b), power);
  for (const auto& [b, e] : spans) {
    const double total = std::pow(static_cast<double>(e - b), power) / sum *
                         static_cast<double>(set.x.size());
    for (std::size_t i = b; i < e; ++i) set.w[i] = total / static_cast<double>(e - b);
  }
  return set;
}

namespace {

std::vector<float> as_floats(const std::vector<CorrectionFeatures>& x) {
  std::vector<float> out;
  out.reserve(x.size() * kCorrectionFeatures);
  for (const auto& r : x) {
    for (const double v : r) out.push_back(static_cast<float>(v));
  }
  return out;
}

}  // namespace

Correction Correction::train(const CorrectionSet& set, const CorrectionOptions& o) {
  Correction c;
  c.options_ = o;
  c.range_.margin = o.ood_margin;
  c.rows_ = set.x.size();
  if (o.kind == CorrectionKind::kNone || set.x.empty()) return c;
  for (const auto& x : set.x) c.range_.add(x);
  std::vector<int> run = set.run;
  if (run.size() != set.x.size()) run.assign(set.x.size(), 0);
  c.domain_ = CorrectionDomain::build(set.x, run, set.w, o.domain);
  const std::size_t n = set.x.size();
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = std::clamp(set.y[i], -o.max_log_target, o.max_log_target);

  if (o.kind == CorrectionKind::kGbt) {
    std::vector<float> yf(y.begin(), y.end()), wf(set.w.begin(), set.w.end());
    c.gbt_ = GbtModel::train(as_floats(set.x), kCorrectionFeatures, yf, wf, o.gbt);
    return c;
  }

  // Ridge on standardised features; the intercept is not penalised.
  const std::size_t d = kCorrectionFeatures;
  double sw = 0;
  for (const double w : set.w) sw += w;
  c.mean_.assign(d, 0.0);
  c.scale_.assign(d, 1.0);
  for (std::size_t j = 0; j < d; ++j) {
    double m = 0, v = 0;
    for (std::size_t i = 0; i < n; ++i) m += set.w[i] * set.x[i][j];
    m /= sw;
    for (std::size_t i = 0; i < n; ++i) v += set.w[i] * (set.x[i][j] - m) * (set.x[i][j] - m);
    v /= sw;
    c.mean_[j] = m;
    c.scale_[j] = v > 1e-12 ? std::sqrt(v) : 0.0;  // 0: a constant feature, left out
  }
  double ym = 0;
  for (std::size_t i = 0; i < n; ++i) ym += set.w[i] * y[i];
  ym /= sw;
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
  Eigen::VectorXd b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(d));
  Eigen::VectorXd z(static_cast<Eigen::Index>(d));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) {
      z(static_cast<Eigen::Index>(j)) =
          c.scale_[j] > 0 ? (set.x[i][j] - c.mean_[j]) / c.scale_[j] : 0.0;
    }
    a.noalias() += set.w[i] * z * z.transpose();
    b.noalias() += set.w[i] * (y[i] - ym) * z;
  }
  a.diagonal().array() += o.ridge_alpha * sw;
  const Eigen::VectorXd beta = a.ldlt().solve(b);
  c.beta_.assign(beta.data(), beta.data() + beta.size());
  c.intercept_ = ym;
  return c;
}

std::vector<CorrectionApplied> Correction::apply(const std::vector<CorrectionFeatures>& x) const {
  std::vector<CorrectionApplied> out(x.size());
  if (options_.kind == CorrectionKind::kNone || rows_ == 0 || x.empty()) return out;
  std::vector<double> logf(x.size(), 0.0);
  if (options_.kind == CorrectionKind::kGbt) {
    logf = gbt_.predict(as_floats(x), kCorrectionFeatures);
  } else {
    for (std::size_t i = 0; i < x.size(); ++i) {
      double v = intercept_;
      for (std::size_t j = 0; j < kCorrectionFeatures; ++j) {
        if (scale_[j] > 0) v += beta_[j] * (x[i][j] - mean_[j]) / scale_[j];
      }
      logf[i] = v;
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i].raw_factor =
        std::exp(std::clamp(logf[i], -options_.max_log_target, options_.max_log_target));
    out[i].why = range_.outside(x[i]);
    if (out[i].why.empty()) out[i].why = domain_.outside(x[i]);
    out[i].ood = !out[i].why.empty();
    out[i].factor = out[i].ood ? 1.0 : out[i].raw_factor;
  }
  return out;
}

std::vector<double> corrected_predictions(const std::vector<Sample>& samples,
                                          const std::vector<std::size_t>& rows, const HwSpec& hw,
                                          const Correction& c, std::size_t* ood) {
  std::vector<double> pred(rows.size());
  std::vector<CorrectionFeatures> feats;
  std::vector<std::size_t> where;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Sample& s = samples.at(rows[k]);
    const SamplePrediction p = predict_sample(s, hw);
    pred[k] = p.predicted_us;
    if (p.predicted_us > 0 && c.kind() != CorrectionKind::kNone) {
      feats.push_back(correction_features(s, p, hw, c.options().features));
      where.push_back(k);
    }
  }
  const std::vector<CorrectionApplied> a = c.apply(feats);
  std::size_t n_ood = 0;
  for (std::size_t k = 0; k < where.size(); ++k) {
    pred[where[k]] *= a[k].factor;
    if (a[k].ood) ++n_ood;
  }
  if (ood) *ood = n_ood;
  return pred;
}

CorrectedReport evaluate_corrected(const std::vector<Sample>& samples,
                                   const std::vector<std::size_t>& rows, const HwSpec& hw,
                                   const Correction& c) {
  CorrectedReport rep;
  std::vector<CorrectionFeatures> feats;
  std::vector<double> pred;
  std::vector<std::size_t> used;
  for (const std::size_t i : rows) {
    const Sample& s = samples.at(i);
    const SamplePrediction p = predict_sample(s, hw);
    if (!(s.measured_us > 0) || !(p.predicted_us > 0)) continue;
    feats.push_back(correction_features(s, p, hw, c.options().features));
    pred.push_back(p.predicted_us);
    used.push_back(i);
  }
  const std::vector<CorrectionApplied> a = c.apply(feats);
  std::vector<double> m, q;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> fam;
  for (std::size_t k = 0; k < used.size(); ++k) {
    const Sample& s = samples[used[k]];
    const double v = pred[k] * a[k].factor;
    m.push_back(s.measured_us);
    q.push_back(v);
    auto& f = fam[family_name(s.op.kind->family)];
    f.first.push_back(s.measured_us);
    f.second.push_back(v);
    if (a[k].ood) {
      ++rep.ood;
      const std::string& w = a[k].why;
      const std::size_t cut = w.rfind("family ", 0) == 0 ? w.find(' ', 7) : w.find(' ');
      ++rep.ood_reasons[w.substr(0, cut)];
    }
  }
  rep.overall = summarize(m, q);
  for (const auto& [k, v] : fam) rep.by_family[k] = summarize(v.first, v.second);
  return rep;
}

}  // namespace npusim
