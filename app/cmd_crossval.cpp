// npusim cross-validate: the evaluation protocol of issue #12 on a corpus of runs
// (model/cross_validation.h): leave-one-run-out, leave-one-workload-out and the shape split.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "app/accuracy_report.h"
#include "app/common.h"
#include "app/profile_input.h"
#include "model/cross_validation.h"
#include "model/error.h"
#include "model/text.h"
#include "model/toml_reader.h"

namespace npusim::app {

namespace fs = std::filesystem;

namespace {

struct CrossValArgs {
  std::string corpus;
  std::vector<std::string> only;
  bool no_lowo = false;
  int seeds = 4;
  std::size_t max_keys = 250;
  bool json = false;
  std::string rows;  ///< per-row CSV of every run's predictions
  std::string correction = "none";
  bool hashed_type = false, no_chip_features = false;
  int gbt_rounds = 150, gbt_depth = 6;
  double gbt_eta = 0.1, gbt_min_child = 20, domain_quantile = 0.6, run_weight_power = 0.5;
  double ridge_alpha = 1;
};

// Attributes of a run's ops that come from its input data, which profiles do not record (how
// concentrated a scatter's ids are, for example): given to every row of `type`. The data's keys
// only; each rule must match a row, so a misspelt type is an error, not a silent no-op.
struct DataAttrRule {
  std::string type;
  std::vector<std::pair<std::string, std::string>> attrs;
  SourcePos pos;
};

struct RunDef {
  std::string name, workload, hw;
  std::vector<std::string> paths;
  std::vector<DataAttrRule> data_attrs;
};

// [[run.data_attrs]]: type, why (the data fact the values come from) and the attributes. Ratios
// lie in [0, 1]; a hot-row count is at least 1.
DataAttrRule read_data_attrs(TableReader& t) {
  DataAttrRule r;
  r.pos = t.pos();
  r.type = t.string("type");
  if (t.string("why").empty()) t.fail("why", "say which fact of the input data gives the values");
  const auto add = [&](const char* key, double lo, double hi) {
    if (const auto v = t.optional_number(key, lo, hi)) r.attrs.emplace_back(key, fmt::format("{}", *v));
  };
  add("index_dup_ratio", 0, 1);
  add("index_hot_share", 0, 1);
  add("index_hot_rows", 1, 1e18);
  if (r.attrs.empty()) {
    t.fail_table("no attribute given (index_dup_ratio, index_hot_share, index_hot_rows)");
  }
  t.finish();
  return r;
}

// True when one of two canonical paths is the other or a folder holding it: the profiles under
// the inner one would be read by both.
bool overlaps(const fs::path& a, const fs::path& b) {
  auto ia = a.begin(), ib = b.begin();
  for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
    if (*ia != *ib) return false;
  }
  return true;
}

// The corpus file: `root` (relative to the file) and [[run]] tables with name, workload, hw,
// paths (relative to root) and optional [[run.data_attrs]].
std::vector<RunDef> read_corpus(const std::string& file) {
  const TomlFile doc = parse_toml_file(file);
  TableReader top(doc);
  const std::string root_text = top.string("root");
  const fs::path root = fs::path(file).parent_path() / root_text;
  std::vector<RunDef> out;
  std::vector<std::pair<fs::path, std::string>> listed;  // every path resolved, with its run
  for (TableReader t : top.table_array("run")) {
    RunDef d;
    d.name = t.string("name");
    for (const auto& o : out) {
      if (o.name == d.name) t.fail("name", fmt::format("run '{}' is listed twice", d.name));
    }
    d.workload = t.string("workload");
    d.hw = t.optional_string("hw").value_or("auto");
    for (const auto& p : t.string_array("paths")) {
      const fs::path full = root / p;
      if (!fs::exists(full)) {
        t.fail("paths", fmt::format("run '{}': {} does not exist (root = \"{}\" is {})", d.name,
                                    full.string(), root_text, root.string()));
      }
      // A profile read twice counts its rows twice in its run; one in two runs puts a held-out
      // run's rows in its own training set, and the cross-run figures come out optimistic.
      const fs::path canon = fs::weakly_canonical(full);
      for (const auto& [c, run] : listed) {
        if (!overlaps(c, canon)) continue;
        t.fail("paths", run == d.name
                            ? fmt::format("run '{}': {} overlaps {}, listed before in the same "
                                          "run: its profiles would be read twice",
                                          d.name, canon.string(), c.string())
                            : fmt::format("run '{}': {} overlaps {} of run '{}': a run held out "
                                          "would be in its own training set",
                                          d.name, canon.string(), c.string(), run));
      }
      listed.emplace_back(canon, d.name);
      d.paths.push_back(full.string());
    }
    if (d.paths.empty()) t.fail("paths", fmt::format("run '{}' has no paths", d.name));
    for (TableReader a : t.table_array("data_attrs")) d.data_attrs.push_back(read_data_attrs(a));
    t.finish();
    out.push_back(std::move(d));
  }
  top.finish();
  if (out.empty()) top.fail_table("no [[run]] tables: nothing to cross-validate");
  return out;
}

CvRun load_run(const RunDef& d, std::string& note) {
  const ProfileSamples ps = load_samples(d.paths);
  CvRun r;
  r.name = d.name;
  r.workload = d.workload;
  r.spec = hw_for_profiles(d.hw, {}, ps.chip, &note);
  r.chip = r.spec.chip.name;
  r.clock_measured = ps.chip.clock_known;
  r.samples = ps.samples;
  for (auto& s : r.samples) s.group = d.name;
  for (const DataAttrRule& rule : d.data_attrs) {
    std::size_t matched = 0;
    for (auto& s : r.samples) {
      if (s.op.type != rule.type) continue;
      ++matched;
      for (const auto& attr : rule.attrs) {
        const std::string& key = attr.first;
        std::erase_if(s.op.attrs, [&key](const auto& kv) { return kv.first == key; });
        s.op.attrs.push_back(attr);
      }
    }
    if (matched == 0) {
      throw InputError(rule.pos, fmt::format("run '{}': data_attrs type '{}' matches no row of its "
                                             "profiles", d.name, rule.type));
    }
  }
  infer_l2_hits(r.samples, r.spec);
  return r;
}

std::string pct(double x) { return fmt::format("{:.1f}", 100 * x); }

// One line per row of every run: where it came from, its op type, the measured time and the
// uncalibrated, leave-one-run-out (and corrected) predictions, so a user can see which ops
// the held-out error comes from.
std::string rows_csv(const std::vector<CvRun>& runs, const CvReport& rep, bool corr) {
  std::string out = "run,workload,chip,source,type,measured_us,uncalibrated_us,loro_us";
  out += corr ? ",loro_corrected_us\n" : "\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const CvRunResult& r = rep.runs[i];
    for (std::size_t k = 0; k < runs[i].samples.size(); ++k) {
      const Sample& s = runs[i].samples[k];
      out += fmt::format("{},{},{},{},{},{:.4f},{:.4f},{:.4f}", csv_field(r.name),
                         csv_field(r.workload), csv_field(r.chip), csv_field(s.source),
                         csv_field(s.op.type), s.measured_us, r.uncal_us[k], r.loro_us[k]);
      out += corr ? fmt::format(",{:.4f}\n", r.loro_corrected_us[k]) : "\n";
    }
  }
  return out;
}

