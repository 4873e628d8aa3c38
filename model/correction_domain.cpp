#include "model/correction_domain.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

namespace npusim {

namespace {

// A standardised value is clipped to ±this: one rare one-hot must not make every row far.
constexpr double kClip = 10;

// Squared distance of a and b, abandoned (returning at least `bound`) once it exceeds `bound`.
double sq_distance(const std::vector<float>& a, const std::vector<float>& b, double bound) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = static_cast<double>(a[k]) - static_cast<double>(b[k]);
    s += d * d;
    if (s >= bound) return s;
  }
  return s;
}

// An even sample of at most `n` of `0..size-1`.
std::vector<std::size_t> even_sample(std::size_t size, std::size_t n) {
  std::vector<std::size_t> out;
  if (size <= n) {
    for (std::size_t i = 0; i < size; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t k = 0; k < n; ++k) out.push_back(k * size / n);
  return out;
}

}  // namespace

std::vector<float> CorrectionDomain::standardise(const CorrectionFeatures& x) const {
  std::vector<float> z(used_.size());
  for (std::size_t k = 0; k < used_.size(); ++k) {
    const std::size_t j = used_[k];
    z[k] = static_cast<float>(std::clamp((x[j] - mean[j]) / scale[j], -kClip, kClip));
  }
  return z;
}

CorrectionDomain CorrectionDomain::build(const std::vector<CorrectionFeatures>& x,
                                         const std::vector<int>& run,
                                         const std::vector<double>& w, const DomainOptions& o) {
  CorrectionDomain d;
  const std::size_t n = x.size();
  if (n == 0 || run.size() != n || w.size() != n || !(o.quantile > 0)) return d;
  // Weighted mean and standard deviation of each feature.
  d.mean.assign(kCorrectionFeatures, 0.0);
  d.scale.assign(kCorrectionFeatures, 0.0);
  double sw = 0;
  for (const double v : w) sw += v;
  if (!(sw > 0)) return d;
  for (std::size_t j = 0; j < kCorrectionFeatures; ++j) {
    double m = 0, v = 0;
    for (std::size_t i = 0; i < n; ++i) m += w[i] * x[i][j];
    m /= sw;
    for (std::size_t i = 0; i < n; ++i) v += w[i] * (x[i][j] - m) * (x[i][j] - m);
    v /= sw;
    d.mean[j] = m;
    d.scale[j] = v > 1e-12 ? std::sqrt(v) : 0.0;
    if (d.scale[j] > 0) d.used_.push_back(j);
  }
  if (d.used_.empty()) return d;
  // Distinct rows (to 0.01 standard deviation), with each run's weight on them.
  struct Point {
    std::vector<float> z;
    std::map<int, double> runs;
  };
  std::vector<Point> pts;
  std::map<std::vector<int>, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<float> z = d.standardise(x[i]);
    std::vector<int> key(z.size());
    for (std::size_t k = 0; k < z.size(); ++k) key[k] = static_cast<int>(std::lround(z[k] * 100));
    auto [it, fresh] = index.emplace(std::move(key), pts.size());
    if (fresh) pts.push_back({std::move(z), {}});
    pts[it->second].runs[run[i]] += w[i];
  }
  std::map<int, bool> runs_seen;
  for (const int r : run) runs_seen[r] = true;
  // With one run (one profile given to calibrate), its distinct rows are measured against each
  // other instead: how close the training's rows lie to one another.
  const bool single = runs_seen.size() < 2;
  const std::vector<std::size_t> refs = even_sample(pts.size(), o.max_points);
  // Each probed row's distance to the nearest reference point holding another run's row.
  std::vector<std::pair<double, double>> dist;  // (distance, weight)
  for (const std::size_t p : refs) {  // the same even sample is probed
    const Point& pp = pts[p];
    for (const auto& [r, wr] : pp.runs) {
      double best = std::numeric_limits<double>::infinity();
      if (pp.runs.size() > 1) best = 0;
      for (std::size_t k = 0; k < refs.size() && best > 0; ++k) {
        const Point& q = pts[refs[k]];
        if (single ? refs[k] == p : q.runs.size() == 1 && q.runs.begin()->first == r) continue;
        best = std::min(best, sq_distance(pp.z, q.z, best));
      }
      if (std::isfinite(best)) {
        dist.emplace_back(std::sqrt(best / static_cast<double>(d.used_.size())), wr);
      }
    }
  }
  if (dist.empty()) return d;
  std::sort(dist.begin(), dist.end());
  double total = 0;
  for (const auto& e : dist) total += e.second;
  double acc = 0;
  for (const auto& [v, wt] : dist) {
    acc += wt;
    d.threshold_ = v;
    if (acc >= o.quantile * total) break;
  }
  // A threshold of 0 (most rows repeated exactly in another run) would decline every row not
  // seen exactly; the smallest nonzero distance measured stands in for it.
  if (!(d.threshold_ > 0)) {
    for (const auto& e : dist) {
      if (e.first > 0) {
        d.threshold_ = e.first;
        break;
      }
    }
  }
  for (const std::size_t k : refs) d.points_.push_back(pts[k].z);
  return d;
}

double CorrectionDomain::distance(const CorrectionFeatures& x, double stop) const {
  if (points_.empty()) return 0;
  const std::vector<float> z = standardise(x);
  const double dims = static_cast<double>(used_.size());
  const double stop_sq = stop > 0 ? stop * stop * dims : 0;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : points_) {
    best = std::min(best, sq_distance(z, p, best));
    if (best <= stop_sq) break;
  }
  return std::sqrt(best / dims);
}

std::string CorrectionDomain::outside(const CorrectionFeatures& x) const {
  if (!active()) return {};
  const double dist = distance(x, threshold_);
  if (dist <= threshold_) return {};
  return fmt::format("distance {:.3g} to the nearest training row, beyond {:.3g}", dist, threshold_);
}

CorrectionDomain CorrectionDomain::restore(std::vector<double> mean, std::vector<double> scale,
                                           double threshold,
                                           std::vector<std::vector<float>> points) {
  CorrectionDomain d;
  if (mean.size() != kCorrectionFeatures || scale.size() != kCorrectionFeatures) {
    throw std::invalid_argument("domain: mean and scale need one value per feature");
  }
  if (!(threshold >= 0) || !std::isfinite(threshold)) {
    throw std::invalid_argument("domain: threshold is not a finite distance");
  }
  d.mean = std::move(mean);
  d.scale = std::move(scale);
  for (std::size_t j = 0; j < kCorrectionFeatures; ++j) {
    if (!(d.scale[j] >= 0) || !std::isfinite(d.scale[j]) || !std::isfinite(d.mean[j])) {
      throw std::invalid_argument(fmt::format("domain: feature {}: mean or scale not finite, or "
                                              "scale negative", j));
    }
    if (d.scale[j] > 0) d.used_.push_back(j);
  }
  for (std::size_t k = 0; k < points.size(); ++k) {
    if (points[k].size() != d.used_.size()) {
      throw std::invalid_argument(fmt::format("domain: point {} has {} values, expected {}", k,
                                              points[k].size(), d.used_.size()));
    }
    for (const float v : points[k]) {
      if (!std::isfinite(v)) throw std::invalid_argument(fmt::format("domain: point {} not finite", k));
    }
  }
  if (threshold > 0 && points.empty()) {
    throw std::invalid_argument("domain: a threshold without points");
  }
  d.threshold_ = threshold;
  d.points_ = std::move(points);
  return d;
}

}  // namespace npusim
