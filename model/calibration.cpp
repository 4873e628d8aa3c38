#include "model/calibration.h"

#include "model/lm_step.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "model/error.h"
#include "model/key_hash.h"
#include "model/op_table.h"

namespace npusim {

namespace {

using Ref = double* (*)(HwSpec&);

struct ParamDef {
  std::string key;
  double lo;
  double hi;
  Ref ref;  // nullptr: a [vector.cycles_per_repeat] class, see cls
  int cls = -1;
};

// The plausible ranges are wide on purpose: they stop a fit at physically absurd values, and the
// prior (the spec) does the gentle pulling.
const std::vector<ParamDef>& defs() {
  static const std::vector<ParamDef> d = [] {
    std::vector<ParamDef> v = {
        {"cube.efficiency", 0.2, 1.0, +[](HwSpec& h) { return &h.cube.efficiency; }},
        // a factor on efficiency for convolutions, (0, 1.5] like nz_efficiency
        {"cube.conv_efficiency", 0.2, 1.5, +[](HwSpec& h) { return &h.cube.conv_efficiency; }},
        {"cube.transposed_a_efficiency", 0.2, 1.0,
         +[](HwSpec& h) { return &h.cube.transposed_a_efficiency; }},
        {"cube.nd2nz_load_factor", 0.2, 1.0, +[](HwSpec& h) { return &h.cube.nd2nz_load_factor; }},
        {"cube.gm_to_l1_bytes_per_cycle", 16, 512,
         +[](HwSpec& h) { return &h.cube.gm_to_l1_bytes_per_cycle; }},
        {"cube.fixpipe_bytes_per_cycle", 16, 512,
         +[](HwSpec& h) { return &h.cube.fixpipe_bytes_per_cycle; }},
        {"vector.api_overhead_cycles", 1, 2000,
         +[](HwSpec& h) { return &h.vector.api_overhead_cycles; }},
        {"vector.scalar_cycles_per_element", 0.25, 200,
         +[](HwSpec& h) { return &h.vector.scalar_cycles_per_element; }},
        {"vector.scalar_cycles_per_index", 1, 2000,
         +[](HwSpec& h) { return &h.vector.scalar_cycles_per_index; }},
        {"memory.hbm_efficiency", 0.1, 1.0, +[](HwSpec& h) { return &h.memory.hbm_efficiency; }},
        {"memory.hbm_write_factor", 0.5, 2.0, +[](HwSpec& h) { return &h.memory.hbm_write_factor; }},
        {"memory.hbm_turnaround", 0.01, 1.0, +[](HwSpec& h) { return &h.memory.hbm_turnaround; }},
        {"memory.l2_efficiency", 0.1, 1.0, +[](HwSpec& h) { return &h.memory.l2_efficiency; }},
        {"memory.gm_read_bytes_per_cycle", 2, 256,
         +[](HwSpec& h) { return &h.memory.gm_read_bytes_per_cycle; }},
        {"memory.l2_read_bytes_per_cycle", 8, 512,
         +[](HwSpec& h) { return &h.memory.l2_read_bytes_per_cycle; }},
        {"memory.gm_write_bytes_per_cycle", 2, 256,
         +[](HwSpec& h) { return &h.memory.gm_write_bytes_per_cycle; }},
        {"memory.read_latency_cycles", 10, 10000,
         +[](HwSpec& h) { return &h.memory.read_latency_cycles; }},
        {"memory.write_latency_cycles", 10, 10000,
         +[](HwSpec& h) { return &h.memory.write_latency_cycles; }},
        {"memory.mte2_setup_cycles", 1, 5000, +[](HwSpec& h) { return &h.memory.mte2_setup_cycles; }},
        {"memory.mte3_setup_cycles", 1, 5000, +[](HwSpec& h) { return &h.memory.mte3_setup_cycles; }},
        {"overhead.launch_cycles", 10, 20000, +[](HwSpec& h) { return &h.overhead.launch_cycles; }},
        {"overhead.per_block_cycles", 0.5, 2000,
         +[](HwSpec& h) { return &h.overhead.per_block_cycles; }},
        {"overhead.conflict_coefficient", 0.01, 1.0,
         +[](HwSpec& h) { return &h.overhead.conflict_coefficient; }},
        {"aicpu.dispatch_us", 0.5, 500, +[](HwSpec& h) { return &h.aicpu.dispatch_us; }},
        {"aicpu.ns_per_element", 0.01, 100, +[](HwSpec& h) { return &h.aicpu.ns_per_element; }},
    };
    for (std::size_t c = 0; c < kVectorClassCount; ++c) {
      v.push_back({std::string("vector.cycles_per_repeat.") +
                       vector_class_name(static_cast<VectorClass>(c)),
                   0.25, 400, nullptr, static_cast<int>(c)});
    }
    return v;
  }();
  return d;
}

double* ref_of(HwSpec& hw, const ParamDef& d) {
  if (d.ref) return d.ref(hw);
  return &hw.vector.cycles_per_repeat[static_cast<std::size_t>(d.cls)];
}

const ParamDef* find_def(const std::string& key) {
  for (const auto& d : defs()) {
    if (d.key == key) return &d;
  }
  return nullptr;
}


double quantile_sorted(const std::vector<double>& v, double q) {
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

ErrorInterval interval_of(std::vector<double> ratios) {
  std::sort(ratios.begin(), ratios.end());
  ErrorInterval e;
  e.p10 = quantile_sorted(ratios, 0.1);
  e.p90 = quantile_sorted(ratios, 0.9);
  e.rows = static_cast<int>(ratios.size());
  return e;
}


// (type, input and output shapes, dtypes): a Slice of one input to two different outputs is two
// different ops.
std::string shape_key(const Sample& s) {
  std::string k = s.op.type;
  for (const auto* ts : {&s.op.inputs, &s.op.outputs}) {
    k += '>';
    for (const auto& t : *ts) {
      k += '|';
      k += dtype_name(t.dtype);
      for (auto d : t.shape) k += fmt::format(",{}", d);
    }
  }
  return k;
}

}  // namespace

std::vector<FittedParam> calibration_parameters(const HwSpec& hw) {
  std::vector<FittedParam> out;
  HwSpec copy = hw;
  for (const auto& d : defs()) {
    FittedParam p;
    p.key = d.key;
    p.prior = p.value = *ref_of(copy, d);
    p.lo = std::min(d.lo, p.prior);
    p.hi = std::max(d.hi, p.prior);
    out.push_back(p);
  }
  return out;
}

bool set_param(HwSpec& hw, const std::string& key, double value) {
  const ParamDef* d = find_def(key);
  if (!d) return false;
  *ref_of(hw, *d) = value;
  return true;
}

double get_param(const HwSpec& hw, const std::string& key) {
  const ParamDef* d = find_def(key);
  NPUSIM_CHECK(d != nullptr);
  // The accessor only takes the field's address, which is read here and never written: no copy
  // of the whole spec (its interval map and overlay lists) for one double. The fits call this
  // for every parameter of every candidate spec (the cross-run guard: a fifth of its time).
  return *ref_of(const_cast<HwSpec&>(hw), *d);
}

CalibrationResult calibrate(const std::vector<Sample>& samples, const std::vector<std::size_t>& fit,
                            const HwSpec& prior, const CalibrationOptions& opt) {
  CalibrationResult res;
  res.params = calibration_parameters(prior);
  const std::size_t np_all = res.params.size();
  std::vector<std::size_t> rows;
  for (const std::size_t i : fit) {
    if (samples.at(i).measured_us > 0) rows.push_back(i);
  }
  const auto n = static_cast<Eigen::Index>(rows.size());
  // Every candidate spec predicts the same rows: their ops are prepared once.
  std::vector<PreparedOp> prepared;
  prepared.reserve(rows.size());
  for (const std::size_t i : rows) prepared.emplace_back(samples[i].op);
  const double c = opt.robust_scale;
  const double inv_var = 1.0 / (opt.prior_sigma * opt.prior_sigma);

  auto spec_at = [&](const Eigen::VectorXd& u, const std::vector<std::size_t>& active) {
    HwSpec h = prior;
    for (std::size_t a = 0; a < active.size(); ++a) {
      const FittedParam& p = res.params[active[a]];
      set_param(h, p.key, p.prior * std::exp(u[static_cast<Eigen::Index>(a)]));
    }
    return h;
  };
  auto residuals = [&](const HwSpec& h) {
    Eigen::VectorXd r(n);
    for (Eigen::Index k = 0; k < n; ++k) {
      const Sample& s = samples[rows[static_cast<std::size_t>(k)]];
      const double pred =
          std::max(predict_sample(s, prepared[static_cast<std::size_t>(k)], h).predicted_us, 1e-6);
      r[k] = std::log(pred / s.measured_us);
    }
    return r;
  };
  auto cost_of = [&](const Eigen::VectorXd& r, const Eigen::VectorXd& u) {
    double cst = 0;
    for (Eigen::Index k = 0; k < r.size(); ++k) cst += 0.5 * c * c * std::log1p((r[k] / c) * (r[k] / c));
    return cst + 0.5 * inv_var * u.squaredNorm();
  };

  // Which parameters do the fit rows constrain at all? (a step of 10 % must move a prediction)
  std::vector<std::size_t> all(np_all);
  std::iota(all.begin(), all.end(), 0);
  const Eigen::VectorXd r0 = residuals(prior);
  std::vector<std::size_t> active;
  for (std::size_t j = 0; j < np_all; ++j) {
    Eigen::VectorXd u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(np_all));
    u[static_cast<Eigen::Index>(j)] = std::log(1.1);
    const Eigen::VectorXd rj = residuals(spec_at(u, all));
    if ((rj - r0).cwiseAbs().maxCoeff() > 1e-4) active.push_back(j);
  }
  for (const std::size_t j : active) res.params[j].identified = true;
  const auto na = static_cast<Eigen::Index>(active.size());
  Eigen::VectorXd lo(na), hi(na);
  for (Eigen::Index a = 0; a < na; ++a) {
    const FittedParam& p = res.params[active[static_cast<std::size_t>(a)]];
    lo[a] = std::log(p.lo / p.prior);
    hi[a] = std::log(p.hi / p.prior);
  }

