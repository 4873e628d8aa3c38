#include "model/cross_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>

#include "model/error.h"
#include "model/key_hash.h"

namespace npusim {

namespace {

std::vector<std::size_t> all_rows(const CvRun& r) {
  std::vector<std::size_t> v(r.samples.size());
  std::iota(v.begin(), v.end(), 0);
  return v;
}

FitGroup group_of(const CvRun& r, std::vector<std::size_t> rows) {
  FitGroup g;
  g.run = r.name;
  g.chip = r.chip;
  g.prior = r.spec;
  g.clock_measured = r.clock_measured;
  g.samples = &r.samples;
  g.rows = std::move(rows);
  return g;
}

// Measured and predicted device time of `rows` of a run on `hw`, appended.
void predict_rows(const CvRun& r, const std::vector<std::size_t>& rows, const HwSpec& hw,
                  std::vector<double>& measured, std::vector<double>& predicted) {
  for (const std::size_t i : rows) {
    measured.push_back(r.samples[i].measured_us);
    predicted.push_back(predict_sample(r.samples[i], hw).predicted_us);
  }
}

ErrorSummary summary_on(const CvRun& r, const HwSpec& hw, std::vector<double>* kept = nullptr) {
  std::vector<double> m, p;
  predict_rows(r, all_rows(r), hw, m, p);
  if (kept) *kept = p;
  return summarize(m, p);
}

// Fit on every run for which `train` is true.
TransferFit fit_on(const std::vector<CvRun>& runs, const std::vector<bool>& train,
                   const TransferOptions& o) {
  std::vector<FitGroup> groups;
  for (std::size_t j = 0; j < runs.size(); ++j) {
    if (train[j]) groups.push_back(group_of(runs[j], all_rows(runs[j])));
  }
  return fit_transfer(groups, o);
}

// The learned correction of one fold: trained on `rows[j]` of each run j with rows, each
// predicted with the fold's calibrated overlay (the prediction the fold is scored on).
Correction train_correction(const std::vector<CvRun>& runs,
                            const std::vector<std::vector<std::size_t>>& rows,
                            const TransferFit& fit, const CorrectionOptions& o, CvReport& rep) {
  if (o.kind == CorrectionKind::kNone) return {};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<CorrectionRunRows> in;
  for (std::size_t j = 0; j < runs.size(); ++j) {
    if (rows[j].empty()) continue;
    in.push_back({&runs[j].samples, rows[j], apply_transfer(runs[j].spec, runs[j].chip, fit)});
  }
  Correction c = Correction::train(balanced_set(in, o.features, o.run_weight_power), o);
  rep.correction_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++rep.corrections_trained;
  return c;
}

std::vector<std::vector<std::size_t>> rows_where(const std::vector<CvRun>& runs,
                                                 const std::vector<bool>& train) {
  std::vector<std::vector<std::size_t>> rows(runs.size());
  for (std::size_t j = 0; j < runs.size(); ++j) {
    if (train[j]) rows[j] = all_rows(runs[j]);
  }
  return rows;
}

// A run's figures on `hw` after the correction `c`.
ErrorSummary corrected_on(const CvRun& r, const HwSpec& hw, const Correction& c, std::size_t& ood,
                          std::vector<double>* kept = nullptr) {
  std::vector<double> m;
  for (const auto& s : r.samples) m.push_back(s.measured_us);
  std::vector<double> p = corrected_predictions(r.samples, all_rows(r), hw, c, &ood);
  const ErrorSummary e = summarize(m, p);
  if (kept) *kept = std::move(p);
  return e;
}

}  // namespace

OverRuns over_runs(std::vector<double> v) {
  OverRuns o;
  if (v.empty()) return o;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  o.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  o.worst = v.back();
  return o;
}

CvReport cross_validate(const std::vector<CvRun>& runs, const CvOptions& opt) {
  if (runs.size() < 2) {
    throw InputError({"<corpus>", 0, 0},
                     fmt::format("cross-validation needs at least two runs; got {}", runs.size()));
  }
  CvReport rep;
  std::map<std::string, std::vector<std::size_t>> by_workload;
  for (std::size_t i = 0; i < runs.size(); ++i) by_workload[runs[i].workload].push_back(i);

  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CvRun& r = runs[i];
    CvRunResult res;
    res.name = r.name;
    res.workload = r.workload;
    res.chip = r.chip;
    const auto keep = [&](std::vector<double>& v) { return opt.keep_rows ? &v : nullptr; };
    res.uncalibrated = summary_on(r, r.spec, keep(res.uncal_us));
    std::vector<bool> train(runs.size(), true);
    train[i] = false;
    const TransferFit fit = fit_on(runs, train, opt.fit);
    res.loro = summary_on(r, apply_transfer(r.spec, r.chip, fit), keep(res.loro_us));
    res.loro_corrected = res.loro;
    if (opt.correction.kind != CorrectionKind::kNone) {
      const Correction c = train_correction(runs, rows_where(runs, train), fit, opt.correction, rep);
      res.loro_corrected = corrected_on(r, apply_transfer(r.spec, r.chip, fit), c, res.loro_ood,
                                        keep(res.loro_corrected_us));
    }
    res.loro_verdict = fit.verdict;
    res.loro_kept_spec = fit.kept_spec;
    rep.runs.push_back(std::move(res));
  }

