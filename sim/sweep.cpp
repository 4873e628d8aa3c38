#include "sim/sweep.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "model/error.h"
#include "model/text.h"
#include "sim/capacity.h"

namespace npusim::sim {

namespace {

namespace fs = std::filesystem;


// A grid larger than this is almost certainly a typo in a range (1..100000:1 on three axes); a
// sweep that big is run as shards of smaller grids.
constexpr std::size_t kMaxGridPoints = 10'000'000;

std::string trim_item(std::string_view s) { return std::string(trim_blanks(s)); }

bool is_integer_text(const std::string& s) {
  if (s.empty()) return false;
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Items of a list, split on commas outside brackets, braces and double quotes (a gear list or a
// quoted text is one value).
std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> items;
  int depth = 0;
  bool quoted = false;
  std::string cur;
  for (const char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '[' || c == '{')) ++depth;
    if (!quoted && (c == ']' || c == '}')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      items.push_back(trim_item(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  items.push_back(trim_item(cur));
  return items;
}

void expand_range(const std::string& item, std::size_t dots, const std::string& what,
                  std::vector<std::string>& out) {
  const std::string a = trim_item(std::string_view(item).substr(0, dots));
  std::string b = trim_item(std::string_view(item).substr(dots + 2));
  std::string step = "1";
  if (const std::size_t colon = b.find(':'); colon != std::string::npos) {
    step = trim_item(std::string_view(b).substr(colon + 1));
    b = trim_item(std::string_view(b).substr(0, colon));
  }
  const auto fail = [&](const std::string& why) {
    throw InputError(kCommandLine, fmt::format("{}: range '{}': {}", what, item, why));
  };
  const auto lo = parse_number(a);
  const auto hi = parse_number(b);
  const auto st = parse_number(step);
  if (!lo || !hi || !st) fail("expected a..b or a..b:step with numbers");
  if (*st <= 0) fail("the step must be > 0");
  if (*hi < *lo) fail("the end is below the start");
  if (is_integer_text(a) && is_integer_text(b) && is_integer_text(step)) {
    std::int64_t s = 0;
    std::int64_t e = 0;
    std::int64_t d = 0;
    std::from_chars(a.data(), a.data() + a.size(), s);
    std::from_chars(b.data(), b.data() + b.size(), e);
    std::from_chars(step.data(), step.data() + step.size(), d);
    if (static_cast<std::uint64_t>((e - s) / d) >= kMaxGridPoints) fail("too many values");
    for (std::int64_t v = s; v <= e; v += d) out.push_back(std::to_string(v));
    return;
  }
  // Decimal: value i is start + i*step (no accumulated rounding); the end is included when the
  // step lands on it up to rounding of the decimal texts.
  const double count_d = std::floor((*hi - *lo) / *st * (1 + 1e-12) + 1e-9) + 1;
  if (count_d > static_cast<double>(kMaxGridPoints)) fail("too many values");
  const auto count = static_cast<std::size_t>(count_d);
  for (std::size_t i = 0; i < count; ++i) {
    const double v = *lo + static_cast<double>(i) * *st;
    std::string t = fmt::format("{}", v);
    // TOML reads "3" as an integer; a decimal range gives floats throughout
    if (t.find_first_of(".eE") == std::string::npos) t += ".0";
    out.push_back(std::move(t));
  }
}

std::string point_label(const std::vector<std::string>& keys,
                        const std::vector<std::string>& values) {
  std::string s;
  for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    s += fmt::format("{}{}={}", i ? ", " : "", keys[i], values[i]);
  }
  return s;
}

// What the sweep needs to build each point's scenario.
struct Plan {
  const SweepSpec* spec = nullptr;
  bool file_lists_gears = false;  // max_gear is then applied to the scenario's own gears
  std::vector<std::int64_t> base_gears;
  bool reload_hw = false;            // an axis changes the chip or its overlays
  std::shared_ptr<const HwSpec> hw;  // the baseline's chip, shared read-only by all points
  std::shared_ptr<const HwSpec> measured_hw;  // the graph's measured chip when not `hw`
};

std::vector<std::string> point_sets(const Plan& plan, const std::vector<std::string>& values) {
  std::vector<std::string> sets = plan.spec->sets;
  for (std::size_t a = 0; a < values.size(); ++a) {
    const std::string& key = plan.spec->axes[a].key;
    if (key == "deployment.max_gear" && plan.file_lists_gears) {
      // The scenario lists its compiled gears, so "max gear n" keeps its gears up to n and
      // adds n; max_gear itself would clash with the listed gears.
      std::int64_t n = 0;
      const std::string& t = values[a];
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
      if (ec != std::errc() || p != t.data() + t.size() || n < 1) {
        throw InputError(kCommandLine, fmt::format("--vary deployment.max_gear: '{}' is not a batch size "
                                           "(an integer >= 1)",
                                           t));
      }
      std::vector<std::int64_t> g;
      for (const std::int64_t x : plan.base_gears) {
        if (x <= n) g.push_back(x);
      }
      if (g.empty() || g.back() != n) g.push_back(n);
      std::string list;
      for (const std::int64_t x : g) list += (list.empty() ? "" : ", ") + std::to_string(x);
      sets.push_back(fmt::format("deployment.gears=[{}]", list));
    } else {
      sets.push_back(key + "=" + values[a]);
    }
  }
  return sets;
}

// Core partitions that add up to more cores than the chip has cannot be deployed.
std::optional<std::string> infeasible(const Scenario& sc, const HwSpec& hw) {
  const Deployment& d = sc.deployment;
  const auto check = [&](int limit, int cores, const char* kind) -> std::optional<std::string> {
    if (limit <= 0) return std::nullopt;
    const std::int64_t need = std::int64_t{d.streams} * limit;
    if (need <= cores) return std::nullopt;
    return fmt::format("{} streams x {} {} cores = {} > the chip's {}", d.streams, limit, kind,
                       need, cores);
  };
  if (auto why = check(d.cube_cores_per_stream, hw.chip.cube_cores, "cube")) return why;
  return check(d.vector_cores_per_stream, hw.chip.vector_cores, "vector");
}

void fill_metrics(SweepPoint& p, const SimResult& r) {
  p.qps = r.qps;
  p.throughput = r.throughput;
  p.p50_ms = r.latency.p50_ms;
  p.p99_ms = r.latency.p99_ms;
  p.cube_utilization = r.cube_utilization;
  p.vector_utilization = r.vector_utilization;
  p.cards_needed = r.cards_needed;
  p.p99_met = r.p99_met;
}

// The baseline is simulated as it is (`check` false): it is the reference, not a choice.
SweepPoint run_point(const Plan& plan, std::size_t index, const std::vector<std::string>& values,
                     bool check) {
  SweepPoint p;
  p.index = index;
  p.values = values;
  const SweepSpec& spec = *plan.spec;
  const Scenario sc = load_scenario(spec.scenario_file, point_sets(plan, values));
  std::shared_ptr<const HwSpec> hw = plan.hw;
  SimOptions opt;
  opt.measured_hw = plan.measured_hw;
  if (plan.reload_hw) {
    hw = std::make_shared<const HwSpec>(load_scenario_hw(sc, spec.hw_dirs));
    // Another chip than the measurement's anchors the graph's measured durations on it.
    opt.measured_hw = load_measured_hw(sc, *hw, spec.hw_dirs);
  }
  if (auto why = check ? infeasible(sc, *hw) : std::nullopt) {
    p.feasible = false;
    p.skip_reason = *why;
    return p;
  }
  if (spec.find_max_qps) {
    MaxQps m = find_max_qps(sc, *hw, spec.max_qps_tolerance, opt);
    fill_metrics(p, m.result);
    p.max_qps = m.rate_qps;
    p.simulations = m.simulations;
  } else {
    p.simulations = 1;
    fill_metrics(p, simulate(sc, *hw, opt));
  }
  return p;
}

Plan make_plan(const SweepSpec& spec) {
  Plan plan;
  plan.spec = &spec;
  // Errors in the scenario itself surface here, before any thread starts.
  const Scenario base = load_scenario(spec.scenario_file, spec.sets);
  plan.hw = std::make_shared<const HwSpec>(load_scenario_hw(base, spec.hw_dirs));
  plan.measured_hw = load_measured_hw(base, *plan.hw, spec.hw_dirs);
  plan.base_gears = base.deployment.gears;
  // load_scenario has parsed the file already, so this parse cannot fail on syntax.
  const toml::table file = toml::parse_file(spec.scenario_file.string());
  plan.file_lists_gears = file["deployment"]["gears"].is_array();
  for (const std::string& s : spec.sets) {
    if (trim_item(s.substr(0, s.find('='))) == "deployment.gears") plan.file_lists_gears = true;
  }
  for (const SweepAxis& a : spec.axes) {
    if (a.key.rfind("scenario.", 0) == 0) plan.reload_hw = true;
  }
  return plan;
}

void check_spec(const SweepSpec& spec) {
  std::map<std::string, int> seen;
  for (const SweepAxis& a : spec.axes) {
    if (a.values.empty()) throw InputError(kCommandLine, fmt::format("--vary {}: no values", a.key));
    if (seen[a.key]++ > 0) {
      throw InputError(kCommandLine, fmt::format("--vary {} is given twice; list all its values in one "
                                         "--vary",
                                         a.key));
    }
    for (const std::string& s : spec.sets) {
      if (trim_item(s.substr(0, s.find('='))) == a.key) {
        throw InputError(kCommandLine, fmt::format("{} is both fixed (--set) and varied (--vary)", a.key));
      }
    }
  }
  if (spec.shard.n == 0 || spec.shard.k >= spec.shard.n) {
    throw InputError(kCommandLine, "--shard K/N needs 0 <= K < N");
  }
  check_max_qps_tolerance(spec.max_qps_tolerance);
}

std::size_t grid_size(const std::vector<SweepAxis>& axes) {
  std::size_t n = 1;
  for (const SweepAxis& a : axes) {
    if (n > kMaxGridPoints / a.values.size()) {
      throw InputError(
          kCommandLine, fmt::format("the grid has more than {} points; split the sweep", kMaxGridPoints));
    }
    n *= a.values.size();
  }
  return n;
}

// Ranking of points for "best": higher throughput, then lower P99, then lower index.
bool better(const SweepPoint& a, const SweepPoint& b) {
  if (a.throughput != b.throughput) return a.throughput > b.throughput;
  if (a.p99_ms != b.p99_ms) return a.p99_ms < b.p99_ms;
  return a.index < b.index;
}

std::string opt_text(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : std::string();
}

}  // namespace

std::vector<std::string> SweepResult::keys() const {
  std::vector<std::string> k;
  for (const SweepAxis& a : axes) k.push_back(a.key);
  return k;
}

std::vector<std::string> grid_point_values(const std::vector<SweepAxis>& axes, std::size_t index) {
  std::vector<std::string> v(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    const std::size_t n = axes[a].values.size();
    v[a] = axes[a].values[index % n];
    index /= n;
  }
  return v;
}

std::vector<std::string> parse_sweep_values(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& item : split_items(text)) {
    if (item.empty()) {
      throw InputError(kCommandLine, fmt::format("{}: empty value in '{}'", what, text));
    }
    const std::size_t dots = item.find("..");
    if (dots != std::string::npos && item.front() != '[' && item.front() != '{' &&
        item.front() != '"') {
      expand_range(item, dots, what, out);
    } else {
      out.push_back(item);
    }
  }
  return out;
}

SweepAxis parse_sweep_axis(const std::string& spec) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) {
    throw InputError(kCommandLine, fmt::format("--vary '{}': expected section.key=values", spec));
  }
  SweepAxis axis;
  axis.key = trim_item(std::string_view(spec).substr(0, eq));
  const std::vector<std::string>& keys = scenario_keys();
  if (std::find(keys.begin(), keys.end(), axis.key) == keys.end()) {
    std::string list;
    for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
    throw InputError(kCommandLine, fmt::format("--vary '{}': unknown key '{}'; accepted keys: {}", spec,
                                       axis.key, list));
  }
  axis.values = parse_sweep_values(spec.substr(eq + 1), fmt::format("--vary '{}'", spec));
  return axis;
}

