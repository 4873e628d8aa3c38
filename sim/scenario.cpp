#include "sim/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>

#include "model/toml_reader.h"
#include "sim/anchoring.h"

namespace npusim::sim {

namespace fs = std::filesystem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();
// Largest batch size / gear accepted: far above any compiled gear, small enough that
// gear × per-sample bytes stays exact in a double.
constexpr std::int64_t kMaxBatch = 1 << 20;

// The schema: every accepted key per section. The loader below reads exactly these (a test
// checks that a scenario setting all of them loads), and --set is checked against it first so
// an unknown override is reported at the command line rather than inside the file.
const std::vector<std::pair<std::string, std::vector<std::string>>>& schema() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> s = {
      {"scenario", {"hw", "name", "overlay", "seed"}},
      {"graph", {"batch_dim", "dims", "file", "name", "onnx", "op"}},
      {"deployment",
       {"batch_window_us", "cube_cores_per_stream", "gears", "max_gear", "split_oversize",
        "streams", "vector_cores_per_stream"}},
      {"workload",
       {"arrival", "batch_size", "concurrency", "input_bytes_per_sample", "output_bytes_per_sample",
        "rate_qps", "requests", "trace_file", "warmup_requests"}},
      {"contention", {"core_limit_bypass", "host", "l2_bandwidth", "scheduler"}},
      {"target", {"p99_ms", "traffic_qps"}},
  };
  return s;
}

// Keys an override may remove with `none` (the scenario means something without them).
const std::vector<std::string>& removable_keys() {
  static const std::vector<std::string> k = {
      "deployment.batch_window_us", "deployment.cube_cores_per_stream",
      "deployment.vector_cores_per_stream", "target.p99_ms", "target.traffic_qps"};
  return k;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool parse_int(std::string_view s, std::int64_t& out) {
  s = trim(s);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
  s = trim(s);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}

struct Override {
  std::string section;
  std::string key;
  std::string text;  // the whole "section.key=value" as typed
};

Override parse_override(const std::string& set) {
  const SourcePos cmd{"<command line>", 0, 0};
  const std::size_t eq = set.find('=');
  if (eq == std::string::npos) {
    throw InputError(cmd, fmt::format("--set '{}': expected section.key=value", set));
  }
  const std::string path(trim(std::string_view(set).substr(0, eq)));
  const std::size_t dot = path.find('.');
  std::string section = dot == std::string::npos ? std::string() : path.substr(0, dot);
  std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  std::vector<std::string> all;
  for (const auto& [sec, keys] : schema()) {
    for (const auto& k : keys) {
      if (k != "op") all.push_back(sec + "." + k);
    }
  }
  const auto known = std::find(all.begin(), all.end(), section + "." + key) != all.end();
  if (!known) {
    std::string list;
    for (const auto& k : all) list += (list.empty() ? "" : ", ") + k;
    throw InputError(
        cmd, fmt::format("--set '{}': unknown key '{}'; accepted keys: {}", set, path, list));
  }
  return Override{std::move(section), std::move(key), set};
}

// Puts the override's value into the document: TOML syntax when it parses, else a bare string.
// `none` removes an optional key. The compiled gears are given one way or the other, so an
// override of `gears` or `max_gear` removes the file's other one: what the user typed wins.
void apply_override(TomlFile& doc, const Override& o) {
  const std::string value(trim(std::string_view(o.text).substr(o.text.find('=') + 1)));
  const std::string path = o.section + "." + o.key;
  if (value == "none") {
    const auto& removable = removable_keys();
    if (std::find(removable.begin(), removable.end(), path) == removable.end()) {
      std::string list;
      for (const auto& k : removable) list += (list.empty() ? "" : ", ") + k;
      throw InputError({"<command line>", 0, 0},
                       fmt::format("--set '{}': {} cannot be removed; `none` removes only {}",
                                   o.text, path, list));
    }
    if (toml::table* section = doc.root[o.section].as_table()) section->erase(o.key);
    return;
  }
  toml::table* section = doc.root[o.section].as_table();
  if (section == nullptr) {
    doc.root.insert_or_assign(o.section, toml::table{});
    section = doc.root[o.section].as_table();
  }
  if (o.section == "graph" && (o.key == "file" || o.key == "onnx")) {
    section->clear();  // another graph source replaces the scenario's graph as a whole
  }
  if (path == "deployment.max_gear") section->erase("gears");
  if (path == "deployment.gears") section->erase("max_gear");
  try {
    const std::string text = "v = " + value;
    check_toml_text(text, "<command line>");  // non-ASCII outside quotes: a bare word below
    toml::table t = toml::parse(text, std::string_view("<command line>"));
    if (toml::node* v = t.get("v"); v != nullptr) {
      v->visit([&](auto&& n) { section->insert_or_assign(o.key, std::move(n)); });
      return;
    }
  } catch (const toml::parse_error&) {
    // not TOML syntax: a bare word such as `poisson` is taken as a string below
  } catch (const InputError&) {
    // the same, for a word with non-ASCII letters
  }
  section->insert_or_assign(o.key, value);
}

std::vector<std::int64_t> read_size_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0}, "cannot open the batch-size file");
  std::vector<std::int64_t> out;
  std::string line;
  std::uint32_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    // one or more sizes per line, separated by commas or spaces
    std::size_t start = 0;
    for (std::size_t i = 0; i <= l.size(); ++i) {
      if (i < l.size() && l[i] != ',' && l[i] != ' ' && l[i] != '\t') continue;
      const std::string_view tok = trim(l.substr(start, i - start));
      start = i + 1;
      if (tok.empty()) continue;
      std::int64_t v = 0;
      if (!parse_int(tok, v) || v < 1 || v > kMaxBatch) {
        throw InputError(
            {file.string(), line_no, static_cast<std::uint32_t>(start - tok.size())},
            fmt::format("batch size '{}': expected an integer in [1, {}]", tok, kMaxBatch));
      }
      out.push_back(v);
    }
  }
  if (out.empty()) throw InputError({file.string(), 0, 0}, "the batch-size file holds no sizes");
  return out;
}

