// Rule environment: environment settings recorded in profiler_metadata.json that cost time, each
// raised only when the profile shows the problem it addresses. Source: msprof-analyze advisor
// rules/en/environment_variable_info.yaml (the variables and their recommended values); the
// evidence conditions are npusim's:
//   ASCEND_LAUNCH_BLOCKING=1      every launch waits for the previous op: always raised;
//   ASCEND_GLOBAL_LOG_LEVEL 0 / 1 debug / info logging on the host: always raised;
//   ACLNN_CACHE_LIMIT unset       raised when the step is host-bound (idle or host-launch waits
//                                 at least kHostBoundShare of the step);
//   HOST_CACHE_CAPACITY unset/0   raised when ops are called with changing input shapes (the
//                                 same op type switching shapes between consecutive calls at
//                                 least kMinShapeChanges times) and the step is host-bound;
//   HCCL_ALGO set                 raised when communication is exposed (let HCCL choose).
// Informational (time at stake 0: the host-bound or exposed time it may reduce is another
// finding's; the evidence names it).
#include <fmt/format.h>

#include <algorithm>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

/// A step whose idle or host-launch wait is a tenth of its span is host-bound (the
/// Thresholds::idle_share bar).
constexpr double kHostBoundShare = 0.10;
/// Shape switches that make a shape cache worth having (estimate: a few per step).
constexpr std::uint64_t kMinShapeChanges = 10;

// How often an op type is called with other input shapes than on its previous call.
std::uint64_t shape_changes(const Context& c) {
  std::unordered_map<std::uint32_t, std::uint32_t> last;
  std::uint64_t n = 0;
  for (const Task& t : c.tasks) {
    if (t.kernel == kNone) continue;
    auto [it, fresh] = last.emplace(t.type, t.kernel);
    if (!fresh && it->second != t.kernel) ++n;
    it->second = t.kernel;
  }
  return n;
}

std::string env(const Context& c, const std::string& k) {
  const auto it = c.metadata.env.find(k);
  return it == c.metadata.env.end() ? std::string() : it->second;
}
bool recorded(const Context& c, const std::string& k) { return c.metadata.env.count(k) > 0; }

}  // namespace

void check_environment(Context& c) {
  if (!c.metadata.has_env) {
    if (c.src.producer == "torch_npu") {
      c.skip("environment", "no profiler_metadata.json with ENV_VARIABLES");
    }
    return;
  }
  double span = 0, idle = 0, exposed = 0, host_wait = 0;
  for (const auto& s : c.report.steps) {
    span += s.span_us;
    idle += s.idle_us;
    exposed += s.exposed_communication_us;
  }
  for (const auto& f : c.report.findings) {
    for (const auto& e : f.evidence) {
      if (f.check == "task_wait" && e.key == "cause" && e.text == "host_launch") host_wait += f.time_us;
    }
  }
  const double host_bound = std::max(idle, host_wait);
  const bool is_host_bound = span > 0 && host_bound >= kHostBoundShare * span;
  Finding f;
  f.check = "environment";
  f.severity = "info";
  auto raise = [&](const std::string& var, const std::string& why, const std::string& advice) {
    f.ops.push_back(var);
    f.evidence.push_back({var, std::nullopt, why});
    f.advice.push_back(advice);
  };
  if (env(c, "ASCEND_LAUNCH_BLOCKING") == "1") {
    raise("ASCEND_LAUNCH_BLOCKING", "= 1: every op is launched synchronously",
          "export ASCEND_LAUNCH_BLOCKING=0 (or unset it) outside debugging");
  }
  const std::string log = env(c, "ASCEND_GLOBAL_LOG_LEVEL");
  if (log == "0" || log == "1") {
    raise("ASCEND_GLOBAL_LOG_LEVEL", fmt::format("= {}: {} logging on the host", log,
                                                 log == "0" ? "debug" : "info"),
          "export ASCEND_GLOBAL_LOG_LEVEL=3 (errors only) for performance runs");
  }
  if (is_host_bound && recorded(c, "ACLNN_CACHE_LIMIT") && env(c, "ACLNN_CACHE_LIMIT").empty()) {
    raise("ACLNN_CACHE_LIMIT",
          fmt::format("unset (default cache) while the step is host-bound: {} of {}",
                      fmt_us(host_bound), fmt_us(span)),
          "export ACLNN_CACHE_LIMIT=100000 so aclnn ops reuse their cached host-side preparation");
  }
  const std::uint64_t changes = shape_changes(c);
  if (is_host_bound && recorded(c, "HOST_CACHE_CAPACITY")) {
    const std::string v = env(c, "HOST_CACHE_CAPACITY");
    if ((v.empty() || v == "0") && changes >= kMinShapeChanges) {
      raise("HOST_CACHE_CAPACITY",
            fmt::format("unset while ops switch input shapes {} times and the step is host-bound",
                        changes),
            "export HOST_CACHE_CAPACITY=20 to cache the host data of recent input shapes");
    }
  }
  if (!env(c, "HCCL_ALGO").empty() && span > 0 && exposed >= kHostBoundShare * span) {
    raise("HCCL_ALGO", fmt::format("= {} while communication is exposed {}", env(c, "HCCL_ALGO"),
                                   fmt_us(exposed)),
          "unset HCCL_ALGO so HCCL picks the algorithm for the chip, node count and data size");
  }
  if (f.ops.empty()) return;
  f.title = fmt::format("environment settings from profiler_metadata.json: {}", [&] {
    std::string s;
    for (const auto& o : f.ops) s += (s.empty() ? "" : ", ") + o;
    return s;
  }());
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
