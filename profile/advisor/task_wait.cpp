// Rule task_wait: ops that waited longer than Thresholds::task_wait_us (50 us) before they ran,
// each given the cause the evidence supports, checked in this order:
//   after_aicpu           the previous op on its stream ran on the AI CPU;
//   after_dynamic_shape   the previous op on its stream has a data-dependent output shape;
//   communication         a collective ran during at least kCommOverlapShare of the wait, or
//                         ended at most kCommFollowUs before the op started: the stream waited
//                         on the collective's event, not on the host;
//   recompilation         an aclop-style op whose shapes changed since its previous call, backed
//                         by api_statistic's compile calls (aclopCompile*, opCompile); with no
//                         api_statistic, by the changing shapes and the wait alone (and the
//                         finding says so); with an api_statistic that has no compile call,
//                         never;
//   host_launch           none of the above: the host launched slower than the device ran.
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

/// A collective covering at least half the wait is what the stream waited for (estimate: a wait
/// mostly spent while a collective runs is the stream's event wait on it; calibrate against
/// traces that record the event records/waits).
constexpr double kCommOverlapShare = 0.5;
/// An op starting this soon after a collective ends was released by it: a task launched on a
/// ready stream starts within a few µs (same bound as Thresholds::idle_gap_min_us, launch jitter).
constexpr double kCommFollowUs = 10.0;

enum Cause { kAfterAicpu, kAfterDynamicShape, kCommunication, kRecompile, kHostLaunch, kCount };
const char* const kKey[kCount] = {"after_aicpu", "after_dynamic_shape", "communication",
                                  "recompilation", "host_launch"};

struct Waited {
  double wait_us = 0;
  std::uint32_t task = 0;
  std::string detail;
};

struct Causes {
  std::array<std::vector<Waited>, kCount> items;
  std::array<double, kCount> total{};
};

// The collective the stream waited on, if any: "hcom_x ran during 80 % of the wait" or
// "starts 3 us after hcom_x ended".
std::string waited_on_communication(const Context& c, const Task& t,
                                    const std::vector<Interval>& comm_merged) {
  const std::int64_t from = t.start_ns - static_cast<std::int64_t>(t.wait_us * 1000.0);
  const double covered = us(covered_ns(comm_merged, from, t.start_ns));
  const Interval* best = nullptr;
  double best_overlap = -1;
  const Interval* follows = nullptr;
  for (const Interval& i : c.communication) {
    if (i.start >= t.start_ns) break;
    const double overlap = us(std::max<std::int64_t>(0, std::min(i.end, t.start_ns) -
                                                            std::max(i.start, from)));
    if (overlap > best_overlap) best_overlap = overlap, best = &i;
    const double gap = us(t.start_ns - i.end);
    if (gap >= 0 && gap <= kCommFollowUs) follows = &i;
  }
  if (follows != nullptr) {
    return fmt::format("starts {} after {} ended", fmt_us(us(t.start_ns - follows->end)),
                       c.str(c.tasks[follows->task].name));
  }
  if (best != nullptr && covered >= kCommOverlapShare * t.wait_us) {
    return fmt::format("{} ran during {} of the wait", c.str(c.tasks[best->task].name),
                       pct(covered / t.wait_us));
  }
  return {};
}

struct CompileEvidence {
  bool has_api_statistic = false;
  std::vector<ApiStatRow> apis;  ///< the compile APIs found
  double compile_only_us = 0;    ///< pure compile APIs (aclopCompileAndExecute includes the run)
};

CompileEvidence compile_evidence(const Context& c) {
  CompileEvidence e;
  if (!c.src.api_statistic) return e;
  e.has_api_statistic = true;
  for (auto& a : read_api_statistic(*c.src.api_statistic)) {
    if (a.api.find("Compile") == std::string::npos || a.count <= 0) continue;
    if (a.api.find("Execute") == std::string::npos) e.compile_only_us += a.time_us;
    e.apis.push_back(std::move(a));
  }
  return e;
}

Causes attribute(const Context& c, const CompileEvidence& ev) {
  Causes out;
  const std::vector<Interval> comm_merged = merged(c.communication);
  const bool recompile_possible = !ev.has_api_statistic || !ev.apis.empty();
  std::unordered_map<std::int64_t, std::uint32_t> last_on_stream;
  std::unordered_map<std::uint32_t, std::uint32_t> last_kernel_of_type;
  const auto& dyn = c.th.dynamic_shape_types;
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    const Task& t = c.tasks[i];
    if (t.kernel == kNone) continue;
    const auto prev_it = last_on_stream.find(t.stream);
    const Task* prev = prev_it == last_on_stream.end() ? nullptr : &c.tasks[prev_it->second];
    const auto type_it = last_kernel_of_type.find(t.type);
    const bool shapes_changed = type_it != last_kernel_of_type.end() && type_it->second != t.kernel;
    if (t.wait_us > c.th.task_wait_us) {
      Cause cause = kHostLaunch;
      std::string detail;
      if (prev != nullptr && prev->kind == TaskKind::kAicpu) {
        cause = kAfterAicpu;
        detail = fmt::format("after AI CPU op {} ({})", c.str(prev->name), c.str(prev->type));
      } else if (prev != nullptr &&
                 std::find(dyn.begin(), dyn.end(), c.str(prev->type)) != dyn.end()) {
        cause = kAfterDynamicShape;
        detail = fmt::format("after {} ({}), whose output shape depends on its data",
                             c.str(prev->name), c.str(prev->type));
      } else if (!(detail = waited_on_communication(c, t, comm_merged)).empty()) {
        cause = kCommunication;
      } else if (recompile_possible && is_aclop_style(c.str(t.name)) && shapes_changed) {
        cause = kRecompile;
        const Kernel& k = c.kernels[t.kernel];
        detail = fmt::format("aclop {} called with new shapes/dtypes {} | {}", k.type, k.shapes,
                             k.dtypes);
      }
      out.total[cause] += t.wait_us;
      out.items[cause].push_back({t.wait_us, i, std::move(detail)});
    }
    last_kernel_of_type[t.type] = t.kernel;
    last_on_stream[t.stream] = i;
  }
  return out;
}

