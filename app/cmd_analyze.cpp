// npusim analyze: read a profile (file, PROF_* / *_ascend_pt folder, or a folder of several) and
// print what a performance engineer would find by hand, ranked by the time at stake.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "app/common.h"
#include "model/error.h"
#include "profile/advisor.h"
#include "profile/discover.h"

namespace npusim::app {

namespace {

struct AnalyzeArgs {
  std::string path;
  std::string hw;
  std::vector<std::string> overlays;
  bool json = false;
  std::string md;
};

// The chip whose bandwidths are used when the user names none (cores and clock are inferred
// from the profile's cycle columns when it has them).
constexpr const char* kDefaultChip = "ascend910b3";

void run_analyze(const AnalyzeArgs& a) {
  const profile::Discovery found = profile::discover_profiles(a.path);
  profile::AnalyzeOptions opt;
  if (!a.hw.empty()) {
    opt.chip = profile::chip_figures(load_hw(a.hw, a.overlays), "--hw " + a.hw);
    opt.chip_given = true;
  } else {
    try {
      opt.chip = profile::chip_figures(load_hw(kDefaultChip, a.overlays),
                                       std::string(kDefaultChip) + " (default; pass --hw)");
    } catch (const InputError& e) {
      warn(fmt::format("default chip {} not loaded ({}); bandwidth checks are skipped",
                       kDefaultChip, e.what()));
    }
  }
  std::vector<profile::Report> reports;
  for (const auto& src : found.profiles) {
    reports.push_back(profile::analyze(src, opt));
  }
  for (const auto& n : found.notes) reports.front().notes.push_back(n);

  // Render everything before writing anything, so a failure leaves no partial output.
  const std::string md = a.md.empty() ? std::string() : profile::render_markdown(reports);
  if (a.json) {
    std::cout << profile::render_json(reports);
  } else {
    std::cerr << fmt::format("read {} profile(s) under {}\n", reports.size(), a.path);
    for (const auto& n : found.notes) std::cerr << "note: " << n << '\n';
    std::cout << profile::render_text(reports);
  }
  if (!a.md.empty()) write_output_file(a.md, md);
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Read an msprof / torch_npu profile and report what to fix, ranked by time at stake");
  cmd->add_option("path", args->path,
                  "op_summary_*.csv / kernel_details.csv, a PROF_* or *_ascend_pt folder, or a "
                  "folder holding several")
      ->required();
  cmd->add_option("--hw", args->hw,
                  "chip for cube cores, clock and bandwidths (default: cores and clock inferred "
                  "from the profile, bandwidths of ascend910b3)");
  cmd->add_option("--hw-overlay", args->overlays, "TOML overlay(s) on the chip spec");
  cmd->add_flag("--json", args->json, "complete JSON on stdout instead of the summary");
  cmd->add_option("--md", args->md, "also write a Markdown report to FILE");
  cmd->callback([args] { run_analyze(*args); });
}

}  // namespace npusim::app