std::string line_of(const ErrorSummary& e) {
  return fmt::format("{:>6} {:>6} {:>6} {:>6}", pct(e.mape), pct(e.median_ape), pct(e.p90_ape),
                     pct(e.step_total_error));
}

// The calibrated figures beside the calibrated-and-corrected ones.
void print_corrected(const CvReport& rep, const CvOptions& opt, const std::string& kind) {
  std::cout << fmt::format("\nlearned correction '{}'{}{}: calibrated | calibrated and corrected, % "
                           "(MAPE, median, P90, total); ood = rows left uncorrected\n",
                           kind, opt.correction.features.hashed_type ? " with the hashed op type" : "",
                           opt.correction.features.chip ? "" : " without chip features");
  std::cout << fmt::format("{:<18} | {:^27} | {:^27} {:>6} | {:^27} | {:^27} {:>6}\n", "run",
                           "leave-one-run-out", "corrected", "ood", "leave-one-workload-out",
                           "corrected", "ood");
  for (const auto& r : rep.runs) {
    const bool w = opt.leave_one_workload_out;
    std::cout << fmt::format("{:<18} | {} | {} {:>6} | {} | {} {:>6}\n", r.name, line_of(r.loro),
                             line_of(r.loro_corrected), r.loro_ood,
                             w ? line_of(r.lowo) : std::string(27, '-'),
                             w ? line_of(r.lowo_corrected) : std::string(27, '-'),
                             w ? fmt::format("{}", r.lowo_ood) : "-");
  }
  // One protocol's figures without -> with the correction.
  auto over = [&](const char* split, const OverRuns& mape, const OverRuns& corr_mape,
                  const OverRuns& total, const OverRuns& corr_total) {
    std::cout << fmt::format("over runs (median / worst): {} MAPE {} / {} -> {} / {}, step total "
                             "{} / {} -> {} / {}\n",
                             split, pct(mape.median), pct(mape.worst), pct(corr_mape.median),
                             pct(corr_mape.worst), pct(total.median), pct(total.worst),
                             pct(corr_total.median), pct(corr_total.worst));
  };
  over("LORO", rep.loro_mape, rep.loro_corr_mape, rep.loro_total, rep.loro_corr_total);
  if (opt.leave_one_workload_out) {
    over("LOWO", rep.lowo_mape, rep.lowo_corr_mape, rep.lowo_total, rep.lowo_corr_total);
  }
  if (!rep.shape.empty()) {
    std::size_t ood = 0;
    for (const auto& s : rep.shape) ood += s.ood;
    std::cout << fmt::format("shape split: calibrated {} -> corrected {} (mean over seeds; {} held-out "
                             "rows uncorrected over seeds)\n",
                             pct(rep.shape_cal_mape), pct(rep.shape_corr_mape), ood);
  }
  std::cout << fmt::format("rows left uncorrected as outside the training: LORO {} of {}, LOWO {}; "
                           "{} trainings, {:.1f} s\n",
                           rep.loro_ood, rep.loro_rows, rep.lowo_ood, rep.corrections_trained,
                           rep.correction_seconds);
}

