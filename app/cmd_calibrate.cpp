// npusim calibrate: fit the model to real profiles, hold data out, write an overlay.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>

#include "app/accuracy_report.h"
#include "app/common.h"
#include "app/profile_input.h"
#include "model/calibration.h"
#include "model/correction.h"
#include "model/error.h"

namespace npusim::app {

namespace {

struct CalibrateArgs {
  std::vector<std::string> profiles;
  std::string hw = "auto";
  std::vector<std::string> overlays;
  std::string out;
  double holdout = 0.3;
  std::string split = "shape";
  std::uint64_t seed = 1;
  bool json = false;
  bool strict = false;
  std::string correction_out;
  std::string correction_kind = "gbt";
};

// --correction-out: the learned correction trained on the fit rows predicted with the fitted
// spec, each input group (file, rank) a run of the correction's training; scored on the holdout.
struct TrainedCorrection {
  Correction model;
  CorrectedReport holdout;
};

TrainedCorrection train_correction(const std::vector<Sample>& samples,
                                   const std::vector<std::size_t>& fit,
                                   const std::vector<std::size_t>& hold, const HwSpec& fitted,
                                   const std::string& kind) {
  std::map<std::string, std::vector<std::size_t>> by_group;
  for (const std::size_t i : fit) by_group[samples[i].group].push_back(i);
  std::vector<CorrectionRunRows> runs;
  for (auto& [g, rows] : by_group) runs.push_back({&samples, std::move(rows), fitted});
  CorrectionOptions o;
  o.kind = *parse_correction_kind(kind);
  TrainedCorrection t{Correction::train(balanced_set(runs, o.features, o.run_weight_power), o), {}};
  t.holdout = evaluate_corrected(samples, hold, fitted, t.model);
  return t;
}

void run_calibrate(const CalibrateArgs& a) {
  const SourcePos cl{"<command line>", 0, 0};
  if (!(a.holdout > 0 && a.holdout < 1)) {
    throw InputError(cl, fmt::format("--holdout {}: expected a fraction strictly between 0 and 1 "
                                     "(the fit and the holdout both need rows)",
                                     a.holdout));
  }
  SplitKind kind = SplitKind::kShape;
  if (a.split == "row") {
    kind = SplitKind::kRow;
  } else if (a.split == "file") {
    kind = SplitKind::kFile;
  } else if (a.split != "shape") {
    throw InputError(cl, fmt::format("--split {}: expected shape, row or file", a.split));
  }
  const ProfileSamples ps = load_samples(a.profiles, profile::ReadOptions{a.strict});
  std::string note;
  const HwSpec prior = hw_for_profiles(a.hw, a.overlays, ps.chip, &note);
  std::vector<Sample> samples = ps.samples;
  infer_l2_hits(samples, prior);
  if (kind == SplitKind::kFile) {
    std::set<std::string> groups;
    for (const auto& s : samples) groups.insert(s.group);
    if (groups.size() < 2) {
      throw InputError(cl, fmt::format("--split file needs at least two profiles; got {} ({})",
                                       groups.size(), *groups.begin()));
    }
  }
  std::vector<std::size_t> fit, hold;
  split_samples(samples, kind, a.holdout, a.seed, fit, hold);
  if (fit.empty() || hold.empty()) {
    throw InputError(cl, fmt::format("the split left {} fit rows and {} holdout rows; use more data "
                                     "or another --holdout",
                                     fit.size(), hold.size()));
  }
  const CalibrationResult res = calibrate(samples, fit, prior);
  const AccuracyReport fit_before = evaluate_accuracy_subset(samples, fit, prior);
  const AccuracyReport fit_after = evaluate_accuracy_subset(samples, fit, res.fitted);
  const AccuracyReport hold_before = evaluate_accuracy_subset(samples, hold, prior);
  const AccuracyReport hold_after = evaluate_accuracy_subset(samples, hold, res.fitted);

  std::vector<std::string> profiles_used;
  for (const auto& p : a.profiles) profiles_used.push_back(p);
  const std::vector<std::string> header = {
      "npusim calibration overlay",
      fmt::format("chip: {} ({})", prior.chip.name, note),
      fmt::format("profiles: {}", fmt::join(profiles_used, ", ")),
      fmt::format("split: {} (holdout {:.2f}, seed {}): {} fit rows, {} holdout rows", a.split,
                  a.holdout, a.seed, fit.size(), hold.size()),
      fmt::format("holdout MAPE {:.1f}% (uncalibrated {:.1f}%), step-total error {:.1f}% "
                  "(uncalibrated {:.1f}%)",
                  100 * hold_after.overall.mape, 100 * hold_before.overall.mape,
                  100 * hold_after.overall.step_total_error,
                  100 * hold_before.overall.step_total_error),
      "apply with --overlay THIS_FILE on the same chip"};
  const std::vector<std::pair<std::string, std::string>> meta = {
      {"chip", prior.chip.name},
      {"split", a.split},
      {"holdout_fraction", fmt::format("{}", a.holdout)},
      {"seed", std::to_string(a.seed)},
      {"fit_rows", std::to_string(fit.size())},
      {"holdout_rows", std::to_string(hold.size())},
      {"holdout_mape", fmt::format("{:.4f}", hold_after.overall.mape)},
      {"holdout_step_total_error", fmt::format("{:.4f}", hold_after.overall.step_total_error)}};
  // The spread of the calibrated model's error on rows the fit never saw: what `predict` and
  // `simulate` print as a P10-P90 range beside their figures.
  const std::map<std::string, ErrorInterval> intervals =
      prediction_intervals(samples, hold, res.fitted);
  std::vector<std::string> interval_comment;
  if (intervals.empty()) {
    interval_comment.push_back(fmt::format(
        "no [intervals]: the holdout has fewer than {} usable rows, so predictions using this "
        "overlay say 'uncalibrated'",
        kMinIntervalRows));
  } else {
    interval_comment = {
        fmt::format("Prediction intervals: P10 and P90 of measured / predicted device time on the "
                    "{} holdout rows above",
                    hold.size()),
        fmt::format("(split by {}, holdout {:.2f}, seed {}), predicted with this overlay's values. "
                    "A family with fewer",
                    a.split, a.holdout, a.seed),
        fmt::format("than {} holdout rows has no table of its own and uses [intervals.all].",
                    kMinIntervalRows)};
  }
  if (!a.out.empty()) {
    write_output_file(a.out, overlay_toml(res, header, meta, intervals, interval_comment));
  }
  std::optional<TrainedCorrection> corr;
  if (!a.correction_out.empty()) {
    corr = train_correction(samples, fit, hold, res.fitted, a.correction_kind);
    write_output_file(a.correction_out, corr->model.serialize());
  }

  if (a.json) {
    nlohmann::ordered_json j;
    j["chip"] = prior.chip.name;
    j["chip_note"] = note;
    j["fit_rows"] = fit.size();
    j["holdout_rows"] = hold.size();
    j["fit"] = {{"before", report_json(fit_before)}, {"after", report_json(fit_after)}};
    j["holdout"] = {{"before", report_json(hold_before)}, {"after", report_json(hold_after)}};
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& p : res.params) {
      if (!p.identified) continue;
      params.push_back({{"key", p.key}, {"prior", p.prior}, {"value", p.value},
                        {"rel_sigma", p.rel_sigma}});
    }
    j["params"] = params;
    nlohmann::ordered_json ivs = nlohmann::ordered_json::object();
    for (const auto& [name, e] : intervals) {
      ivs[name] = {{"p10", e.p10}, {"p90", e.p90}, {"rows", e.rows}};
    }
    j["intervals"] = ivs;
    if (corr) {
      j["correction"] = {{"kind", a.correction_kind},
                         {"file", a.correction_out},
                         {"training_rows", corr->model.training_rows()},
                         {"holdout", summary_json(corr->holdout.overall)},
                         {"holdout_ood_rows", corr->holdout.ood}};
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  for (const auto& n : ps.notes) std::cout << n << '\n';
  std::cout << note << '\n';
  std::cout << fmt::format("split by {}: {} fit rows, {} holdout rows; {} iterations, robust cost "
                           "{:.2f} -> {:.2f}\n\n",
                           a.split, fit.size(), hold.size(), res.iterations, res.initial_cost,
                           res.final_cost);
  std::cout << report_text(hold_before, "HOLDOUT before calibration (spec values only)") << '\n';
  std::cout << report_text(hold_after, "HOLDOUT after calibration") << '\n';
  std::cout << fmt::format("fit rows: MAPE {:.1f}% -> {:.1f}%, step-total error {:.1f}% -> {:.1f}%\n\n",
                           100 * fit_before.overall.mape, 100 * fit_after.overall.mape,
                           100 * fit_before.overall.step_total_error,
                           100 * fit_after.overall.step_total_error);
  std::cout << "fitted parameters (identified by the fit rows):\n";
  for (const auto& p : res.params) {
    if (!p.identified) continue;
    std::cout << fmt::format("  {:<42} {:>12.5g}  prior {:>10.5g}  ±{:.0f}%\n", p.key, p.value, p.prior,
                             100 * p.rel_sigma);
  }
  if (intervals.empty()) {
    std::cout << fmt::format("\nprediction intervals: none (fewer than {} usable holdout rows)\n",
                             kMinIntervalRows);
  } else {
    std::cout << "\nprediction intervals (measured / predicted on the holdout, after the fit):\n";
    for (const auto& [name, e] : intervals) {
      std::cout << fmt::format("  {:<16} P10 {:.3f}  P90 {:.3f}  ({} rows)\n", name, e.p10, e.p90,
                               e.rows);
    }
  }
  std::vector<Sample> held;
  for (const std::size_t i : hold) held.push_back(samples[i]);
  std::cout << '\n' << worst_types_text(held, hold_after, 6);
  if (!a.out.empty()) std::cout << "\nwrote " << a.out << '\n';
  if (corr) {
    const ErrorSummary& e = corr->holdout.overall;
    std::cout << fmt::format(
        "learned correction ({}, {} fit rows): holdout MAPE {:.1f}% -> {:.1f}%, step total "
        "{:.1f}% -> {:.1f}%; {} holdout rows outside its training left uncorrected; wrote {}\n",
        a.correction_kind, corr->model.training_rows(), 100 * hold_after.overall.mape,
        100 * e.mape, 100 * hold_after.overall.step_total_error, 100 * e.step_total_error,
        corr->holdout.ood, a.correction_out);
  }
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Fit the model to real profiles with a held-out error, and write an overlay");
  sub->add_option("profiles", a->profiles, "profile files or folders")->required();
  sub->add_option("--hw", a->hw, "chip name, spec file, or auto")->capture_default_str();
  sub->add_option("--overlay", a->overlays, "overlay(s) applied before fitting");
  sub->add_option("-o,--output", a->out, "overlay TOML to write (atomic)");
  sub->add_option("--holdout", a->holdout, "fraction held out of the fit, in (0, 1)")
      ->capture_default_str();
  sub->add_option("--split", a->split, "shape (default: whole (type, shapes, dtypes) keys), row, or "
                                       "file (whole profiles)")
      ->capture_default_str();
  sub->add_option("--seed", a->seed, "seed of the split")->capture_default_str();
  sub->add_option("--correction-out", a->correction_out,
                  "also train the learned correction on the fit rows (predicted with the fitted "
                  "values) and write it to FILE, for accuracy/predict --correction");
  sub->add_option("--correction-kind", a->correction_kind, "gbt or ridge")
      ->check(CLI::IsMember({"gbt", "ridge"}))
      ->capture_default_str();
  sub->add_flag("--strict", a->strict, "fail at the first malformed or truncated row of a profile file instead of skipping and counting it");
  sub->add_flag("--json", a->json,
                "before/after on fit and holdout, every fitted parameter and the prediction "
                "intervals");
  sub->callback([a] { run_calibrate(*a); });
}

}  // namespace npusim::app
