// `npusim sweep`: a grid of deployments, each point a full simulation, in parallel;
// `npusim merge`: shards of a sweep joined into the result of one run;
// `npusim compare`: the scenario as it is against the scenario changed, side by side.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/common.h"
#include "model/error.h"
#include "model/graph.h"
#include "model/op_desc.h"
#include "model/predict.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

namespace npusim::app {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Progress is shown only on a terminal and only once a sweep has run this long (seconds).
constexpr double kProgressAfterS = 2.0;
// and is redrawn at most this often (seconds).
constexpr double kProgressEveryS = 0.5;

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> vary;
  unsigned jobs = 0;
  std::string csv;
  std::string output;
  bool json = false;
  std::string shard;
  bool find_max_qps = false;
  double max_qps_tolerance = 0.02;
};

struct CompareArgs {
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
  bool find_max_qps = false;
  double max_qps_tolerance = 0.02;
};

struct MergeArgs {
  std::vector<std::string> files;
  std::string csv;
  std::string output;
  bool json = false;
};

// Points done, rate and time left on one redrawn stderr line; silent when stderr is not a
// terminal (logs, CI, job arrays) and for sweeps shorter than kProgressAfterS.
class ProgressLine {
 public:
  ProgressLine() : start_(Clock::now()), tty_(::isatty(STDERR_FILENO) == 1) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
  }

  void update(std::size_t done, std::size_t total) {
    if (!tty_) return;
    const double elapsed_s = seconds_since(start_);
    if (elapsed_s < kProgressAfterS || (shown_ && seconds_since(last_) < kProgressEveryS)) return;
    last_ = Clock::now();
    shown_ = true;
    const double rate = static_cast<double>(done) / elapsed_s;
    const double left_s = rate > 0 ? static_cast<double>(total - done) / rate : 0;
    std::cerr << fmt::format("\r\033[Ksweep: {}/{} points, {:.2f} points/s, ~{:.0f} s left", done,
                             total, rate, left_s)
              << std::flush;
  }

 private:
  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }
  Clock::time_point start_;
  Clock::time_point last_;
  bool tty_ = false;
  bool shown_ = false;
};

void write_outputs(const sim::SweepResult& r, const std::string& csv, const std::string& output,
                   bool json) {
  if (!csv.empty()) write_output_file(csv, sim::sweep_to_csv(r));
  if (!output.empty()) write_output_file(output, sim::sweep_to_json(r));
  std::cout << (json ? sim::sweep_to_json(r) : sim::sweep_to_text(r)) << std::flush;
}

void run_sweep_cmd(const SweepArgs& a) {
  sim::SweepSpec spec;
  spec.scenario_file = resolve_scenario(a.scenario);
  spec.sets = a.sets;
  for (const std::string& v : a.vary) spec.axes.push_back(sim::parse_sweep_axis(v));
  if (!a.shard.empty()) spec.shard = sim::parse_sweep_shard(a.shard);
  spec.find_max_qps = a.find_max_qps;
  spec.max_qps_tolerance = a.max_qps_tolerance;
  spec.hw_dirs = hw_spec_dirs();
  sim::SweepResult r;
  {
    ProgressLine progress;
    r = sim::run_sweep(spec, a.jobs, [&progress](std::size_t done, std::size_t total) {
      progress.update(done, total);
    });
  }
  write_outputs(r, a.csv, a.output, a.json);
}