std::vector<TraceArrival> read_trace_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0}, "cannot open the trace file");
  std::vector<TraceArrival> out;
  std::string line;
  std::uint32_t line_no = 0;
  double last_us = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string_view l = trim(line);
    if (l.empty() || l.front() == '#') continue;
    const std::size_t comma = l.find(',');
    const std::string_view t_text = l.substr(0, comma);
    double t_us = 0;
    if (!parse_double(t_text, t_us) || t_us < 0) {
      throw InputError({file.string(), line_no, 1},
                       fmt::format("arrival time '{}': expected microseconds >= 0", trim(t_text)));
    }
    if (t_us < last_us) {
      throw InputError(
          {file.string(), line_no, 1},
          fmt::format("arrival time {} is before the previous line's {}", t_us, last_us));
    }
    last_us = t_us;
    // The run goes on after the last arrival; half the clock leaves it all the room it needs.
    if (t_us >= kMaxTimeUs / 2) {
      throw InputError({file.string(), line_no, 1},
                       fmt::format("arrival time {} us is past the simulator's horizon of {} us "
                                   "(about 53 days)",
                                   t_us, kMaxTimeUs / 2));
    }
    TraceArrival a;
    a.arrival_ns = us_to_ns(t_us);
    if (comma != std::string_view::npos) {
      const std::string_view b_text = l.substr(comma + 1);
      std::int64_t b = 0;
      if (!parse_int(b_text, b) || b < 1 || b > kMaxBatch) {
        throw InputError({file.string(), line_no, static_cast<std::uint32_t>(comma + 2)},
                         fmt::format("batch size '{}': expected an integer in [1, {}]",
                                     trim(b_text), kMaxBatch));
      }
      a.batch_size = b;
    }
    out.push_back(a);
  }
  if (out.empty()) throw InputError({file.string(), 0, 0}, "the trace holds no arrivals");
  return out;
}

