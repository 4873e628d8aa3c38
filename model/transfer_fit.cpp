#include "model/transfer_fit.h"

#include "model/lm_step.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "model/calibration.h"
#include "model/error.h"
#include "model/key_hash.h"

namespace npusim {

namespace {

constexpr const char* kClock = "chip.freq_mhz";

// Chip parameters: how fast this silicon and its memory system are. Everything else is how a
// CANN kernel uses them (the kernel part).
const std::set<std::string>& chip_keys() {
  static const std::set<std::string> k = {
      kClock,
      "memory.hbm_efficiency",
      "memory.hbm_write_factor",
      "memory.hbm_turnaround",
      "memory.l2_efficiency",
      "memory.gm_read_bytes_per_cycle",
      "memory.l2_read_bytes_per_cycle",
      "memory.gm_write_bytes_per_cycle",
      "memory.read_latency_cycles",
      "memory.write_latency_cycles",
      "cube.gm_to_l1_bytes_per_cycle",
      "cube.fixpipe_bytes_per_cycle",
      // The share of the cube's peak a GEMM sustains is how the chip feeds its cube (coupled or
      // split cores, L1 size, MTE rates) and its own GEMM library (TBE mmad on the 910, Ascend C
      // matmul on the 910B): one value over both made the 910's TBE GEMMs set the 910B's. As a
      // kernel parameter it was 0.65x of the spec in the Llama fold and the held-out Llama MatMulV3
      // rows 57.6 % MAPE; per chip (Llama keeps its spec) 11.2 % (docs/accuracy.md, "GEMMs on the
      // 30-core 910").
      "cube.efficiency",
      // A convolution's share of the cube's peak relative to a GEMM's (load3d img2col operands
      // and the conv tiler, where a GEMM has ND/NZ operands and the matmul tiler): per chip, for
      // the reason above. Shared with cube.efficiency, the 910's BERT and ViT GEMMs (0.35-0.94
      // of measured uncalibrated) and its convolutions (0.52-0.86) were fitted one rate; apart,
      // the folds fit this 1.22-1.35 on the 910 (docs/accuracy_mechanisms.md, "Convolutions deal
      // whole images").
      "cube.conv_efficiency",
  };
  return k;
}

double get(const HwSpec& hw, const std::string& key) {
  return key == kClock ? hw.chip.freq_mhz : get_param(hw, key);
}

void set(HwSpec& hw, const std::string& key, double v) {
  if (key == kClock) {
    hw.chip.freq_mhz = v;
  } else {
    NPUSIM_CHECK(set_param(hw, key, v));
  }
}



struct Param {
  std::string key;
  ParamScope scope;
  std::string chip;  // chip scope only
  double lo = 0, hi = 0;  // log-space bounds
};

// One fit row: a shape key of one run, its median measured time, weighted by its row count.
struct Row {
  std::size_t group;
  Sample sample;
  double weight;
  bool validation;
  std::optional<PreparedOp> op;  ///< sample.op prepared once: every candidate spec predicts it
};

std::vector<Row> build_rows(const std::vector<FitGroup>& groups, const TransferOptions& o) {
  std::vector<Row> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const FitGroup& grp = groups[g];
    std::unordered_map<std::string, std::vector<std::size_t>> by_key;
    std::vector<std::string> order;
    for (const std::size_t i : grp.rows) {
      const Sample& s = grp.samples->at(i);
      if (!(s.measured_us > 0)) continue;
      std::string k = fmt::format("{}#{}", sample_shape_key(s), s.block_dim);
      auto [it, fresh] = by_key.try_emplace(k);
      if (fresh) order.push_back(k);
      it->second.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return key_hash(a, o.seed) < key_hash(b, o.seed);
    });
    if (order.size() > o.max_keys_per_run) order.resize(o.max_keys_per_run);
    double total = 0;
    const std::size_t first = out.size();
    for (const auto& k : order) {
      const auto& idx = by_key[k];
      std::vector<double> t;
      for (const std::size_t i : idx) t.push_back(grp.samples->at(i).measured_us);
      std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
      Row r{g, grp.samples->at(idx.front()), static_cast<double>(idx.size()),
            unit_interval(key_hash(k, o.seed + 7919)) < o.validation_fraction, std::nullopt};
      r.sample.measured_us = t[t.size() / 2];
      r.op.emplace(r.sample.op);
      total += r.weight;
      out.push_back(std::move(r));
    }
    // Each run weighs as many keys as it gives, whatever its row count.
    for (std::size_t k = first; k < out.size(); ++k) {
      out[k].weight *= static_cast<double>(out.size() - first) / total;
    }
  }
  return out;
}

