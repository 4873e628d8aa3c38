#include "profile/graph_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "model/error.h"
#include "model/graph.h"
#include "model/op_desc.h"
#include "profile/observation.h"
#include "profile/readers.h"

namespace npusim::profile {

namespace {

// A TOML float always has a '.' or an exponent ("5" would be an integer).
std::string toml_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

struct Op {
  KernelRow row;
  std::string unique_name;
  std::string file;
};

}  // namespace

GraphExport graph_from_profile(const ProfileSource& source, std::optional<std::int64_t> step,
                               const std::string& measured_hw) {
  if (source.kernel_files.empty()) {
    throw InputError({source.folder.string(), 0, 0},
                     "no op_summary / kernel_details file: a graph needs the per-op table");
  }
  GraphExport out;
  std::set<std::int64_t> steps;
  bool has_step_column = false;
  // First pass: which steps exist (the kernel table is streamed, not kept).
  for (const auto& f : source.kernel_files) {
    const auto info = read_kernel_table(
        f, [&](const KernelRow& r) { steps.insert(r.step_id); }, source.read);
    has_step_column = has_step_column || info.has_step_id;
  }
  out.steps_found.assign(steps.begin(), steps.end());
  if (step && !has_step_column) {
    throw InputError({source.kernel_files.front().string(), 1, 0},
                     "--step given, but the file has no 'Step Id' column (msprof op_summary is "
                     "one iteration or the whole run): omit --step");
  }
  std::int64_t chosen = steps.empty() ? -1 : *steps.rbegin();
  if (step) {
    if (!steps.count(*step)) {
      std::string found;
      for (auto s : steps) found += (found.empty() ? "" : ", ") + std::to_string(s);
      throw InputError({source.kernel_files.front().string(), 0, 0},
                       fmt::format("step {} is not in the profile; steps found: {}", *step,
                                   found.empty() ? "none" : found));
    }
    chosen = *step;
  }
  out.step = chosen;

  std::vector<Op> ops;
  for (const auto& f : source.kernel_files) {
    (void)read_kernel_table(f, [&](const KernelRow& r) {
      if (r.step_id != chosen) return;
      if (r.kind == TaskKind::kCommunication) {
        ++out.dropped_communication;
      } else if (!is_compute(r.kind)) {
        ++out.dropped_other;
      } else if (r.type.empty()) {
        ++out.dropped_untyped;
      } else {
        ops.push_back({r, "", f.string()});
      }
    }, source.read);
  }
  if (ops.empty()) {
    throw InputError({source.kernel_files.front().string(), 0, 0},
                     fmt::format("step {} holds no compute op with an op type ({} communication, "
                                 "{} other, {} without type): nothing to simulate",
                                 chosen, out.dropped_communication, out.dropped_other,
                                 out.dropped_untyped));
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const Op& a, const Op& b) { return a.row.start_ns < b.row.start_ns; });
  std::set<std::string> used;
  for (auto& o : ops) {
    o.unique_name = o.row.name;
    for (int n = 2; used.count(o.unique_name); ++n) {
      o.unique_name = fmt::format("{}#{}", o.row.name, n);
    }
    used.insert(o.unique_name);
  }

  std::string t;
  t += fmt::format("# Graph exported by `npusim graph from-profile` from {}\n", source.name);
  for (const auto& f : source.kernel_files) t += fmt::format("#   file: {}\n", f.string());
  t += fmt::format("# step: {} (steps in the profile: {})\n",
                   chosen >= 0 ? std::to_string(chosen) : "all rows (no Step Id column)",
                   steps.size());
  t += fmt::format("# ops: {} compute ops in start-time order; each op runs after the previous op "
                   "of its stream,\n#   the first op of a stream after the op of another stream "
                   "that ended last before it started.\n",
                   ops.size());
  t += fmt::format("# dropped: {} communication tasks (hcom_*), {} other device tasks, {} rows "
                   "without an op type\n",
                   out.dropped_communication, out.dropped_other, out.dropped_untyped);
  t += "# duration_us is the measured Task Duration; attrs keep block dims and the source line.\n";
  t += "\n[graph]\n";
  t += fmt::format("name = {}\n", toml_string(fmt::format(
                                      "from {} step {}", source.name,
                                      chosen >= 0 ? std::to_string(chosen) : std::string("all"))));
  if (!measured_hw.empty()) {
    // The conditions of the measurement: the profile ran on the whole chip (no core limit) with
    // the shapes each op records; a scenario that changes the chip, the core budget or the
    // shapes anchors the durations (docs/graphs.md).
    t += "\n[graph.measured]\n";
    t += fmt::format("hw = {}\n", toml_string(measured_hw));
  }