fs::path relative_to(const fs::path& base_dir, const std::string& p) {
  fs::path path(p);
  return path.is_relative() ? base_dir / path : path;
}

BatchSizeDist read_batch_size(TableReader& w, const fs::path& base_dir) {
  const toml::node* n = w.table().get("batch_size");
  if (n->is_integer()) {
    return BatchSizeDist::fixed(w.integer("batch_size", 1, kMaxBatch));
  }
  if (n->is_string()) {
    return BatchSizeDist::samples(read_size_file(relative_to(base_dir, w.string("batch_size"))));
  }
  if (n->is_table()) {
    TableReader h = w.sub_table("batch_size");
    std::vector<std::int64_t> sizes;
    std::vector<double> weights;
    for (const std::string& k : h.keys()) {
      std::int64_t size = 0;
      if (!parse_int(k, size) || size < 1 || size > kMaxBatch) {
        h.fail(k, fmt::format("histogram key must be a batch size in [1, {}]", kMaxBatch));
      }
      sizes.push_back(size);
      weights.push_back(h.number(k, 0, kInf, /*lo_open=*/true));
    }
    if (sizes.empty()) w.fail("batch_size", "the histogram is empty");
    h.finish();
    return BatchSizeDist::histogram(std::move(sizes), std::move(weights));
  }
  w.fail("batch_size", fmt::format("expected an integer, a histogram table {{ 1 = 0.4, 8 = 0.6 }} "
                                   "or a file name, got {}",
                                   toml_type_name(*n)));
}

