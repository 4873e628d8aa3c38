// Anchored vs plain predictions of unseen shapes (model/anchor_accuracy.h).
#include "model/anchor_accuracy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "model/measured.h"

namespace npusim {

std::string shape_key(const OpDesc& op) {
  std::string k = op.type;
  for (const TensorDesc& t : op.inputs) {
    k += '|';
    for (std::size_t d = 0; d < t.shape.size(); ++d) k += fmt::format("{}{}", d ? "," : "", t.shape[d]);
    k += fmt::format(":{}:{}", static_cast<int>(t.dtype), static_cast<int>(t.format));
  }
  return k;
}

double shape_distance(const OpDesc& a, const OpDesc& b) noexcept {
  if (a.inputs.size() != b.inputs.size()) return std::numeric_limits<double>::infinity();
  const auto lg = [](std::int64_t v) { return std::log(static_cast<double>(std::max<std::int64_t>(v, 1))); };
  double d = 0;
  for (std::size_t j = 0; j < a.inputs.size(); ++j) {
    const TensorDesc& x = a.inputs[j];
    const TensorDesc& y = b.inputs[j];
    if (x.shape.size() == y.shape.size()) {
      for (std::size_t k = 0; k < x.shape.size(); ++k) d += std::abs(lg(x.shape[k]) - lg(y.shape[k]));
    } else {
      d += std::abs(lg(x.elements()) - lg(y.elements())) + 1;
    }
    if (x.dtype != y.dtype) d += 1;
  }
  return d;
}

bool same_structure(const OpDesc& a, const OpDesc& b) noexcept {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (std::size_t j = 0; j < a.inputs.size(); ++j) {
    const TensorDesc& x = a.inputs[j];
    const TensorDesc& y = b.inputs[j];
    if (x.dtype != y.dtype || x.shape.size() != y.shape.size()) return false;
    for (std::size_t k = 0; k < x.shape.size(); ++k) {
      if ((x.shape[k] == 1) != (y.shape[k] == 1)) return false;
    }
  }
  return true;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One measured shape of the source: a representative row and the median of its measurements.
struct Measured {
  std::size_t row = 0;
  double median_us = 0;
  double predicted_us = 0;
};

}  // namespace

AnchorComparison compare_anchoring(const std::vector<Sample>& source,
                                   const std::vector<Sample>& target, const HwSpec& hw) {
  AnchorComparison out;
  out.target_rows = target.size();
  // The source's distinct shapes, grouped by type.
  std::unordered_map<std::string, std::vector<double>> times;
  std::unordered_map<std::string, std::size_t> first;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::string k = shape_key(source[i].op);
    if (!first.count(k)) {
      first.emplace(k, i);
      keys.push_back(k);
    }
    times[k].push_back(source[i].measured_us);
  }
  std::unordered_map<std::string, std::vector<Measured>> by_type;
  for (const std::string& k : keys) {
    Measured m;
    m.row = first.at(k);
    m.median_us = median(times.at(k));
    m.predicted_us = predict_sample(source[m.row], hw).predicted_us;
    by_type[source[m.row].op.type].push_back(m);
  }
  std::vector<double> measured;
  std::vector<double> plain;
  std::vector<double> anchored;
  std::vector<double> nearest;
  std::vector<double> structured;
  struct Bucket {
    std::vector<double> m, p, a;
  };
  std::map<std::string, Bucket> types;
  for (const Sample& s : target) {
    if (first.count(shape_key(s.op))) {
      ++out.seen;
      continue;
    }
    const auto it = by_type.find(s.op.type);
    const Measured* best = nullptr;
    const Measured* best_same = nullptr;
    double best_d = std::numeric_limits<double>::infinity();
    double best_same_d = best_d;
    if (it != by_type.end()) {
      for (const Measured& m : it->second) {
        const double d = shape_distance(source[m.row].op, s.op);
        if (d < best_d) {
          best_d = d;
          best = &m;
        }
        if (d < best_same_d && same_structure(source[m.row].op, s.op)) {
          best_same_d = d;
          best_same = &m;
        }
      }
    }
    if (best == nullptr) {
      ++out.no_same_type;
      continue;
    }
    const double p = predict_sample(s, hw).predicted_us;
    // A source prediction of zero leaves nothing to scale: the measured time as it is.
    const double a = anchored_us(best->median_us, p, best->predicted_us).value_or(best->median_us);
    measured.push_back(s.measured_us);
    plain.push_back(p);
    anchored.push_back(a);
    nearest.push_back(best->median_us);
    const double st =
        best_same != nullptr
            ? anchored_us(best_same->median_us, p, best_same->predicted_us).value_or(p)
            : p;
    structured.push_back(st);
    out.with_structure += best_same != nullptr ? 1 : 0;
    out.rows.push_back({static_cast<std::size_t>(&s - target.data()), best->row, s.measured_us, p,
                        a, best->median_us, st, best_same != nullptr});
    Bucket& b = types[s.op.type];
    b.m.push_back(s.measured_us);
    b.p.push_back(p);
    b.a.push_back(a);
  }
  out.compared = measured.size();
  out.plain = summarize(measured, plain);
  out.anchored = summarize(measured, anchored);
  out.nearest = summarize(measured, nearest);
  out.structured = summarize(measured, structured);
  std::vector<double> sm, sp, sa;
  for (const AnchorRow& r : out.rows) {
    if (!r.has_structured) continue;
    sm.push_back(r.measured_us);
    sp.push_back(r.plain_us);
    sa.push_back(r.structured_us);
  }
  out.structure_rows_plain = summarize(sm, sp);
  out.structure_rows_anchored = summarize(sm, sa);
  for (const auto& [type, b] : types) {
    if (b.m.size() >= 3) out.by_type[type] = {summarize(b.m, b.p), summarize(b.m, b.a)};
  }
  return out;
}

}  // namespace npusim