  Eigen::VectorXd u = Eigen::VectorXd::Zero(na);
  Eigen::VectorXd r = r0;
  double cost = cost_of(r, u);
  res.initial_cost = cost;
  double mu = 1e-2;
  const double h_step = 0.02;
  Eigen::MatrixXd jtwj(na, na);
  for (int it = 0; it < opt.max_iterations && na > 0 && n > 0; ++it) {
    res.iterations = it + 1;
    Eigen::MatrixXd jac(n, na);
    for (Eigen::Index a = 0; a < na; ++a) {
      Eigen::VectorXd up = u;
      up[a] += h_step;
      jac.col(a) = (residuals(spec_at(up, active)) - r) / h_step;
    }
    Eigen::VectorXd w(n);
    for (Eigen::Index k = 0; k < n; ++k) w[k] = 1.0 / (1.0 + (r[k] / c) * (r[k] / c));
    jtwj = jac.transpose() * w.asDiagonal() * jac;
    jtwj.diagonal().array() += inv_var;
    const Eigen::VectorXd grad = jac.transpose() * (w.asDiagonal() * r) + inv_var * u;
    const double rel = lm_damped_step(
        jtwj, grad, lo, hi, 10, mu, u, r, cost,
        [&](const Eigen::VectorXd& at) { return residuals(spec_at(at, active)); }, cost_of);
    if (rel < 0) break;     // no step lowered the cost
    if (rel < 1e-6) break;  // converged
  }
  res.final_cost = cost;
  res.fitted = spec_at(u, active);
  // Uncertainty in log space from the robust curvature, scaled by the residual variance.
  double s2 = 0;
  for (Eigen::Index k = 0; k < n; ++k) s2 += r[k] * r[k] / (1.0 + (r[k] / c) * (r[k] / c));
  s2 /= std::max<double>(1.0, static_cast<double>(n - na));
  Eigen::MatrixXd cov = na > 0 ? Eigen::MatrixXd(jtwj.inverse() * s2) : Eigen::MatrixXd();
  for (Eigen::Index a = 0; a < na; ++a) {
    FittedParam& p = res.params[active[static_cast<std::size_t>(a)]];
    p.value = p.prior * std::exp(u[a]);
    p.rel_sigma = std::sqrt(std::max(0.0, cov(a, a)));
  }
  return res;
}

void split_samples(const std::vector<Sample>& samples, SplitKind kind, double holdout_fraction,
                   std::uint64_t seed, std::vector<std::size_t>& fit,
                   std::vector<std::size_t>& holdout) {
  fit.clear();
  holdout.clear();
  if (kind == SplitKind::kFile) {
    std::map<std::string, bool> held;
    for (const auto& s : samples) held.emplace(s.group, false);
    for (auto& [g, h] : held) h = unit_interval(key_hash(g, seed)) < holdout_fraction;
    // at least one group on each side when there are two or more
    if (held.size() >= 2) {
      const bool any_held = std::any_of(held.begin(), held.end(), [](auto& kv) { return kv.second; });
      const bool any_fit = std::any_of(held.begin(), held.end(), [](auto& kv) { return !kv.second; });
      if (!any_held) held.rbegin()->second = true;
      if (!any_fit) held.begin()->second = false;
    }
    // Held-out profiles are tested only on shapes the fit never saw: the same (type, shapes,
    // dtypes) repeats across ranks and layers, and testing on it would leak.
    std::set<std::string> fit_keys;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (!held[samples[i].group]) {
        fit.push_back(i);
        fit_keys.insert(shape_key(samples[i]));
      }
    }
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (held[samples[i].group] && fit_keys.count(shape_key(samples[i])) == 0) holdout.push_back(i);
    }
    return;
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const std::string key = kind == SplitKind::kShape ? shape_key(samples[i]) : std::to_string(i);
    (unit_interval(key_hash(key, seed)) < holdout_fraction ? holdout : fit).push_back(i);
  }
}