// `overridden`: the "section.key" values that came from --set.
Scenario read_scenario(const TomlFile& doc, const fs::path& file,
                       const std::vector<std::string>& overridden) {
  auto from_cli = [&](const char* key) {
    return std::find(overridden.begin(), overridden.end(), key) != overridden.end();
  };
  Scenario sc;
  sc.file = file;
  const fs::path base_dir = file.parent_path();
  TableReader root(doc);

  {
    TableReader s = root.sub_table("scenario");
    sc.info.name = s.optional_string("name").value_or(file.stem().string());
    sc.info.hw = s.string("hw");
    sc.info.hw_pos = s.value_pos("hw");
    if (s.has("overlay") && s.table().get("overlay")->is_array()) {
      for (const auto& o : s.string_array("overlay")) sc.info.overlays.push_back(o);
    } else if (auto o = s.optional_string("overlay")) {
      sc.info.overlays.push_back(*o);
    }
    for (auto& o : sc.info.overlays) {
      const fs::path p = relative_to(base_dir, o);
      // an overlay next to the scenario wins over one named relative to the working directory
      if (fs::exists(p)) o = p.string();
    }
    sc.info.seed = static_cast<std::uint64_t>(s.optional_integer("seed", 0, kMaxI64).value_or(1));
    s.finish();
  }
  {
    TableReader g = root.sub_table("graph");
    sc.graph = read_graph_table(g, base_dir);
  }
  {
    TableReader d = root.sub_table("deployment");
    Deployment& dep = sc.deployment;
    dep.streams = static_cast<int>(d.integer("streams", 1, 1024));
    dep.cube_cores_per_stream =
        static_cast<int>(d.optional_integer("cube_cores_per_stream", 1, 4096).value_or(0));
    dep.cube_limit_pos = d.value_pos("cube_cores_per_stream");
    dep.vector_cores_per_stream =
        static_cast<int>(d.optional_integer("vector_cores_per_stream", 1, 4096).value_or(0));
    dep.vector_limit_pos = d.value_pos("vector_cores_per_stream");
    const bool has_gears = d.has("gears");
    const bool has_max = d.has("max_gear");
    if (has_gears && has_max) d.fail("max_gear", "give either `gears` or `max_gear`, not both");
    if (has_gears) {
      dep.gears = d.integer_array("gears", 1, kMaxBatch);
      if (dep.gears.empty()) d.fail("gears", "needs at least one batch size");
      std::vector<std::int64_t> sorted = dep.gears;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        d.fail("gears", "batch sizes must be unique");
      }
      dep.gears = std::move(sorted);
      (void)d.optional_integer("max_gear", 1, kMaxBatch);
    } else if (has_max) {
      // max_gear = n compiles every size 1..n; capped so the per-gear prediction cache stays small
      const std::int64_t m = d.integer("max_gear", 1, 4096);
      dep.gears.resize(static_cast<std::size_t>(m));
      std::iota(dep.gears.begin(), dep.gears.end(), std::int64_t{1});
      (void)d.optional_string("gears");
    } else {
      (void)d.optional_string("gears");
      (void)d.optional_string("max_gear");
      d.fail_table("needs `gears = [...]` (compiled batch sizes) or `max_gear = n` (all of 1..n)");
    }
    dep.batch_window_us = d.optional_number("batch_window_us", 0, 1e9).value_or(0);
    dep.split_oversize = d.optional_boolean("split_oversize").value_or(false);
    d.finish();
  }
  {
    TableReader w = root.sub_table("workload");
    Workload& wl = sc.workload;
    const std::string arrival = w.string("arrival");
    if (arrival == "poisson") {
      wl.arrival = ArrivalKind::kPoisson;
    } else if (arrival == "closed") {
      wl.arrival = ArrivalKind::kClosed;
    } else if (arrival == "trace") {
      wl.arrival = ArrivalKind::kTrace;
    } else {
      w.fail("arrival",
             fmt::format("unknown arrival '{}'; expected poisson, closed or trace", arrival));
    }
    // Keys of the other arrival kinds are errors, not silently ignored values -- except the
    // file's own when --set switched the arrival kind (the file cannot be edited from there).
    const bool arrival_switched = from_cli("workload.arrival");
    auto only_for = [&](const char* key, ArrivalKind kind) {
      const bool tolerated =
          arrival_switched && !from_cli((std::string("workload.") + key).c_str());
      if (w.has(key) && wl.arrival != kind && !tolerated) {
        w.fail(key, fmt::format("only used with arrival = \"{}\"", arrival_name(kind)));
      }
    };
    only_for("rate_qps", ArrivalKind::kPoisson);
    only_for("concurrency", ArrivalKind::kClosed);
    only_for("trace_file", ArrivalKind::kTrace);
    if (wl.arrival == ArrivalKind::kPoisson) wl.rate_qps = w.number("rate_qps", 0, 1e9, true);
    if (wl.arrival == ArrivalKind::kClosed) {
      wl.concurrency = static_cast<int>(w.integer("concurrency", 1, 1'000'000));
    }
    if (wl.arrival == ArrivalKind::kTrace) {
      wl.trace = read_trace_file(relative_to(base_dir, w.string("trace_file")));
    }
    (void)w.optional_number("rate_qps", 0, kInf);
    (void)w.optional_integer("concurrency", 1, kMaxI64);
    (void)w.optional_string("trace_file");

    wl.warmup_requests = w.optional_integer("warmup_requests", 0, 100'000'000).value_or(0);
    if (wl.arrival == ArrivalKind::kTrace) {
      const auto n = static_cast<std::int64_t>(wl.trace.size());
      const auto asked = w.optional_integer("requests", 1, 100'000'000);
      wl.requests = asked.value_or(n - wl.warmup_requests);
      if (wl.requests < 1 || wl.requests + wl.warmup_requests > n) {
        w.fail(
            asked ? "requests" : "warmup_requests",
            fmt::format("the trace holds {} arrivals, fewer than warmup_requests + requests = {}",
                        n, wl.requests + wl.warmup_requests));
      }
    } else {
      wl.requests = w.integer("requests", 1, 100'000'000);
    }
    if (wl.arrival == ArrivalKind::kPoisson) {
      const double least = min_rate_qps(wl.warmup_requests + wl.requests);
      if (wl.rate_qps < least) {
        w.fail("rate_qps",
               fmt::format("{} QPS spreads warmup_requests + requests = {} arrivals over about "
                           "{:.3g} days of simulated time, beyond the {:.3g} days a run may span; "
                           "the least rate for them is {:.3g} QPS",
                           wl.rate_qps, wl.warmup_requests + wl.requests,
                           static_cast<double>(wl.warmup_requests + wl.requests) / wl.rate_qps /
                               86400,
                           kMaxTimeUs / 10 / 1e6 / 86400, least));
      }
    }
    const bool trace_has_sizes =
        wl.arrival == ArrivalKind::kTrace &&
        std::all_of(wl.trace.begin(), wl.trace.end(),
                    [](const TraceArrival& a) { return a.batch_size > 0; });
    if (w.has("batch_size")) {
      wl.batch_size = read_batch_size(w, base_dir);
    } else if (!trace_has_sizes) {
      (void)w.optional_integer("batch_size", 1, kMaxBatch);
      w.fail_table("missing required key 'batch_size' (an integer, a histogram table or a file)");
    } else {
      (void)w.optional_integer("batch_size", 1, kMaxBatch);
    }
    wl.input_bytes_per_sample = w.optional_number("input_bytes_per_sample", 0, 1e15).value_or(0);
    wl.output_bytes_per_sample = w.optional_number("output_bytes_per_sample", 0, 1e15).value_or(0);

    // A request above the largest gear can only run when it may be split.
    std::int64_t largest = wl.batch_size.max_size();
    for (const auto& a : wl.trace) largest = std::max(largest, a.batch_size);
    const std::int64_t max_gear = sc.deployment.gears.back();
    if (largest > max_gear && !sc.deployment.split_oversize) {
      w.fail(w.has("batch_size") ? "batch_size" : "trace_file",
             fmt::format("requests of up to {} samples exceed the largest gear {}; set "
                         "[deployment] split_oversize = true or add a larger gear",
                         largest, max_gear));
    }
    w.finish();
  }
  if (auto c = root.optional_sub_table("contention")) {
    Contention& k = sc.contention;
    k.host = c->optional_boolean("host").value_or(true);
    k.scheduler = c->optional_boolean("scheduler").value_or(true);
    k.l2_bandwidth = c->optional_boolean("l2_bandwidth").value_or(true);
    k.core_limit_bypass = c->optional_boolean("core_limit_bypass").value_or(true);
    c->finish();
  }
  if (auto t = root.optional_sub_table("target")) {
    sc.target.p99_ms = t->optional_number("p99_ms", 0, kInf, true);
    sc.target.traffic_qps = t->optional_number("traffic_qps", 0, kInf, true);
    t->finish();
  }
  root.finish();
  return sc;
}

}  // namespace