SweepShard parse_sweep_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string k = slash == std::string::npos ? "" : trim_item(text.substr(0, slash));
  const std::string n = slash == std::string::npos ? "" : trim_item(text.substr(slash + 1));
  SweepShard s;
  const auto [pk, ek] = std::from_chars(k.data(), k.data() + k.size(), s.k);
  const auto [pn, en] = std::from_chars(n.data(), n.data() + n.size(), s.n);
  if (k.empty() || n.empty() || ek != std::errc() || en != std::errc() ||
      pk != k.data() + k.size() || pn != n.data() + n.size() || s.n == 0 || s.k >= s.n) {
    throw InputError(kCommandLine, fmt::format("--shard '{}': expected K/N with 0 <= K < N (K counts from "
                                       "0, e.g. $SLURM_ARRAY_TASK_ID/N)",
                                       text));
  }
  return s;
}

std::size_t SweepResult::skipped() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [](const SweepPoint& p) { return !p.feasible; }));
}

void run_parallel(std::size_t tasks, unsigned jobs, const std::function<void(std::size_t)>& task,
                  const SweepProgress& progress) {
  std::vector<std::exception_ptr> errors(tasks);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex progress_mutex;
  std::size_t done = 0;
  const auto worker = [&] {
    while (!failed.load()) {
      const std::size_t t = next.fetch_add(1);
      if (t >= tasks) return;
      try {
        task(t);
      } catch (...) {
        errors[t] = std::current_exception();
        failed.store(true);
      }
      const std::lock_guard<std::mutex> lock(progress_mutex);
      ++done;
      if (progress) progress(done, tasks);
    }
  };
  unsigned n = jobs == 0 ? std::max(1u, std::thread::hardware_concurrency()) : jobs;
  n = static_cast<unsigned>(std::min<std::size_t>(n, tasks));
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < n; ++i) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