  std::unordered_map<std::int64_t, const Op*> last_of_stream;
  // Ops already written, ordered by end time, to find a cross-stream predecessor.
  std::multimap<std::int64_t, const Op*> by_end;
  for (const auto& o : ops) {
    const KernelRow& r = o.row;
    std::vector<std::string> after;
    const auto it = last_of_stream.find(r.stream_id);
    if (it != last_of_stream.end()) {
      after.push_back(it->second->unique_name);
    } else {
      // Last-ending op (of any stream) that ended at or before this op's start.
      auto e = by_end.upper_bound(r.start_ns);
      if (e != by_end.begin()) {
        --e;
        after.push_back(e->second->unique_name);
      }
    }
    t += "\n[[graph.op]]\n";
    t += fmt::format("name = {}\n", toml_string(o.unique_name));
    t += fmt::format("type = {}\n", toml_string(r.type));
    // The graph loader builds an OpDesc from every op: check the profile's text makes one, and
    // write empty shapes (the op then runs for its measured duration) when it does not.
    std::string unusable;
    if (r.input_shapes.empty() && r.input_dtypes.empty()) {
      unusable = "N/A in the profile";
    } else {
      OpText text;
      text.name = o.unique_name;
      text.type = r.type;
      text.input_shapes = r.input_shapes;
      text.input_dtypes = r.input_dtypes;
      text.input_formats = r.input_formats;
      text.output_shapes = r.output_shapes;
      text.output_dtypes = r.output_dtypes;
      text.output_formats = r.output_formats;
      text.placement = placement_of(r);
      try {
        (void)make_op(text, SourcePos{o.file, r.line, 0});
      } catch (const InputError& e) {
        unusable = e.detail();
      }
    }
    if (unusable.empty()) {
      t += fmt::format("shapes = {}\n", toml_string(r.input_shapes));
      t += fmt::format("dtypes = {}\n", toml_string(r.input_dtypes));
      if (!r.input_formats.empty()) t += fmt::format("formats = {}\n", toml_string(r.input_formats));
      if (!r.output_shapes.empty()) {
        t += fmt::format("output_shapes = {}\n", toml_string(r.output_shapes));
      }
      if (!r.output_dtypes.empty()) {
        t += fmt::format("output_dtypes = {}\n", toml_string(r.output_dtypes));
      }
      if (!r.output_formats.empty()) {
        t += fmt::format("output_formats = {}\n", toml_string(r.output_formats));
      }
    } else {
      ++out.without_shapes;
      std::string why = unusable;
      std::replace(why.begin(), why.end(), '\n', ' ');
      t += fmt::format("# shapes not usable ({}): the op runs for its measured duration\n", why);
      t += "shapes = \"\"\ndtypes = \"\"\n";
    }
    const std::string placement = placement_of(r);
    if (!placement.empty()) t += fmt::format("placement = {}\n", toml_string(placement));
    t += "after = [";
    for (std::size_t i = 0; i < after.size(); ++i) t += (i ? ", " : "") + toml_string(after[i]);
    t += "]\n";
    if (r.stream_id >= 0) t += fmt::format("stream = {}\n", r.stream_id);
    t += fmt::format("duration_us = {}\n", toml_float(r.duration_us));
    t += fmt::format("attrs = {{ block_dim = \"{}\"", r.block_dim);
    if (r.mix_block_dim > 0) t += fmt::format(", mix_block_dim = \"{}\"", r.mix_block_dim);
    if (!r.op_state.empty()) t += fmt::format(", op_state = {}", toml_string(r.op_state));
    t += fmt::format(", source_line = \"{}\" }}\n", r.line);
    last_of_stream[r.stream_id] = &o;
    by_end.emplace(r.end_ns(), &o);
  }
  out.ops = ops.size();
  out.toml = std::move(t);
  return out;
}

}  // namespace npusim::profile