const char* arrival_name(ArrivalKind a) noexcept {
  switch (a) {
    case ArrivalKind::kPoisson:
      return "poisson";
    case ArrivalKind::kClosed:
      return "closed";
    case ArrivalKind::kTrace:
      return "trace";
  }
  return "?";
}

BatchSizeDist BatchSizeDist::fixed(std::int64_t size) {
  NPUSIM_CHECK(size >= 1);
  return histogram({size}, {1.0});
}

BatchSizeDist BatchSizeDist::histogram(std::vector<std::int64_t> sizes,
                                       std::vector<double> weights) {
  NPUSIM_CHECK(!sizes.empty() && sizes.size() == weights.size());
  std::map<std::int64_t, double> merged;
  double total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    NPUSIM_CHECK(sizes[i] >= 1 && weights[i] > 0);
    merged[sizes[i]] += weights[i];
    total += weights[i];
  }
  BatchSizeDist d;
  double acc = 0;
  for (const auto& [s, w] : merged) {
    d.sizes_.push_back(s);
    d.prob_.push_back(w / total);
    acc += w / total;
    d.cumulative_.push_back(acc);
  }
  d.cumulative_.back() = 1.0;  // no rounding gap above the last bucket
  return d;
}

BatchSizeDist BatchSizeDist::samples(std::vector<std::int64_t> sizes) {
  std::vector<double> ones(sizes.size(), 1.0);
  return histogram(std::move(sizes), std::move(ones));
}