SweepResult run_sweep(const SweepSpec& spec, unsigned jobs, const SweepProgress& progress) {
  check_spec(spec);
  const std::size_t grid = grid_size(spec.axes);
  const Plan plan = make_plan(spec);

  std::vector<std::size_t> mine;
  for (std::size_t i = spec.shard.k; i < grid; i += spec.shard.n) mine.push_back(i);
  // Task 0 is the baseline, task t > 0 is point mine[t - 1]; results land in their own slot, so
  // the order of completion (which depends on the threads) never shows in the output.
  const std::size_t tasks = mine.size() + 1;
  std::vector<SweepPoint> out(tasks);
  run_parallel(
      tasks, jobs,
      [&](std::size_t t) {
        if (t == 0) {
          out[0] = run_point(plan, 0, {}, false);
          out[0].values.clear();
          return;
        }
        const std::size_t index = mine[t - 1];
        const std::vector<std::string> values = grid_point_values(spec.axes, index);
        try {
          out[t] = run_point(plan, index, values, true);
        } catch (const InputError& e) {
          std::vector<std::string> keys;
          for (const SweepAxis& a : spec.axes) keys.push_back(a.key);
          throw InputError(e.pos(), fmt::format("sweep point {} ({}): {}", index,
                                                point_label(keys, values), e.detail()));
        }
      },
      progress);

  SweepResult r;
  const Scenario base = load_scenario(spec.scenario_file, spec.sets);
  r.scenario = base.info.name;
  r.scenario_file = spec.scenario_file.string();
  r.sets = spec.sets;
  r.axes = spec.axes;
  r.grid_points = grid;
  r.shard = spec.shard;
  r.find_max_qps = spec.find_max_qps;
  r.target_p99_ms = base.target.p99_ms;
  r.target_traffic_qps = base.target.traffic_qps;
  r.baseline = std::move(out[0]);
  r.points.assign(std::make_move_iterator(out.begin() + 1), std::make_move_iterator(out.end()));
  analyse_sweep(r);
  return r;
}

