// npusim accuracy: predict every compute row of real profiles and say how wrong the model is.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/accuracy_report.h"
#include "app/common.h"
#include "app/profile_input.h"
#include "model/anchor_accuracy.h"
#include "model/op_table.h"

namespace npusim::app {

namespace {

struct AccuracyArgs {
  std::vector<std::string> profiles;
  std::string hw = "auto";
  std::vector<std::string> overlays;
  bool json = false;
  std::string csv;
  bool strict = false;
  std::vector<std::string> anchor_from;
  std::string correction;
};

std::string pct(double f) { return fmt::format("{:.1f} %", 100 * f); }

// --anchor-from: the target's unseen shapes predicted plainly and anchored on the source's
// nearest measured shape of the same type (model/anchor_accuracy.h).
void run_anchor_comparison(const AccuracyArgs& a, const ProfileSamples& target, const HwSpec& hw,
                           const std::string& note) {
  ProfileSamples source = load_samples(a.anchor_from, profile::ReadOptions{a.strict});
  std::vector<Sample> t = target.samples;
  infer_l2_hits(t, hw);
  infer_l2_hits(source.samples, hw);
  const AnchorComparison c = compare_anchoring(source.samples, t, hw);
  if (!a.csv.empty()) {
    const auto shapes = [](const OpDesc& op) {
      std::string out;
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        out += k ? ";" : "";
        for (std::size_t d = 0; d < op.inputs[k].shape.size(); ++d) {
          out += fmt::format("{}{}", d ? "," : "", op.inputs[k].shape[d]);
        }
      }
      return out;
    };
    std::string csv = "type,target_source,target_shapes,anchor_source,anchor_shapes,measured_us,"
                      "plain_us,anchored_us,nearest_us,same_structure_us\n";
    for (const AnchorRow& r : c.rows) {
      const Sample& ts = t[r.target];
      const Sample& ss = source.samples[r.source];
      csv += fmt::format("{},{},\"{}\",{},\"{}\",{},{},{},{},{}\n", ts.op.type, ts.source,
                         shapes(ts.op), ss.source, shapes(ss.op), r.measured_us, r.plain_us,
                         r.anchored_us, r.nearest_us, r.structured_us);
    }
    write_output_file(a.csv, csv);
  }
  if (a.json) {
    nlohmann::ordered_json j;
    j["chip"] = hw.chip.name;
    j["target_rows"] = c.target_rows;
    j["seen_shapes"] = c.seen;
    j["no_same_type"] = c.no_same_type;
    j["compared"] = c.compared;
    j["plain"] = summary_json(c.plain);
    j["anchored"] = summary_json(c.anchored);
    j["nearest_unscaled"] = summary_json(c.nearest);
    j["anchored_same_structure"] = summary_json(c.structured);
    j["with_same_structure"] = c.with_structure;
    j["same_structure_rows"] = {{"plain", summary_json(c.structure_rows_plain)},
                                {"anchored", summary_json(c.structure_rows_anchored)}};
    nlohmann::ordered_json types = nlohmann::ordered_json::object();
    for (const auto& [type, e] : c.by_type) {
      types[type] = {{"plain", summary_json(e.first)}, {"anchored", summary_json(e.second)}};
    }
    j["by_type"] = std::move(types);
    std::cout << j.dump(2) << '\n';
    return;
  }
  for (const auto& n : target.notes) std::cout << "target: " << n << '\n';
  for (const auto& n : source.notes) std::cout << "source: " << n << '\n';
  std::cout << note << "\n\n";
  std::cout << fmt::format("{} target rows: {} with a shape the source measured (left out), {} "
                           "of a type the source never ran (left out), {} compared\n",
                           c.target_rows, c.seen, c.no_same_type, c.compared);
  std::cout << fmt::format("{:<38} {:>5} {:>8} {:>8} {:>8} {:>10}\n", "prediction of unseen shapes",
                           "rows", "MAPE", "median", "P90", "step total");
  const auto line = [](const char* what, const ErrorSummary& e) {
    std::cout << fmt::format("{:<38} {:>5} {:>8} {:>8} {:>8} {:>10}\n", what, e.rows, pct(e.mape),
                             pct(e.median_ape), pct(e.p90_ape), pct(e.step_total_error));
  };
  line("plain model", c.plain);
  line("anchored (nearest x model ratio)", c.anchored);
  line("nearest measured, unscaled", c.nearest);
  line("anchored, same structure else plain", c.structured);
  std::cout << fmt::format("  ({} of the {} rows had a measured shape of the same structure: "
                           "inputs of the same ranks, dtypes and broadcast axes; on them:)\n",
                           c.with_structure, c.compared);
  line("  plain model", c.structure_rows_plain);
  line("  anchored on the same structure", c.structure_rows_anchored);
  if (!c.by_type.empty()) {
    std::cout << "\nby op type (>= 3 rows): MAPE plain -> anchored\n";
    for (const auto& [type, e] : c.by_type) {
      std::cout << fmt::format("  {:<28} {:>5} rows  {:>9} -> {:>9}\n", type, e.first.rows,
                               pct(e.first.mape), pct(e.second.mape));
    }
  }
}

void run_accuracy(const AccuracyArgs& a) {
  const ProfileSamples ps = load_samples(a.profiles, profile::ReadOptions{a.strict});
  std::string note;
  const HwSpec hw = hw_for_profiles(a.hw, a.overlays, ps.chip, &note);
  if (!a.anchor_from.empty()) {
    run_anchor_comparison(a, ps, hw, note);
    return;
  }
  std::vector<Sample> samples = ps.samples;
  infer_l2_hits(samples, hw);
  const AccuracyReport rep = evaluate_accuracy(samples, hw);
  std::optional<CorrectedReport> corr;
  if (!a.correction.empty()) {
    std::vector<std::size_t> all(samples.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    corr = evaluate_corrected(samples, all, hw, load_correction(a.correction));
  }
  if (!a.csv.empty()) write_output_file(a.csv, rows_csv(samples, rep));
  if (a.json) {
    nlohmann::ordered_json j = report_json(rep);
    j["chip"] = hw.chip.name;
    j["chip_note"] = note;
    // What the text report prints first: the profiles used, rows skipped and why, warnings.
    j["notes"] = ps.notes;
    j["worst_types"] = worst_types_json(samples, rep, 8);
    if (corr) {
      nlohmann::ordered_json fam = nlohmann::ordered_json::object();
      for (const auto& [k, v] : corr->by_family) fam[k] = summary_json(v);
      j["corrected"] = {{"overall", summary_json(corr->overall)},
                        {"by_family", fam},
                        {"ood_rows", corr->ood},
                        {"ood_reasons", corr->ood_reasons}};
    }
    std::cout << j.dump(2) << '\n';
    return;
  }
  for (const auto& n : ps.notes) std::cout << n << '\n';
  std::cout << note << "\n\n";
  std::cout << report_text(rep, "measured vs predicted, every compute row");
  std::cout << '\n' << worst_types_text(samples, rep, 8);
  if (corr) {
    std::cout << fmt::format("\nwith the learned correction ({}): MAPE {} -> {}, median {} -> {}, "
                             "P90 {} -> {}, step total {} -> {}\n",
                             a.correction, pct(rep.overall.mape), pct(corr->overall.mape),
                             pct(rep.overall.median_ape), pct(corr->overall.median_ape),
                             pct(rep.overall.p90_ape), pct(corr->overall.p90_ape),
                             pct(rep.overall.step_total_error),
                             pct(corr->overall.step_total_error));
    for (const auto& [k, v] : corr->by_family) {
      const auto it = rep.by_family.find(k);
      std::cout << fmt::format("  {:<14} {:>6} rows  MAPE {:>8} -> {:>8}\n", k, v.rows,
                               it == rep.by_family.end() ? "-" : pct(it->second.mape), pct(v.mape));
    }
    std::cout << fmt::format("{} of {} rows left uncorrected as outside its training", corr->ood,
                             corr->overall.rows);
    for (const auto& [k, n] : corr->ood_reasons) std::cout << fmt::format("; {} {}", n, k);
    std::cout << '\n';
  }
}

}  // namespace

void register_accuracy(CLI::App& app) {
  auto a = std::make_shared<AccuracyArgs>();
  CLI::App* sub = app.add_subcommand(
      "accuracy", "Predict every compute row of real profiles and report the model's error");
  sub->add_option("profiles", a->profiles, "profile files or folders (PROF_*, *_ascend_pt, ...)")
      ->required();
  sub->add_option("--hw", a->hw, "chip name, spec file, or auto (inferred from the profile)")
      ->capture_default_str();
  sub->add_option("--overlay", a->overlays, "overlay file(s) applied on the chip (calibration)");
  sub->add_flag("--json", a->json, "every summary as JSON: overall, by_family, by_type, by_regime");
  sub->add_flag("--strict", a->strict, "fail at the first malformed or truncated row of a profile file instead of skipping and counting it");
  sub->add_option("--correction", a->correction,
                  "learned correction file (npusim calibrate --correction-out): the error with it "
                  "beside the error without, and the rows it left uncorrected");
  sub->add_option("--csv", a->csv, "write one line per row (measured, predicted, pipes) to FILE");
  sub->add_option("--anchor-from", a->anchor_from,
                  "profile(s) whose measurements anchor the prediction of the shapes the given "
                  "profiles ran and these never measured: prints the error of the plain model, "
                  "of anchoring on the nearest measured shape of the same type (or of the same "
                  "structure), and of that measurement unscaled; --csv then lists the compared "
                  "rows");
  sub->callback([a] { run_accuracy(*a); });
}

}  // namespace npusim::app