std::map<std::string, ErrorInterval> prediction_intervals(const std::vector<Sample>& samples,
                                                          const std::vector<std::size_t>& holdout,
                                                          const HwSpec& fitted,
                                                          std::size_t min_rows) {
  std::map<std::string, std::vector<double>> by_family;
  std::vector<double> all;
  for (const std::size_t i : holdout) {
    const Sample& s = samples.at(i);
    if (!(s.measured_us > 0)) continue;
    const double pred = predict_sample(s, fitted).predicted_us;
    if (!(pred > 0)) continue;
    const double ratio = s.measured_us / pred;
    by_family[family_name(s.op.kind->family)].push_back(ratio);
    all.push_back(ratio);
  }
  std::map<std::string, ErrorInterval> out;
  const std::size_t need = std::max<std::size_t>(min_rows, 1);
  if (all.size() < need) return out;
  for (auto& [family, ratios] : by_family) {
    if (ratios.size() >= need) out.emplace(family, interval_of(std::move(ratios)));
  }
  out.emplace("all", interval_of(std::move(all)));
  return out;
}

std::optional<IntervalLookup> interval_for(const HwSpec& hw, OpFamily family) {
  const std::string name = family_name(family);
  if (const auto it = hw.intervals.find(name); it != hw.intervals.end()) {
    return IntervalLookup{it->second, name};
  }
  if (const auto it = hw.intervals.find("all"); it != hw.intervals.end()) {
    return IntervalLookup{it->second, "all"};
  }
  return std::nullopt;
}