void analyse_sweep(SweepResult& r) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    r.points[i].pareto = false;
    if (r.points[i].feasible) order.push_back(i);
  }
  // Pareto front (max throughput, min P99): walk by throughput descending; a point is dominated
  // when a point of strictly higher throughput has a P99 no higher, or one of equal throughput
  // has a strictly lower P99.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SweepPoint& x = r.points[a];
    const SweepPoint& y = r.points[b];
    if (x.throughput != y.throughput) return x.throughput > y.throughput;
    if (x.p99_ms != y.p99_ms) return x.p99_ms < y.p99_ms;
    return x.index < y.index;
  });
  double best_p99_above = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < order.size();) {
    std::size_t e = g;
    while (e < order.size() && r.points[order[e]].throughput == r.points[order[g]].throughput) ++e;
    const double group_min = r.points[order[g]].p99_ms;  // sorted ascending within the group
    for (std::size_t i = g; i < e; ++i) {
      const double p99 = r.points[order[i]].p99_ms;
      r.points[order[i]].pareto = !(best_p99_above <= p99) && !(group_min < p99);
    }
    best_p99_above = std::min(best_p99_above, group_min);
    g = e;
  }

  r.best.reset();
  r.fewest_cards.reset();
  for (const std::size_t i : order) {
    const SweepPoint& p = r.points[i];
    const bool meets = !r.target_p99_ms || p.p99_ms <= *r.target_p99_ms;
    if (!meets) continue;
    if (!r.best || better(p, r.points[*r.best])) r.best = i;
    if (p.cards_needed) {
      const SweepPoint* f = r.fewest_cards ? &r.points[*r.fewest_cards] : nullptr;
      if (f == nullptr || *p.cards_needed < *f->cards_needed ||
          (*p.cards_needed == *f->cards_needed && better(p, *f))) {
        r.fewest_cards = i;
      }
    }
  }
}

