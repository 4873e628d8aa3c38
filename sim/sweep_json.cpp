// Sweep results as JSON (`sweep --json` / `-o`), read back and merged (`npusim merge`): the
// shards of a job array travel as these files, so the reader checks what a damaged, edited or
// mismatched file could otherwise carry into a merged result.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/error.h"
#include "sim/sweep.h"

namespace npusim::sim {

namespace {

using Json = nlohmann::ordered_json;

// Version 2 added "axes" (each axis's values), so that shards of different grids are told apart.
constexpr int kSweepFormat = 2;

// JSON numbers: null for absent optionals.
template <typename T>
Json opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json point_json(const SweepPoint& p, bool with_index) {
  Json j;
  if (with_index) j["index"] = p.index;
  j["values"] = p.values;
  j["feasible"] = p.feasible;
  if (!p.feasible) {
    j["skip_reason"] = p.skip_reason;
    return j;
  }
  j["qps"] = p.qps;
  j["throughput"] = p.throughput;
  j["p50_ms"] = p.p50_ms;
  j["p99_ms"] = p.p99_ms;
  j["cube_utilization"] = p.cube_utilization;
  j["vector_utilization"] = p.vector_utilization;
  j["cards_needed"] = opt(p.cards_needed);
  j["p99_met"] = opt(p.p99_met);
  j["max_qps"] = opt(p.max_qps);
  j["simulations"] = p.simulations;
  j["pareto"] = p.pareto;
  return j;
}

// Reads a JSON document field by field, naming the file and the field in every error.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& what) const { throw InputError({file_, 0, 0}, what); }
  const Json& field(const Json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object() || !obj.contains(key)) {
      fail(
          fmt::format("{}: missing '{}' (is this the --json output of npusim sweep?)", where, key));
    }
    return obj.at(key);
  }
  double number(const Json& obj, const char* key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_number()) fail(fmt::format("{}.{}: expected a number", where, key));
    return v.get<double>();
  }
  // A metric of a simulation: finite and >= 0 (nlohmann reads no NaN or infinity, but an
  // edited file can hold a negative QPS, which would otherwise merge and rank as a result).
  double measure(const Json& obj, const char* key, const std::string& where) const {
    const double v = number(obj, key, where);
    if (!(v >= 0)) fail(fmt::format("{}.{}: expected a value >= 0, got {}", where, key, v));
    return v;
  }
  // A utilisation: a share of the cores' time, in [0, 1].
  double share(const Json& obj, const char* key, const std::string& where) const {
    const double v = number(obj, key, where);
    if (!(v >= 0 && v <= 1)) {
      fail(fmt::format("{}.{}: expected a share in [0, 1], got {}", where, key, v));
    }
    return v;
  }
  std::size_t count(const Json& obj, const char* key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_number_unsigned()) fail(fmt::format("{}.{}: expected an integer >= 0", where, key));
    return v.get<std::size_t>();
  }
  bool boolean(const Json& obj, const char* key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_boolean()) fail(fmt::format("{}.{}: expected true or false", where, key));
    return v.get<bool>();
  }
  std::string string(const Json& obj, const char* key, const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (!v.is_string()) fail(fmt::format("{}.{}: expected a string", where, key));
    return v.get<std::string>();
  }
  std::vector<std::string> strings(const Json& obj, const char* key,
                                   const std::string& where) const {
    const Json& v = field(obj, key, where);
    std::vector<std::string> out;
    if (!v.is_array()) fail(fmt::format("{}.{}: expected a list of strings", where, key));
    for (const Json& s : v) {
      if (!s.is_string()) fail(fmt::format("{}.{}: expected a list of strings", where, key));
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  std::optional<double> opt_number(const Json& obj, const char* key,
                                   const std::string& where) const {
    if (field(obj, key, where).is_null()) return std::nullopt;
    return number(obj, key, where);
  }
  std::optional<std::int64_t> opt_integer(const Json& obj, const char* key,
                                          const std::string& where) const {
    const Json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_number_integer()) fail(fmt::format("{}.{}: expected an integer", where, key));
    return v.get<std::int64_t>();
  }
  std::optional<bool> opt_boolean(const Json& obj, const char* key,
                                  const std::string& where) const {
    if (field(obj, key, where).is_null()) return std::nullopt;
    return boolean(obj, key, where);
  }

  SweepPoint point(const Json& j, const std::string& where, bool with_index) const {
    SweepPoint p;
    if (with_index) p.index = count(j, "index", where);
    p.values = strings(j, "values", where);
    p.feasible = boolean(j, "feasible", where);
    if (!p.feasible) {
      p.skip_reason = string(j, "skip_reason", where);
      return p;
    }
    p.qps = measure(j, "qps", where);
    p.throughput = measure(j, "throughput", where);
    p.p50_ms = measure(j, "p50_ms", where);
    p.p99_ms = measure(j, "p99_ms", where);
    p.cube_utilization = share(j, "cube_utilization", where);
    p.vector_utilization = share(j, "vector_utilization", where);
    p.cards_needed = opt_integer(j, "cards_needed", where);
    if (p.cards_needed && *p.cards_needed < 1) {
      fail(fmt::format("{}.cards_needed: expected at least 1 card, got {}", where, *p.cards_needed));
    }
    p.p99_met = opt_boolean(j, "p99_met", where);
    p.max_qps = opt_number(j, "max_qps", where);
    if (p.max_qps && !(*p.max_qps >= 0)) {
      fail(fmt::format("{}.max_qps: expected a rate >= 0, got {}", where, *p.max_qps));
    }
    p.simulations = static_cast<std::int64_t>(count(j, "simulations", where));
    p.pareto = boolean(j, "pareto", where);
    return p;
  }

 private:
  std::string file_;
};

}  // namespace