std::map<OpFamily, double> interval_factors(const HwSpec& hw, IntervalEnd end) {
  std::map<OpFamily, double> out;
  std::set<OpFamily> families{OpFamily::kGeneric};
  for (const OpKindInfo& k : op_table()) families.insert(k.family);
  for (const OpFamily f : families) {
    if (const auto lookup = interval_for(hw, f)) {
      out.emplace(f, end == IntervalEnd::kP10 ? lookup->interval.p10 : lookup->interval.p90);
    }
  }
  return out;
}

std::string interval_source_text(const IntervalLookup& lookup) {
  if (lookup.source == "all") {
    return fmt::format("holdout of {} rows, all families pooled", lookup.interval.rows);
  }
  return fmt::format("holdout of {} {} rows", lookup.interval.rows, lookup.source);
}

std::string overlay_toml(const CalibrationResult& r, const std::vector<std::string>& header_lines,
                         const std::vector<std::pair<std::string, std::string>>& meta,
                         const std::map<std::string, ErrorInterval>& intervals,
                         const std::vector<std::string>& interval_comment) {
  std::string s;
  for (const auto& l : header_lines) s += "# " + l + "\n";
  s += "\n[meta]\n";
  for (const auto& [k, v] : meta) s += fmt::format("{} = \"{}\"\n", k, v);
  std::map<std::string, std::vector<const FittedParam*>> by_section;
  for (const auto& p : r.params) {
    if (!p.identified) continue;
    const auto dot = p.key.rfind('.');
    by_section[p.key.substr(0, dot)].push_back(&p);
  }
  for (const auto& [section, ps] : by_section) {
    s += fmt::format("\n[{}]\n", section);
    for (const FittedParam* p : ps) {
      s += fmt::format("{} = {:.6g}  # prior {:.6g}, fitted ±{:.0f}%\n", p->key.substr(p->key.rfind('.') + 1),
                       p->value, p->prior, 100 * p->rel_sigma);
    }
  }
  if (!interval_comment.empty()) s += "\n";
  for (const auto& l : interval_comment) s += "# " + l + "\n";
  for (const auto& [name, e] : intervals) {
    s += fmt::format("\n[intervals.{}]\np10 = {:.6g}\np90 = {:.6g}\nrows = {}\n", name, e.p10,
                     e.p90, e.rows);
  }
  return s;
}

}  // namespace npusim
