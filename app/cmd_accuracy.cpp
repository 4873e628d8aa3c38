// npusim accuracy: predict every compute row of real profiles and say how wrong the model is.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "app/accuracy_report.h"
#include "app/common.h"
#include "app/profile_input.h"
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
};

void run_accuracy(const AccuracyArgs& a) {
  const ProfileSamples ps = load_samples(a.profiles, profile::ReadOptions{a.strict});
  std::string note;
  const HwSpec hw = hw_for_profiles(a.hw, a.overlays, ps.chip, &note);
  std::vector<Sample> samples = ps.samples;
  infer_l2_hits(samples, hw);
  const AccuracyReport rep = evaluate_accuracy(samples, hw);
  if (!a.csv.empty()) write_output_file(a.csv, rows_csv(samples, rep));
  if (a.json) {
    nlohmann::ordered_json j = report_json(rep);
    j["chip"] = hw.chip.name;
    j["chip_note"] = note;
    j["worst_types"] = worst_types_json(samples, rep, 8);
    std::cout << j.dump(2) << '\n';
    return;
  }
  for (const auto& n : ps.notes) std::cout << n << '\n';
  std::cout << note << "\n\n";
  std::cout << report_text(rep, "measured vs predicted, every compute row");
  std::cout << '\n' << worst_types_text(samples, rep, 8);
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
  sub->add_option("--csv", a->csv, "write one line per row (measured, predicted, pipes) to FILE");
  sub->callback([a] { run_accuracy(*a); });
}

}  // namespace npusim::app