const char* title(Cause c) {
  switch (c) {
    case kAfterAicpu: return "task wait right after an AI CPU op";
    case kAfterDynamicShape: return "task wait after a dynamic-shape op";
    case kCommunication: return "task wait on communication: the stream waited for a collective";
    case kRecompile: return "task wait of aclop-style ops whose shapes changed: online recompilation";
    default: return "task wait: the host launched slower than the device ran";
  }
}

std::vector<std::string> advice(Cause c) {
  switch (c) {
    case kAfterAicpu:
      return {"AI CPU ops block the stream while they run on the slow AI CPU and hand back: move "
              "the op to the AI core (cast int64 inputs to int32) or to the host, or reorder it "
              "off the critical path"};
    case kAfterDynamicShape:
      return {"The next op waits for the host to read the data-dependent shape back: give the op "
              "a static upper bound (pad), or move it out of the step"};
    case kCommunication:
      return {"The op depends on the collective's result: overlap communication with independent "
              "compute (bucketed gradient all-reduce, communication on its own stream, "
              "prefetching the next layer's all-gather)",
              "A long wait inside the collective itself is another rank arriving late: compare "
              "the ranks' step times (slow rank, data-loading skew)"};
    case kRecompile:
      return {"Switch to the aclnn API (torch_npu: keep the default aclnn ops) or disable online "
              "compilation (torch_npu.npu.set_compile_mode(jit_compile=False)) so aclop ops use "
              "prebuilt binaries",
              "Keep the shapes and attributes of the op stable (bucket or pad the shapes)"};
    default:
      return {"The device ran ahead of the host: reduce per-op host cost (fewer, larger ops; "
              "fused kernels; graph mode / aclgraph), or check host CPU binding and load"};
  }
}

}  // namespace

void check_task_wait(Context& c) {
  const bool has_wait = std::any_of(c.infos.begin(), c.infos.end(), [](const KernelFileInfo& i) {
    return !std::count(i.missing_optional.begin(), i.missing_optional.end(), "Task Wait Time(us)");
  });
  if (!has_wait) {
    c.skip("task_wait", "no Task Wait Time(us) / Wait Time(us) column");
    return;
  }
  const CompileEvidence ev = compile_evidence(c);
  Causes causes = attribute(c, ev);
  auto add_compile_evidence = [&](Finding& f) {
    for (const auto& a : ev.apis) {
      f.evidence.push_back({"api_statistic " + a.api, std::nullopt,
                            fmt::format("{} in {} calls on the host", fmt_us(a.time_us), a.count)});
    }
  };
  if (causes.items[kRecompile].empty() && ev.compile_only_us > c.th.task_wait_us) {
    Finding f;
    f.check = "task_wait";
    f.title = fmt::format("the host compiled ops online for {} (api_statistic)",
                          fmt_us(ev.compile_only_us));
    f.time_us = ev.compile_only_us;
    f.evidence.push_back({"cause", std::nullopt, "recompilation"});
    f.evidence.push_back({"evidence", std::nullopt, "api_statistic compile calls"});
    add_compile_evidence(f);
    for (const auto& a : ev.apis) f.ops.push_back(a.api);
    f.advice = {advice(kRecompile).front()};
    c.add_finding(std::move(f));
  }
  for (int k = 0; k < kCount; ++k) {
    auto& items = causes.items[std::size_t(k)];
    if (items.empty()) continue;
    const Cause cause = static_cast<Cause>(k);
    std::stable_sort(items.begin(), items.end(),
                     [](const Waited& a, const Waited& b) { return a.wait_us > b.wait_us; });
    Finding f;
    f.check = "task_wait";
    f.title = fmt::format("{}: {} ops, {} waited", title(cause), items.size(),
                          fmt_us(causes.total[std::size_t(k)]));
    f.time_us = causes.total[std::size_t(k)];
    f.evidence.push_back({"cause", std::nullopt, kKey[k]});
    if (cause == kRecompile) {
      f.evidence.push_back(
          {"evidence", std::nullopt,
           ev.has_api_statistic
               ? "api_statistic compile calls, and the same aclop called with new shapes after "
                 "a wait"
               : "no api_statistic in the profile: inferred from the same aclop called with new "
                 "shapes after a wait"});
    }
    f.evidence.push_back({"count", double(items.size()), ""});
    f.evidence.push_back({"wait_us", causes.total[std::size_t(k)], ""});
    for (const Waited& w : items) {
      if (f.ops.size() >= c.max_listed()) break;
      const Task& t = c.tasks[w.task];
      f.ops.push_back(c.str(t.name));
      f.evidence.push_back({c.str(t.name), std::nullopt,
                            fmt::format("waited {} (line {}){}", fmt_us(w.wait_us), t.line,
                                        w.detail.empty() ? "" : "; " + w.detail)});
    }
    if (cause == kRecompile) add_compile_evidence(f);
    f.advice = advice(cause);
    c.add_finding(std::move(f));
  }
}

}  // namespace npusim::profile::advisor