std::string sweep_to_csv(const SweepResult& r) {
  std::string s = "index";
  for (const std::string& k : r.keys()) {
    s += ',';
    s += csv_field(k);
  }
  s += ",feasible,qps,throughput,p50_ms,p99_ms,cube_utilization,vector_utilization,cards_needed,"
       "p99_met,max_qps,pareto,skip_reason\n";
  for (const SweepPoint& p : r.points) {
    s += std::to_string(p.index);
    for (const std::string& v : p.values) {
      s += ',';
      s += csv_field(v);
    }
    if (!p.feasible) {
      s += ",false,,,,,,,,,,,";
      s += csv_field(p.skip_reason);
      s += '\n';
      continue;
    }
    s += fmt::format(",true,{:.3f},{:.3f},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{},{},\n", p.qps,
                     p.throughput, p.p50_ms, p.p99_ms, p.cube_utilization, p.vector_utilization,
                     opt_text(p.cards_needed), p.p99_met ? (*p.p99_met ? "true" : "false") : "",
                     p.max_qps ? fmt::format("{:.3f}", *p.max_qps) : "",
                     p.pareto ? "true" : "false");
  }
  return s;
}

std::string sweep_to_text(const SweepResult& r) {
  std::vector<std::string> head = r.keys();
  if (r.find_max_qps) head.emplace_back("max QPS");
  for (const char* h : {"QPS", "samples/s", "P50 ms", "P99 ms", "cube %", "vector %", "cards"}) {
    head.emplace_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  for (const SweepPoint& p : r.points) {
    if (!p.feasible) continue;
    std::vector<std::string> row = p.values;
    if (r.find_max_qps) row.push_back(fmt::format("{:.0f}", p.max_qps.value_or(0)));
    row.push_back(fmt::format("{:.0f}", p.qps));
    row.push_back(fmt::format("{:.0f}", p.throughput));
    row.push_back(fmt::format("{:.3f}", p.p50_ms));
    row.push_back(fmt::format("{:.3f}{}", p.p99_ms, p.p99_met && !*p.p99_met ? "!" : ""));
    row.push_back(fmt::format("{:.1f}", 100 * p.cube_utilization));
    row.push_back(fmt::format("{:.1f}", 100 * p.vector_utilization));
    row.push_back(p.cards_needed ? std::to_string(*p.cards_needed) : "-");
    row.push_back(p.pareto ? "*" : "");
    rows.push_back(std::move(row));
  }
  head.emplace_back("front");
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  std::string s = fmt::format(
      "sweep of {}: {} point(s){}, {} simulated, {} skipped\n", r.scenario, r.grid_points,
      r.shard.n > 1 ? fmt::format(" (shard {}/{})", r.shard.k, r.shard.n) : std::string(),
      r.points.size() - r.skipped(), r.skipped());
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      l += fmt::format("{}{:>{}}", c ? "  " : "", cells[c], width[c]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    s += l + "\n";
  };
  line(head);
  for (const auto& row : rows) line(row);
  s += "* = on the Pareto front of throughput against P99; ! = P99 above the target\n";
  if (r.skipped() > 0) {
    const auto it = std::find_if(r.points.begin(), r.points.end(),
                                 [](const SweepPoint& p) { return !p.feasible; });
    s += fmt::format("skipped {} infeasible point(s), e.g. {}: {}\n", r.skipped(),
                     point_label(r.keys(), it->values), it->skip_reason);
  }
  const std::string target =
      r.target_p99_ms ? fmt::format("P99 <= {} ms", *r.target_p99_ms) : std::string("no target");
  const SweepPoint& b = r.baseline;
  const auto rate = [&](const SweepPoint& p) {
    return r.find_max_qps ? fmt::format("max {:.0f} QPS", p.max_qps.value_or(0))
                          : fmt::format("{:.0f} QPS", p.qps);
  };
  if (r.best) {
    const SweepPoint& p = r.points[*r.best];
    const double gain = b.feasible && b.throughput > 0 ? p.throughput / b.throughput - 1 : 0;
    s += fmt::format(
        "best under {}: {} -> {:.0f} samples/s, {}, P99 {:.3f} ms; {:+.1f}% "
        "throughput over the scenario's own configuration ({:.0f} samples/s, P99 "
        "{:.3f} ms)\n",
        target, point_label(r.keys(), p.values), p.throughput, rate(p), p.p99_ms, 100 * gain,
        b.throughput, b.p99_ms);
    if (!r.find_max_qps) {
      // At one offered rate every point that keeps up carries the same traffic, so throughput
      // differs by noise only; capacity needs the rate search.
      s += "(at one offered rate, points that keep up differ in throughput by noise only; "
           "--find-max-qps ranks them by the highest rate that meets the P99 target)\n";
    }
  } else {
    s += fmt::format("no point meets {}\n", target);
  }
  if (r.target_traffic_qps) {
    if (r.fewest_cards) {
      const SweepPoint& p = r.points[*r.fewest_cards];
      s += fmt::format("fewest cards for {:.0f} QPS{}: {} -> {} card(s) (the scenario's own: {})\n",
                       *r.target_traffic_qps,
                       r.target_p99_ms ? fmt::format(" at {}", target) : std::string(),
                       point_label(r.keys(), p.values), *p.cards_needed,
                       b.cards_needed ? std::to_string(*b.cards_needed) : std::string("-"));
    } else {
      s += fmt::format("no point carries {:.0f} QPS at {}\n", *r.target_traffic_qps, target);
    }
  }
  return s;
}

}  // namespace npusim::sim