void run_crossval(const CrossValArgs& a) {
  std::vector<RunDef> defs = read_corpus(a.corpus);
  if (!a.only.empty()) {
    std::vector<RunDef> kept;
    for (auto& d : defs) {
      if (std::find(a.only.begin(), a.only.end(), d.workload) != a.only.end()) kept.push_back(d);
    }
    defs = std::move(kept);
  }
  std::vector<CvRun> runs;
  std::vector<std::string> notes;
  for (const auto& d : defs) {
    std::string note;
    runs.push_back(load_run(d, note));
    notes.push_back(fmt::format("{}: {} rows; {}", d.name, runs.back().samples.size(), note));
  }
  CvOptions opt;
  opt.leave_one_workload_out = !a.no_lowo;
  opt.shape_seeds = a.seeds;
  opt.fit.max_keys_per_run = a.max_keys;
  opt.correction.kind = *parse_correction_kind(a.correction);
  opt.correction.features.hashed_type = a.hashed_type;
  opt.correction.features.chip = !a.no_chip_features;
  opt.correction.gbt.rounds = a.gbt_rounds;
  opt.correction.gbt.max_depth = a.gbt_depth;
  opt.correction.gbt.eta = a.gbt_eta;
  opt.correction.gbt.min_child_weight = a.gbt_min_child;
  opt.correction.domain.quantile = a.domain_quantile;
  opt.correction.run_weight_power = a.run_weight_power;
  opt.correction.ridge_alpha = a.ridge_alpha;
  opt.keep_rows = !a.rows.empty();
  const bool corr = opt.correction.kind != CorrectionKind::kNone;
  const CvReport rep = cross_validate(runs, opt);
  if (!a.rows.empty()) write_output_file(a.rows, rows_csv(runs, rep, corr));

  if (a.json) {
    nlohmann::ordered_json j;
    j["corpus"] = a.corpus;
    nlohmann::ordered_json rs = nlohmann::ordered_json::array();
    for (const auto& r : rep.runs) {
      nlohmann::ordered_json o;
      o["name"] = r.name;
      o["workload"] = r.workload;
      o["chip"] = r.chip;
      o["uncalibrated"] = summary_json(r.uncalibrated);
      o["loro"] = summary_json(r.loro);
      o["loro_kept_spec"] = r.loro_kept_spec;
      o["loro_verdict"] = r.loro_verdict;
      if (opt.leave_one_workload_out) {
        o["lowo"] = summary_json(r.lowo);
        o["lowo_kept_spec"] = r.lowo_kept_spec;
        o["lowo_verdict"] = r.lowo_verdict;
      }
      if (corr) {
        o["loro_corrected"] = summary_json(r.loro_corrected);
        o["loro_ood_rows"] = r.loro_ood;
        if (opt.leave_one_workload_out) {
          o["lowo_corrected"] = summary_json(r.lowo_corrected);
          o["lowo_ood_rows"] = r.lowo_ood;
        }
      }
      rs.push_back(o);
    }
    j["runs"] = rs;
    auto ov = [](const OverRuns& o) { return nlohmann::ordered_json{{"median", o.median}, {"worst", o.worst}}; };
    j["over_runs"] = {{"uncalibrated_mape", ov(rep.uncal_mape)},
                      {"loro_mape", ov(rep.loro_mape)},
                      {"lowo_mape", ov(rep.lowo_mape)},
                      {"uncalibrated_step_total", ov(rep.uncal_total)},
                      {"loro_step_total", ov(rep.loro_total)},
                      {"lowo_step_total", ov(rep.lowo_total)}};
    if (corr) {
      j["correction"] = {{"kind", a.correction},
                         {"hashed_type", a.hashed_type},
                         {"chip_features", !a.no_chip_features},
                         {"trainings", rep.corrections_trained},
                         {"training_seconds", rep.correction_seconds},
                         {"loro_ood_rows", rep.loro_ood},
                         {"lowo_ood_rows", rep.lowo_ood},
                         {"rows", rep.loro_rows}};
      j["over_runs"]["loro_corrected_mape"] = ov(rep.loro_corr_mape);
      j["over_runs"]["loro_corrected_step_total"] = ov(rep.loro_corr_total);
      if (opt.leave_one_workload_out) {
        j["over_runs"]["lowo_corrected_mape"] = ov(rep.lowo_corr_mape);
        j["over_runs"]["lowo_corrected_step_total"] = ov(rep.lowo_corr_total);
      }
    }
    nlohmann::ordered_json sh = nlohmann::ordered_json::array();
    for (const auto& s : rep.shape) {
      sh.push_back({{"seed", s.seed},
                    {"uncalibrated", summary_json(s.uncalibrated)},
                    {"calibrated", summary_json(s.calibrated)},
                    {"kept_spec", s.kept_spec}});
      if (corr) {
        sh.back()["corrected"] = summary_json(s.corrected);
        sh.back()["ood_rows"] = s.ood;
      }
    }
    j["shape_split"] = {{"seeds", sh},
                        {"mean_uncalibrated_mape", rep.shape_uncal_mape},
                        {"mean_calibrated_mape", rep.shape_cal_mape}};
    if (corr) j["shape_split"]["mean_corrected_mape"] = rep.shape_corr_mape;
    j["notes"] = notes;
    std::cout << j.dump(2) << '\n';
    return;
  }
  for (const auto& n : notes) std::cout << n << '\n';
  std::cout << "\nper run, % (MAPE, median, P90 of per-row error; total = error of the summed time)\n";
  std::cout << fmt::format("{:<18} {:<12} {:<12} {:>6} | {:^27} | {:^27} | {:^27}\n", "run",
                           "workload", "chip", "rows", "uncalibrated", "leave-one-run-out",
                           "leave-one-workload-out");
  for (const auto& r : rep.runs) {
    std::cout << fmt::format("{:<18} {:<12} {:<12} {:>6} | {} | {}{} | {}{}\n", r.name, r.workload,
                             r.chip, r.uncalibrated.rows, line_of(r.uncalibrated), line_of(r.loro),
                             r.loro_kept_spec ? "*" : " ",
                             opt.leave_one_workload_out ? line_of(r.lowo) : std::string(27, '-'),
                             r.lowo_kept_spec ? "*" : " ");
  }
  std::cout << fmt::format("\nover runs (median / worst): MAPE uncalibrated {} / {}, leave-one-run-out "
                           "{} / {}, leave-one-workload-out {} / {}\n",
                           pct(rep.uncal_mape.median), pct(rep.uncal_mape.worst),
                           pct(rep.loro_mape.median), pct(rep.loro_mape.worst),
                           pct(rep.lowo_mape.median), pct(rep.lowo_mape.worst));
  std::cout << fmt::format("step total (median / worst): uncalibrated {} / {}, leave-one-run-out {} / "
                           "{}, leave-one-workload-out {} / {}\n",
                           pct(rep.uncal_total.median), pct(rep.uncal_total.worst),
                           pct(rep.loro_total.median), pct(rep.loro_total.worst),
                           pct(rep.lowo_total.median), pct(rep.lowo_total.worst));
  if (!rep.shape.empty()) {
    std::cout << fmt::format("shape split ({} seeds, 30 % of shape keys held out, pooled): MAPE "
                             "uncalibrated {}, calibrated {} (mean over seeds)\n",
                             rep.shape.size(), pct(rep.shape_uncal_mape), pct(rep.shape_cal_mape));
  }
  std::cout << "* the fit did not beat the spec on its held-out shape keys: spec values used\n";
  if (corr) print_corrected(rep, opt, a.correction);
}

}  // namespace