std::string sweep_to_json(const SweepResult& r) {
  Json j;
  j["npusim_sweep"] = kSweepFormat;
  j["scenario"] = r.scenario;
  j["scenario_file"] = r.scenario_file;
  j["sets"] = r.sets;
  j["keys"] = r.keys();
  Json axes = Json::array();
  for (const SweepAxis& a : r.axes) axes.push_back(a.values);
  j["axes"] = std::move(axes);
  j["grid_points"] = r.grid_points;
  j["shard"] = {{"k", r.shard.k}, {"n", r.shard.n}};
  j["find_max_qps"] = r.find_max_qps;
  j["target"] = {{"p99_ms", opt(r.target_p99_ms)}, {"traffic_qps", opt(r.target_traffic_qps)}};
  j["baseline"] = point_json(r.baseline, false);
  j["skipped"] = r.skipped();
  j["best"] = r.best ? Json(r.points[*r.best].index) : Json(nullptr);
  j["fewest_cards"] = r.fewest_cards ? Json(r.points[*r.fewest_cards].index) : Json(nullptr);
  Json pts = Json::array();
  for (const SweepPoint& p : r.points) pts.push_back(point_json(p, true));
  j["points"] = std::move(pts);
  return j.dump(1) + "\n";
}

SweepResult sweep_from_json(const std::string& text, const std::string& file) {
  const JsonReader in(file);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
    in.fail(fmt::format("not valid JSON ({})", e.what()));
  }
  if (!j.is_object() || !j.contains("npusim_sweep")) {
    in.fail("not a sweep result (no 'npusim_sweep' key; write one with npusim sweep --json)");
  }
  if (j["npusim_sweep"] != kSweepFormat) {
    in.fail(fmt::format("unsupported sweep format version {} (expected {}; a shard written by "
                        "another npusim version: run it again)",
                        j["npusim_sweep"].dump(), kSweepFormat));
  }
  SweepResult r;
  r.scenario = in.string(j, "scenario", "sweep");
  r.scenario_file = in.string(j, "scenario_file", "sweep");
  r.sets = in.strings(j, "sets", "sweep");
  const std::vector<std::string> keys = in.strings(j, "keys", "sweep");
  const Json& axes = in.field(j, "axes", "sweep");
  if (!axes.is_array() || axes.size() != keys.size()) {
    in.fail(fmt::format("axes: expected a list of {} value lists, one per key", keys.size()));
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const auto not_values = [&] {
      in.fail(fmt::format("axes[{}]: expected a non-empty list of strings", a));
    };
    if (!axes[a].is_array() || axes[a].empty()) not_values();
    SweepAxis axis{keys[a], {}};
    for (const Json& v : axes[a]) {
      if (!v.is_string()) not_values();
      axis.values.push_back(v.get<std::string>());
    }
    r.axes.push_back(std::move(axis));
  }
  r.grid_points = in.count(j, "grid_points", "sweep");
  const Json& shard = in.field(j, "shard", "sweep");
  r.shard.k = in.count(shard, "k", "shard");
  r.shard.n = in.count(shard, "n", "shard");
  if (r.shard.n == 0 || r.shard.k >= r.shard.n) in.fail("shard: expected 0 <= k < n");
  r.find_max_qps = in.boolean(j, "find_max_qps", "sweep");
  const Json& target = in.field(j, "target", "sweep");
  r.target_p99_ms = in.opt_number(target, "p99_ms", "target");
  r.target_traffic_qps = in.opt_number(target, "traffic_qps", "target");
  r.baseline = in.point(in.field(j, "baseline", "sweep"), "baseline", false);
  const Json& pts = in.field(j, "points", "sweep");
  if (!pts.is_array()) in.fail("points: expected a list");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    SweepPoint p = in.point(pts[i], fmt::format("points[{}]", i), true);
    if (p.values.size() != keys.size()) {
      in.fail(fmt::format("points[{}]: {} values for {} keys", i, p.values.size(), keys.size()));
    }
    if (p.index >= r.grid_points) {
      in.fail(fmt::format("points[{}]: index {} outside the grid of {} points", i, p.index,
                          r.grid_points));
    }
    if (p.index % r.shard.n != r.shard.k) {
      in.fail(fmt::format("points[{}]: index {} does not belong to shard {}/{}", i, p.index,
                          r.shard.k, r.shard.n));
    }
    if (!r.points.empty() && p.index <= r.points.back().index) {
      in.fail(fmt::format("points[{}]: indices must ascend", i));
    }
    r.points.push_back(std::move(p));
  }
  // Indices ascend, lie in the grid and belong to the shard, so the right count means every
  // point of the shard is there (a file cut short or edited would otherwise merge into a sweep
  // with holes).
  const std::size_t expected =
      r.shard.k < r.grid_points ? (r.grid_points - r.shard.k + r.shard.n - 1) / r.shard.n : 0;
  if (r.points.size() != expected) {
    in.fail(fmt::format("points: {} given, but shard {}/{} of a {}-point grid has {}",
                        r.points.size(), r.shard.k, r.shard.n, r.grid_points, expected));
  }
  // The axes make the grid: its size, and each point's values at its index (two sweeps with the
  // same keys and size but other values must not merge into one).
  std::size_t product = 1;
  for (const SweepAxis& a : r.axes) {
    if (product > r.grid_points / a.values.size()) product = r.grid_points + 1;  // no overflow
    else product *= a.values.size();
  }
  if (product != r.grid_points) {
    in.fail(fmt::format("grid_points: {}, but the axes make a grid of {}", r.grid_points,
                        product > r.grid_points ? "more" : std::to_string(product)));
  }
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (r.points[i].values != grid_point_values(r.axes, r.points[i].index)) {
      in.fail(fmt::format("points[{}]: its values are not those of grid point {}", i,
                          r.points[i].index));
    }
  }
  analyse_sweep(r);
  return r;
}