  if (opt.leave_one_workload_out) {
    for (const auto& [w, members] : by_workload) {
      std::vector<bool> train(runs.size(), true);
      for (const std::size_t i : members) train[i] = false;
      if (members.size() == 1) {
        // The same training set as the run's leave-one-run-out fold.
        CvRunResult& res = rep.runs[members.front()];
        res.lowo = res.loro;
        res.lowo_verdict = res.loro_verdict;
        res.lowo_kept_spec = res.loro_kept_spec;
        res.lowo_corrected = res.loro_corrected;
        res.lowo_ood = res.loro_ood;
        continue;
      }
      if (std::none_of(train.begin(), train.end(), [](bool b) { return b; })) continue;
      const TransferFit fit = fit_on(runs, train, opt.fit);
      Correction c;
      if (opt.correction.kind != CorrectionKind::kNone) {
        c = train_correction(runs, rows_where(runs, train), fit, opt.correction, rep);
      }
      for (const std::size_t i : members) {
        CvRunResult& res = rep.runs[i];
        const HwSpec hw = apply_transfer(runs[i].spec, runs[i].chip, fit);
        res.lowo = summary_on(runs[i], hw);
        res.lowo_corrected = res.lowo;
        if (c.kind() != CorrectionKind::kNone) {
          res.lowo_corrected = corrected_on(runs[i], hw, c, res.lowo_ood);
        }
        res.lowo_verdict = fit.verdict;
        res.lowo_kept_spec = fit.kept_spec;
      }
    }
  }

  for (int s = 1; s <= opt.shape_seeds; ++s) {
    const auto seed = static_cast<std::uint64_t>(s);
    std::vector<FitGroup> groups;
    std::vector<std::vector<std::size_t>> held(runs.size()), fitted(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::vector<std::size_t> fit_rows;
      for (std::size_t k = 0; k < runs[i].samples.size(); ++k) {
        const bool out = unit_hash(sample_shape_key(runs[i].samples[k]), seed) < opt.shape_holdout;
        (out ? held[i] : fit_rows).push_back(k);
      }
      fitted[i] = fit_rows;
      groups.push_back(group_of(runs[i], std::move(fit_rows)));
    }
    TransferOptions o = opt.fit;
    o.seed = seed;
    const TransferFit fit = fit_transfer(groups, o);
    std::vector<double> m, pu, mc, pc, pk;
    Correction c;
    if (opt.correction.kind != CorrectionKind::kNone) {
      c = train_correction(runs, fitted, fit, opt.correction, rep);
    }
    CvShapeSplit sp;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const HwSpec hw = apply_transfer(runs[i].spec, runs[i].chip, fit);
      predict_rows(runs[i], held[i], runs[i].spec, m, pu);
      predict_rows(runs[i], held[i], hw, mc, pc);
      std::size_t ood = 0;
      const std::vector<double> k = corrected_predictions(runs[i].samples, held[i], hw, c, &ood);
      pk.insert(pk.end(), k.begin(), k.end());
      sp.ood += ood;
    }
    sp.seed = seed;
    sp.uncalibrated = summarize(m, pu);
    sp.calibrated = summarize(mc, pc);
    sp.corrected = summarize(mc, pk);
    sp.kept_spec = fit.kept_spec;
    rep.shape.push_back(sp);
  }

  std::vector<double> um, lm, wm, ut, lt, wt, lcm, wcm, lct, wct;
  for (const auto& r : rep.runs) {
    lcm.push_back(r.loro_corrected.mape);
    lct.push_back(r.loro_corrected.step_total_error);
    rep.loro_ood += r.loro_ood;
    rep.loro_rows += r.loro.rows;
    if (opt.leave_one_workload_out) {
      wcm.push_back(r.lowo_corrected.mape);
      wct.push_back(r.lowo_corrected.step_total_error);
      rep.lowo_ood += r.lowo_ood;
    }
    um.push_back(r.uncalibrated.mape);
    lm.push_back(r.loro.mape);
    ut.push_back(r.uncalibrated.step_total_error);
    lt.push_back(r.loro.step_total_error);
    if (opt.leave_one_workload_out) {
      wm.push_back(r.lowo.mape);
      wt.push_back(r.lowo.step_total_error);
    }
  }
  rep.uncal_mape = over_runs(um);
  rep.loro_mape = over_runs(lm);
  rep.lowo_mape = over_runs(wm);
  rep.uncal_total = over_runs(ut);
  rep.loro_total = over_runs(lt);
  rep.lowo_total = over_runs(wt);
  rep.loro_corr_mape = over_runs(lcm);
  rep.lowo_corr_mape = over_runs(wcm);
  rep.loro_corr_total = over_runs(lct);
  rep.lowo_corr_total = over_runs(wct);
  for (const auto& sp : rep.shape) {
    rep.shape_uncal_mape += sp.uncalibrated.mape / static_cast<double>(rep.shape.size());
    rep.shape_cal_mape += sp.calibrated.mape / static_cast<double>(rep.shape.size());
    rep.shape_corr_mape += sp.corrected.mape / static_cast<double>(rep.shape.size());
  }
  return rep;
}

}  // namespace npusim