class Problem {
 public:
  Problem(const std::vector<FitGroup>& groups, std::vector<Param> params)
      : groups_(groups), params_(std::move(params)) {}

  [[nodiscard]] HwSpec spec(std::size_t g, const Eigen::VectorXd& u) const {
    HwSpec h = groups_[g].prior;
    for (std::size_t a = 0; a < params_.size(); ++a) {
      const Param& p = params_[a];
      if (p.scope == ParamScope::kChip && p.chip != groups_[g].chip) continue;
      const double v = get(groups_[g].prior, p.key) * std::exp(u[static_cast<Eigen::Index>(a)]);
      set(h, p.key, v);
    }
    return h;
  }
  // log(pred / measured) of `rows`, for the groups in `touched` only (others left as in `base`).
  [[nodiscard]] Eigen::VectorXd residuals(const std::vector<const Row*>& rows,
                                          const Eigen::VectorXd& u, const Eigen::VectorXd* base,
                                          const std::string* only_chip) const {
    Eigen::VectorXd r = base ? *base : Eigen::VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));
    std::vector<std::unique_ptr<HwSpec>> specs(groups_.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const std::size_t g = rows[k]->group;
      if (only_chip && groups_[g].chip != *only_chip) continue;
      if (!specs[g]) specs[g] = std::make_unique<HwSpec>(spec(g, u));
      const double pred =
          std::max(predict_sample(rows[k]->sample, *rows[k]->op, *specs[g]).predicted_us, 1e-6);
      r[static_cast<Eigen::Index>(k)] = std::log(pred / rows[k]->sample.measured_us);
    }
    return r;
  }
  [[nodiscard]] const std::vector<Param>& params() const { return params_; }

 private:
  const std::vector<FitGroup>& groups_;
  std::vector<Param> params_;
};

// Weighted mean |log error| pooled, and the median over groups of each group's own.
std::pair<double, double> validation_error(const std::vector<const Row*>& rows,
                                           const Eigen::VectorXd& r, std::size_t n_groups) {
  double sw = 0, s = 0;
  std::vector<double> gw(n_groups, 0), gs(n_groups, 0);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double e = std::abs(r[static_cast<Eigen::Index>(k)]) * rows[k]->weight;
    sw += rows[k]->weight;
    s += e;
    gw[rows[k]->group] += rows[k]->weight;
    gs[rows[k]->group] += e;
  }
  std::vector<double> per;
  for (std::size_t g = 0; g < n_groups; ++g) {
    if (gw[g] > 0) per.push_back(gs[g] / gw[g]);
  }
  std::sort(per.begin(), per.end());
  return {sw > 0 ? s / sw : 0, per.empty() ? 0 : per[per.size() / 2]};
}

}  // namespace

ParamScope param_scope(const std::string& key) {
  return chip_keys().count(key) ? ParamScope::kChip : ParamScope::kKernel;
}