SweepResult merge_sweeps(const std::vector<SweepResult>& shards,
                         const std::vector<std::string>& files) {
  NPUSIM_CHECK(shards.size() == files.size());
  if (shards.empty()) throw InputError(kCommandLine, "merge: no shard files given");
  const SweepResult& first = shards.front();
  std::vector<int> seen(first.shard.n, -1);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const SweepResult& s = shards[i];
    const auto differs = [&](const char* what) {
      throw InputError(
          {files[i], 0, 0},
          fmt::format("not a shard of the same sweep as {}: its {} differ(s)", files[0], what));
    };
    if (s.scenario != first.scenario || s.scenario_file != first.scenario_file) {
      differs("scenario");
    }
    if (s.sets != first.sets) differs("--set overrides");
    if (s.keys() != first.keys() || s.grid_points != first.grid_points) differs("--vary axes");
    if (s.axes != first.axes) differs("--vary values");
    if (s.shard.n != first.shard.n) differs("shard count");
    if (s.find_max_qps != first.find_max_qps) differs("--find-max-qps");
    if (s.target_p99_ms != first.target_p99_ms ||
        s.target_traffic_qps != first.target_traffic_qps) {
      differs("target");
    }
    if (seen[s.shard.k] >= 0) {
      throw InputError({files[i], 0, 0},
                       fmt::format("shard {}/{} is also in {}", s.shard.k, s.shard.n,
                                   files[static_cast<std::size_t>(seen[s.shard.k])]));
    }
    seen[s.shard.k] = static_cast<int>(i);
  }
  std::string missing;
  for (std::size_t k = 0; k < seen.size(); ++k) {
    if (seen[k] < 0)
      missing += fmt::format("{}{}/{}", missing.empty() ? "" : ", ", k, first.shard.n);
  }
  if (!missing.empty()) throw InputError(kCommandLine, "merge: missing shard(s) " + missing);

  SweepResult r = first;
  r.shard = SweepShard{};
  r.points.clear();
  for (const SweepResult& s : shards)
    r.points.insert(r.points.end(), s.points.begin(), s.points.end());
  std::sort(r.points.begin(), r.points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.index < b.index; });
  NPUSIM_CHECK(r.points.size() == r.grid_points);
  analyse_sweep(r);
  return r;
}

}  // namespace npusim::sim