std::int64_t BatchSizeDist::draw(double u) const noexcept {
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const auto i = static_cast<std::size_t>(it - cumulative_.begin());
  return sizes_[std::min(i, sizes_.size() - 1)];
}

std::int64_t BatchSizeDist::max_size() const noexcept { return sizes_.back(); }

double BatchSizeDist::mean() const noexcept {
  double m = 0;
  for (std::size_t i = 0; i < sizes_.size(); ++i) m += static_cast<double>(sizes_[i]) * prob_[i];
  return m;
}

const std::vector<std::string>& scenario_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& [sec, ks] : schema()) {
      for (const auto& k : ks) out.push_back(sec + "." + k);
    }
    return out;
  }();
  return keys;
}

HwSpec load_scenario_hw(const Scenario& sc, const std::vector<fs::path>& hw_dirs) {
  fs::path chip = relative_to(sc.file.parent_path(), sc.info.hw);
  std::vector<fs::path> overlays(sc.info.overlays.begin(), sc.info.overlays.end());
  if (!fs::is_regular_file(chip)) {
    try {
      chip = resolve_hw_spec(sc.info.hw, hw_dirs);
    } catch (const InputError& e) {
      throw InputError(sc.info.hw_pos, "[scenario].hw: " + e.detail());
    }
  }
  return load_hw_spec(chip, overlays);
}

std::shared_ptr<const HwSpec> load_measured_hw(const Scenario& sc, const HwSpec& hw,
                                               const std::vector<fs::path>& hw_dirs) {
  const auto& m = sc.graph.measured();
  if (!m || Anchoring::same_chip(m->hw, hw)) return nullptr;
  try {
    return std::make_shared<const HwSpec>(load_hw_spec(resolve_hw_spec(m->hw, hw_dirs)));
  } catch (const InputError& e) {
    throw InputError(m->pos, "[graph.measured].hw: " + e.detail());
  }
}

double min_rate_qps(std::int64_t arrivals) {
  const double span_s = kMaxTimeUs / 10 / 1e6;
  return static_cast<double>(std::max<std::int64_t>(arrivals, 50)) / span_s;
}

Scenario load_scenario(const fs::path& file, const std::vector<std::string>& sets) {
  TomlFile doc = parse_toml_file(file);
  std::vector<Override> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  const auto given = [&](const char* key) {
    return std::any_of(overrides.begin(), overrides.end(),
                       [&](const Override& o) { return o.section + "." + o.key == key; });
  };
  if (given("deployment.gears") && given("deployment.max_gear")) {
    throw InputError({"<command line>", 0, 0},
                     "--set deployment.gears and deployment.max_gear: give one of them, not both");
  }
  for (const auto& o : overrides) apply_override(doc, o);
  try {
    std::vector<std::string> overridden;
    for (const auto& o : overrides) overridden.push_back(o.section + "." + o.key);
    Scenario sc = read_scenario(doc, file, overridden);
    // Positions kept for checks made once the chip is known: an overridden value's is the
    // command line, not the line it would have had in the file.
    const SourcePos cmd{"<command line>", 0, 0};
    for (const auto& o : overrides) {
      const std::string key = o.section + "." + o.key;
      if (key == "scenario.hw") sc.info.hw_pos = cmd;
      if (key == "deployment.cube_cores_per_stream") sc.deployment.cube_limit_pos = cmd;
      if (key == "deployment.vector_cores_per_stream") sc.deployment.vector_limit_pos = cmd;
    }
    return sc;
  } catch (const InputError& e) {
    // An overridden value has no line in the file: report the defect at the command line.
    for (const auto& o : overrides) {
      const std::string label = fmt::format("[{}].{}", o.section, o.key);
      if (e.detail().rfind(label, 0) == 0) {
        throw InputError({"<command line>", 0, 0},
                         fmt::format("--set '{}': {}", o.text, e.detail()));
      }
    }
    throw;
  }
}

}  // namespace npusim::sim