std::string sample_shape_key(const Sample& s) {
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

HwSpec apply_transfer(const HwSpec& prior, const std::string& chip, const TransferFit& fit) {
  HwSpec h = prior;
  for (const auto& [key, f] : fit.kernel) set(h, key, get(prior, key) * std::exp(f));
  if (const auto it = fit.chip.find(chip); it != fit.chip.end()) {
    for (const auto& [key, f] : it->second) set(h, key, get(prior, key) * std::exp(f));
  }
  return h;
}

TransferFit fit_transfer(const std::vector<FitGroup>& groups, const TransferOptions& o) {
  TransferFit out;
  if (groups.empty()) {
    out.kept_spec = true;
    out.verdict = "no fit rows: the spec values are kept";
    return out;
  }
  const std::vector<Row> all_rows = build_rows(groups, o);
  std::vector<const Row*> fit_rows, val_rows;
  for (const Row& r : all_rows) (r.validation ? val_rows : fit_rows).push_back(&r);
  out.fit_rows = fit_rows.size();
  out.validation_rows = val_rows.size();

  // Candidate parameters: every kernel key once, every chip key once per chip seen; bounds in
  // log space are the tightest over the runs that share the factor.
  std::vector<Param> cands;
  std::set<std::string> chips;
  for (const auto& g : groups) chips.insert(g.chip);
  auto bounds = [&](Param& p) {
    p.lo = -1e9;
    p.hi = 1e9;
    for (const auto& g : groups) {
      if (p.scope == ParamScope::kChip && g.chip != p.chip) continue;
      const double prior = get(g.prior, p.key);
      double lo = prior * 0.5, hi = prior * 1.5;  // the clock: within half of its nominal value
      if (p.key != kClock) {
        for (const auto& fp : calibration_parameters(g.prior)) {
          if (fp.key == p.key) {
            lo = fp.lo;
            hi = fp.hi;
          }
        }
      }
      p.lo = std::max(p.lo, std::log(lo / prior));
      p.hi = std::min(p.hi, std::log(hi / prior));
    }
  };
  for (const auto& fp : calibration_parameters(groups.front().prior)) {
    if (param_scope(fp.key) == ParamScope::kKernel) {
      Param p{fp.key, ParamScope::kKernel, "", 0, 0};
      bounds(p);
      cands.push_back(p);
    }
  }
  for (const auto& c : chips) {
    bool clock_free = false;
    for (const auto& g : groups) clock_free = clock_free || (g.chip == c && !g.clock_measured);
    for (const auto& key : chip_keys()) {
      if (key == kClock && !clock_free) continue;
      Param p{key, ParamScope::kChip, c, 0, 0};
      bounds(p);
      cands.push_back(p);
    }
  }

  // Keep the parameters the fit rows constrain (a 10 % step moves some prediction).
  const Problem probe(groups, cands);
  const Eigen::VectorXd zero_all = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(cands.size()));
  const Eigen::VectorXd r0_all = probe.residuals(fit_rows, zero_all, nullptr, nullptr);
  std::vector<Param> active;
  for (std::size_t a = 0; a < cands.size(); ++a) {
    Eigen::VectorXd u = zero_all;
    u[static_cast<Eigen::Index>(a)] = std::log(1.1);
    const std::string* only = cands[a].scope == ParamScope::kChip ? &cands[a].chip : nullptr;
    const Eigen::VectorXd r = probe.residuals(fit_rows, u, &r0_all, only);
    if (r.size() > 0 && (r - r0_all).cwiseAbs().maxCoeff() > 1e-4) active.push_back(cands[a]);
  }
  const Problem prob(groups, active);
  const auto na = static_cast<Eigen::Index>(active.size());
  const auto n = static_cast<Eigen::Index>(fit_rows.size());
  Eigen::VectorXd sw(n);
  for (Eigen::Index k = 0; k < n; ++k) sw[k] = std::sqrt(fit_rows[static_cast<std::size_t>(k)]->weight);
  Eigen::VectorXd lo(na), hi(na);
  for (Eigen::Index a = 0; a < na; ++a) {
    lo[a] = active[static_cast<std::size_t>(a)].lo;
    hi[a] = active[static_cast<std::size_t>(a)].hi;
  }
  const double c = o.robust_scale;
  const double inv_var = 1.0 / (o.prior_sigma * o.prior_sigma);
  auto cost_of = [&](const Eigen::VectorXd& r, const Eigen::VectorXd& u) {
    double cst = 0;
    for (Eigen::Index k = 0; k < r.size(); ++k) {
      cst += sw[k] * sw[k] * 0.5 * c * c * std::log1p((r[k] / c) * (r[k] / c));
    }
    return cst + 0.5 * inv_var * u.squaredNorm();
  };
  Eigen::VectorXd u = Eigen::VectorXd::Zero(na);
  Eigen::VectorXd r = prob.residuals(fit_rows, u, nullptr, nullptr);
  double cost = cost_of(r, u);
  double mu = 1e-2;
  const double h_step = 0.02;
  for (int it = 0; it < o.max_iterations && na > 0 && n > 0; ++it) {
    out.iterations = it + 1;
    Eigen::MatrixXd jac = Eigen::MatrixXd::Zero(n, na);
    for (Eigen::Index a = 0; a < na; ++a) {
      Eigen::VectorXd up = u;
      up[a] += h_step;
      const Param& p = active[static_cast<std::size_t>(a)];
      const std::string* only = p.scope == ParamScope::kChip ? &p.chip : nullptr;
      jac.col(a) = (prob.residuals(fit_rows, up, &r, only) - r) / h_step;
    }
    Eigen::VectorXd w(n);
    for (Eigen::Index k = 0; k < n; ++k) w[k] = sw[k] * sw[k] / (1.0 + (r[k] / c) * (r[k] / c));
    Eigen::MatrixXd jtwj = jac.transpose() * w.asDiagonal() * jac;
    jtwj.diagonal().array() += inv_var;
    const Eigen::VectorXd grad = jac.transpose() * (w.asDiagonal() * r) + inv_var * u;
    const double rel = lm_damped_step(
        jtwj, grad, lo, hi, 8, mu, u, r, cost,
        [&](const Eigen::VectorXd& at) { return prob.residuals(fit_rows, at, nullptr, nullptr); },
        cost_of);
    if (rel < 0) break;     // no step lowered the cost
    if (rel < 1e-5) break;  // converged
  }

  // Spec or fit: decided on the held-out shape keys.
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(na);
  const auto [spec_pool, spec_median] =
      validation_error(val_rows, prob.residuals(val_rows, zero, nullptr, nullptr), groups.size());
  const auto [fit_pool, fit_median] =
      validation_error(val_rows, prob.residuals(val_rows, u, nullptr, nullptr), groups.size());
  out.validation_spec = spec_pool;
  out.validation_fit = fit_pool;
  const bool checked = !val_rows.empty();
  const bool better = !checked || (fit_pool < spec_pool && fit_median <= spec_median);
  if (!better || na == 0) {
    out.kept_spec = true;
    out.verdict = na == 0 ? "no parameter is constrained by the fit rows: the spec values are kept"
                          : fmt::format("the fit does not beat the spec on {} held-out shape keys "
                                        "(mean |log error| {:.3f} vs {:.3f}, median over runs "
                                        "{:.3f} vs {:.3f}): the spec values are kept",
                                        val_rows.size(), fit_pool, spec_pool, fit_median,
                                        spec_median);
    return out;
  }
  for (Eigen::Index a = 0; a < na; ++a) {
    const Param& p = active[static_cast<std::size_t>(a)];
    if (p.scope == ParamScope::kKernel) {
      out.kernel[p.key] = u[a];
    } else {
      out.chip[p.chip][p.key] = u[a];
    }
  }
  out.verdict = checked ? fmt::format("fit kept: mean |log error| on {} held-out shape keys {:.3f} "
                                      "-> {:.3f} (median over runs {:.3f} -> {:.3f})",
                                      val_rows.size(), spec_pool, fit_pool, spec_median, fit_median)
                        : "fit kept (no held-out keys to check it on)";
  return out;
}

}  // namespace npusim