std::string read_text(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError({file, 0, 0}, "cannot open the sweep result");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void run_merge(const MergeArgs& a) {
  std::vector<sim::SweepResult> shards;
  for (const std::string& f : a.files) shards.push_back(sim::sweep_from_json(read_text(f), f));
  write_outputs(sim::merge_sweeps(shards, a.files), a.csv, a.output, a.json);
}

// One side of a comparison: the result and, per op, the cores the model gives it.
struct Side {
  sim::Scenario scenario;
  sim::SimResult result;
  std::int64_t gear = 0;      // the compiled gear that holds the mean batch
  std::vector<int> op_cores;  // per op of result.ops
  std::optional<double> max_qps;
};

// Simulates one side, or with --find-max-qps searches its capacity and keeps the run there.
void run_side(Side& s, const HwSpec& hw, const CompareArgs& a) {
  // A graph measured on another chip than this side's is anchored on that chip.
  sim::SimOptions opt;
  opt.measured_hw = sim::load_measured_hw(s.scenario, hw, hw_spec_dirs());
  if (a.find_max_qps) {
    sim::MaxQps m = sim::find_max_qps(s.scenario, hw, a.max_qps_tolerance, opt);
    s.result = std::move(m.result);
    s.max_qps = m.rate_qps;
  } else {
    s.result = sim::simulate(s.scenario, hw, opt);
  }
}

// Core-µs of one kind spent per completed request: busy cores × window / completions.
double core_us_per_request(double utilization, int cores, const sim::SimResult& r) {
  if (r.window_completions == 0) return 0;
  return utilization * cores * r.window_s * 1e6 / static_cast<double>(r.window_completions);
}

// The cores an op holds: its block dim from the model at the gear holding the mean batch,
// within the stream's core limit (a fixed-duration op: its block_dim attribute, as simulated).
void op_cores(Side& s, const HwSpec& hw) {
  const sim::Deployment& d = s.scenario.deployment;
  s.gear = d.gears.back();
  for (const std::int64_t g : d.gears) {
    if (static_cast<double>(g) >= s.result.mean_gear) {
      s.gear = g;
      break;
    }
  }
  const CoreBudget budget{
      d.cube_cores_per_stream > 0 ? d.cube_cores_per_stream : hw.chip.cube_cores,
      d.vector_cores_per_stream > 0 ? d.vector_cores_per_stream : hw.chip.vector_cores};
  const Graph& g = s.scenario.graph;
  for (const sim::OpStats& o : s.result.ops) {
    const auto i = g.find(o.name);
    NPUSIM_CHECK(i.has_value());
    const OpDesc op = g.instantiate(*i, s.gear);
    if (g.ops()[*i].duration_us) {
      s.op_cores.push_back(static_cast<int>(op.attr_number("block_dim", 1)));
    } else {
      s.op_cores.push_back(predict(op, hw, budget).block_dim);
    }
  }
}

std::string ratio_text(double after, double before) {
  if (before == 0) return after == 0 ? "=" : "new";
  return fmt::format("x{:.2f}", after / before);
}

void run_compare(const CompareArgs& a) {
  if (a.sets.empty()) {
    throw InputError({"<command line>", 0, 0},
                     "compare needs at least one --set section.key=value: the change to compare");
  }
  const fs::path file = resolve_scenario(a.scenario);
  Side before{sim::load_scenario(file), {}, 0, {}, {}};
  Side after{sim::load_scenario(file, a.sets), {}, 0, {}, {}};
  const HwSpec hw_before = sim::load_scenario_hw(before.scenario, hw_spec_dirs());
  const HwSpec hw_after = sim::load_scenario_hw(after.scenario, hw_spec_dirs());
  // The two runs are independent simulations; run them side by side.
  std::exception_ptr error;
  std::thread other([&] {
    try {
      run_side(after, hw_after, a);
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    run_side(before, hw_before, a);
  } catch (...) {
    other.join();
    throw;
  }
  other.join();
  if (error) std::rethrow_exception(error);
  for (const std::string& w : after.result.warnings) warn(w);
  op_cores(before, hw_before);
  op_cores(after, hw_after);

  struct Row {
    const char* name;
    const char* key;
    double before;
    double after;
  };
  const sim::SimResult& b = before.result;
  const sim::SimResult& c = after.result;
  std::vector<Row> rows = {
      {"latency mean ms", "latency_mean_ms", b.latency.mean_ms, c.latency.mean_ms},
      {"latency P50 ms", "latency_p50_ms", b.latency.p50_ms, c.latency.p50_ms},
      {"latency P99 ms", "latency_p99_ms", b.latency.p99_ms, c.latency.p99_ms},
      {"QPS", "qps", b.qps, c.qps},
      {"throughput samples/s", "throughput", b.throughput, c.throughput},
      {"cube utilisation %", "cube_utilization_pct", 100 * b.cube_utilization,
       100 * c.cube_utilization},
      {"vector utilisation %", "vector_utilization_pct", 100 * b.vector_utilization,
       100 * c.vector_utilization},
      {"cube core-us / request", "cube_core_us_per_request",
       core_us_per_request(b.cube_utilization, hw_before.chip.cube_cores, b),
       core_us_per_request(c.cube_utilization, hw_after.chip.cube_cores, c)},
      {"vector core-us / request", "vector_core_us_per_request",
       core_us_per_request(b.vector_utilization, hw_before.chip.vector_cores, b),
       core_us_per_request(c.vector_utilization, hw_after.chip.vector_cores, c)},
      {"mean batch (padded)", "mean_gear", b.mean_gear, c.mean_gear},
  };
  if (a.find_max_qps) {
    rows.insert(rows.begin(),
                Row{"max QPS under P99 target", "max_qps", *before.max_qps, *after.max_qps});
  }
  std::string change;
  for (const std::string& s : a.sets) change += (change.empty() ? "" : " ") + s;

  if (a.json) {
    nlohmann::ordered_json j;
    j["scenario"] = b.scenario;
    j["sets"] = a.sets;
    for (const Row& r : rows) j["metrics"][r.key] = {{"before", r.before}, {"after", r.after}};
    const auto opt_json = [](const auto& v) {
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    j["metrics"]["p99_met"] = {{"before", opt_json(b.p99_met)}, {"after", opt_json(c.p99_met)}};
    j["metrics"]["cards_needed"] = {{"before", opt_json(b.cards_needed)},
                                    {"after", opt_json(c.cards_needed)}};
    j["ops"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const auto it = std::find_if(c.ops.begin(), c.ops.end(),
                                   [&](const sim::OpStats& o) { return o.name == b.ops[i].name; });
      nlohmann::ordered_json o;
      o["name"] = b.ops[i].name;
      o["type"] = b.ops[i].type;
      o["before"] = {{"mean_us", b.ops[i].mean_us},
                     {"cores", before.op_cores[i]},
                     {"core_time_us", before.op_cores[i] * b.ops[i].mean_us}};
      if (it != c.ops.end()) {
        const std::size_t k = static_cast<std::size_t>(it - c.ops.begin());
        o["after"] = {{"mean_us", it->mean_us},
                      {"cores", after.op_cores[k]},
                      {"core_time_us", after.op_cores[k] * it->mean_us}};
      } else {
        o["after"] = nullptr;
      }
      j["ops"].push_back(std::move(o));
    }
    std::cout << j.dump(1) << "\n" << std::flush;
    return;
  }

  std::string out = fmt::format("compare {}: as it is | with {}\n", b.scenario, change);
  out += fmt::format("{:<26}{:>14}{:>14}{:>10}\n", "", "as it is", "changed", "change");
  for (const Row& r : rows) {
    out += fmt::format("{:<26}{:>14.3f}{:>14.3f}{:>10}\n", r.name, r.before, r.after,
                       ratio_text(r.after, r.before));
  }
  const auto yes_no = [](const std::optional<bool>& v) {
    return v ? std::string(*v ? "yes" : "no") : std::string("-");
  };
  const auto count = [](const std::optional<std::int64_t>& v) {
    return v ? std::to_string(*v) : std::string("-");
  };
  out +=
      fmt::format("{:<26}{:>14}{:>14}\n", "P99 target met", yes_no(b.p99_met), yes_no(c.p99_met));
  out += fmt::format("{:<26}{:>14}{:>14}\n", "cards needed", count(b.cards_needed),
                     count(c.cards_needed));
  out += fmt::format(
      "\nper op (mean device time per execution; cores = the model's block dim at gear {} | {} "
      "within the stream's core limit; core-time = cores x time)\n",
      before.gear, after.gear);
  out += fmt::format("{:<18}{:>11}{:>11}{:>8}{:>7}{:>7}{:>13}{:>13}{:>8}\n", "op", "us before",
                     "us after", "time", "cores", "cores", "core-us bef", "core-us aft", "c-time");
  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    const auto it = std::find_if(c.ops.begin(), c.ops.end(),
                                 [&](const sim::OpStats& o) { return o.name == b.ops[i].name; });
    if (it == c.ops.end()) continue;
    const std::size_t k = static_cast<std::size_t>(it - c.ops.begin());
    const double ct_b = before.op_cores[i] * b.ops[i].mean_us;
    const double ct_a = after.op_cores[k] * it->mean_us;
    out += fmt::format("{:<18}{:>11.2f}{:>11.2f}{:>8}{:>7}{:>7}{:>13.1f}{:>13.1f}{:>8}\n",
                       b.ops[i].name, b.ops[i].mean_us, it->mean_us,
                       ratio_text(it->mean_us, b.ops[i].mean_us), before.op_cores[i],
                       after.op_cores[k], ct_b, ct_a, ratio_text(ct_a, ct_b));
  }
  std::cout << out << std::flush;
}

}  // namespace

void register_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate a grid of deployments in parallel: a table of every point, the Pareto front of "
      "throughput against P99, the best point under the target, the fewest cards");
  cmd->add_option("scenario", args->scenario,
                  "scenario file, or the name of a bundled one (e.g. default)")
      ->required();
  cmd->add_option("--set", args->sets,
                  "fix a scenario value for every point: section.key=value (repeatable)");
  cmd->add_option("--vary", args->vary,
                  "an axis of the grid: section.key=VALUES, a list (8,16,20,32) and/or ranges "
                  "(1..8, 6..12:2) (repeatable)")
      ->required();
  cmd->add_option("--jobs,-j", args->jobs, "threads (0 = all local cores)")->capture_default_str();
  cmd->add_option("--csv", args->csv, "write every point as CSV to this file");
  cmd->add_option("--output,-o", args->output,
                  "write the result as JSON to this file (what `npusim merge` reads)");
  cmd->add_flag("--json", args->json, "print the result as JSON instead of the table");
  cmd->add_option("--shard", args->shard,
                  "run only every N-th point starting at K (K/N, 0 <= K < N), for job arrays");
  cmd->add_flag("--find-max-qps", args->find_max_qps,
                "per point, search the highest Poisson rate whose P99 meets target.p99_ms");
  cmd->add_option("--max-qps-tolerance", args->max_qps_tolerance,
                  "stop the rate search when the bracket is this share of the rate (0.001 to 0.5)")
      ->capture_default_str();
  cmd->callback([args] { run_sweep_cmd(*args); });

  auto margs = std::make_shared<MergeArgs>();
  CLI::App* merge = app.add_subcommand(
      "merge", "Join the JSON shards of a sweep (--shard K/N -o FILE) into the result of one run");
  merge->add_option("files", margs->files, "the shards' JSON files, one per shard")->required();
  merge->add_option("--csv", margs->csv, "write every point as CSV to this file");
  merge->add_option("--output,-o", margs->output, "write the merged result as JSON to this file");
  merge->add_flag("--json", margs->json, "print the result as JSON instead of the table");
  merge->callback([margs] { run_merge(*margs); });

  auto cargs = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "The scenario as it is against the scenario changed (--set): latency, QPS, utilisation, "
      "core-time per request, and per op the change in time and core-time");
  compare
      ->add_option("scenario", cargs->scenario,
                   "scenario file, or the name of a bundled one (e.g. default)")
      ->required();
  compare
      ->add_option("--set", cargs->sets,
                   "the change: section.key=value (repeatable), e.g. "
                   "--set deployment.cube_cores_per_stream=12")
      ->required();
  compare->add_flag("--json", cargs->json, "print the comparison as JSON");
  compare->add_flag("--find-max-qps", cargs->find_max_qps,
                    "compare at each side's highest Poisson rate whose P99 meets target.p99_ms");
  compare
      ->add_option("--max-qps-tolerance", cargs->max_qps_tolerance,
                   "stop the rate search when the bracket is this share of the rate (0.001 to 0.5)")
      ->capture_default_str();
  compare->callback([cargs] { run_compare(*cargs); });
}

}  // namespace npusim::app