void register_crossval(CLI::App& app) {
  auto a = std::make_shared<CrossValArgs>();
  CLI::App* sub = app.add_subcommand(
      "cross-validate",
      "Leave-one-run-out and leave-one-workload-out error of the model, calibrated and not, on a "
      "corpus of profiles");
  sub->add_option("corpus", a->corpus, "corpus TOML: root and [[run]] name, workload, hw, paths (and [[run.data_attrs]])")
      ->required();
  sub->add_option("--workload", a->only, "only the runs of these workloads");
  sub->add_flag("--no-lowo", a->no_lowo, "skip leave-one-workload-out");
  sub->add_option("--seeds", a->seeds, "shape-split seeds averaged (0: no shape split)")
      ->capture_default_str();
  sub->add_option("--max-keys", a->max_keys, "shape keys per run a fit uses (sampled)")
      ->capture_default_str();
  sub->add_option("--correction", a->correction,
                  "learned correction on top of the calibrated model, trained on each fold's "
                  "training runs: none, ridge or gbt")
      ->check(CLI::IsMember({"none", "ridge", "gbt"}))
      ->capture_default_str();
  sub->add_flag("--hashed-type", a->hashed_type,
                "give the correction a hashed op-type feature (to measure whether names transfer)");
  sub->add_flag("--no-chip-features", a->no_chip_features,
                "leave the chip's core counts and clock out of the correction's features");
  sub->add_option("--gbt-rounds", a->gbt_rounds, "boosting rounds of the gbt correction")
      ->check(CLI::Range(1, 5000))
      ->capture_default_str();
  sub->add_option("--gbt-depth", a->gbt_depth, "tree depth of the gbt correction")
      ->check(CLI::Range(1, 12))
      ->capture_default_str();
  sub->add_option("--gbt-eta", a->gbt_eta, "learning rate of the gbt correction")
      ->check(finite_range(1e-4, 1.0), "FLOAT in [1e-4, 1]")
      ->capture_default_str();
  sub->add_option("--gbt-min-child-weight", a->gbt_min_child,
                  "least total row weight in a leaf of the gbt correction (mean row weight 1)")
      ->check(finite_range(0.0, 1e9), "FLOAT in [0, 1e9]")
      ->capture_default_str();
  sub->add_option("--domain-quantile", a->domain_quantile,
                  "the correction leaves a row uncorrected beyond this quantile of the distances "
                  "between its training runs (0: no distance test)")
      ->check(finite_range(0.0, 1.0), "FLOAT in [0, 1]")
      ->capture_default_str();
  sub->add_option("--run-weight-power", a->run_weight_power,
                  "a training run of the correction weighs its rows to this power (0: every run "
                  "the same, 1: every row the same)")
      ->check(finite_range(0.0, 1.0), "FLOAT in [0, 1]")
      ->capture_default_str();
  sub->add_option("--ridge-alpha", a->ridge_alpha, "penalty of the ridge correction")
      ->check(finite_range(0.0, 1e12), "FLOAT in [0, 1e12]")
      ->capture_default_str();
  sub->add_flag("--json", a->json, "per-run figures, over-run median and worst, shape split");
  sub->add_option("--rows", a->rows,
                  "also write every row of every run to this CSV: measured, uncalibrated, "
                  "leave-one-run-out (and corrected) prediction");
  sub->callback([a] { run_crossval(*a); });
}

}  // namespace npusim::app
