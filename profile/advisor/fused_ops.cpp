// Rule fused_ops: op sequences that a fused torch_npu kernel replaces, matched on the kernel
// types of each stream in launch order. The patterns are the kernel-level form of
// msprof-analyze's rules/timeline_fusion_ops.yaml (written there on aten op names, which need a
// trace file; kernel types are in every kernel table):
//   RMSNorm    Pow|Square, ReduceMean, Add|Adds, Rsqrt, Mul          -> torch_npu.npu_rms_norm
//   rotary     Neg, Concat*, Mul, (Mul), Add  (the rotate-half form)  -> torch_npu.npu_rotary_mul
//   SwiGLU     Swish|SiLU|Silu, Mul  or  Sigmoid, Mul, Mul            -> torch_npu.npu_swiglu
//   optimizer  multi-tensor Foreach* ops of an optimizer step         -> torch_npu.optim.NpuFused*
// A match needs its ops adjacent on one stream; each op belongs to at most one match. At stake:
// the matched ops' device time less the one kernel that replaces them (estimated as their
// longest op: a fused kernel moves the data once).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

struct Pattern {
  const char* name;
  const char* replacement;
  std::vector<std::set<std::string>> steps;  ///< each step: the kernel types it accepts
  std::vector<bool> optional;                ///< per step
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = {
      {"RMSNorm", "torch_npu.npu_rms_norm",
       {{"Pow", "Pows", "Square"}, {"ReduceMean", "ReduceMeanD"}, {"Add", "Adds"}, {"Rsqrt"},
        {"Mul"}},
       {false, false, false, false, false}},
      {"rotary embedding", "torch_npu.npu_rotary_mul",
       {{"Neg"}, {"ConcatD", "ConcatV2D", "ConcatV2", "Concat"}, {"Mul"}, {"Mul"}, {"Add"}},
       {false, false, false, true, false}},
      {"SwiGLU", "torch_npu.npu_swiglu", {{"Swish", "SiLU", "Silu"}, {"Mul"}}, {false, false}},
      {"SwiGLU", "torch_npu.npu_swiglu", {{"Sigmoid"}, {"Mul"}, {"Mul"}}, {false, false, false}},
  };
  return p;
}

// Length of the match of `p` at position `at` of `seq`, 0 if none.
std::size_t match(const Pattern& p, const std::vector<std::string>& seq, std::size_t at) {
  std::size_t i = at;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    if (i < seq.size() && p.steps[s].count(seq[i])) {
      ++i;
    } else if (!p.optional[s]) {
      return 0;
    }
  }
  return i - at;
}

struct Group {
  std::string replacement;
  std::uint64_t matches = 0;
  double device_us = 0, at_stake_us = 0;
  std::uint32_t first_task = kNone;
};

}  // namespace

void check_fused_ops(Context& c) {
  std::map<std::int64_t, std::vector<std::uint32_t>> streams;  // compute tasks per stream
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    if (c.tasks[i].kernel != kNone) streams[c.tasks[i].stream].push_back(i);
  }
  std::map<std::string, Group> groups;
  for (const auto& [stream, ids] : streams) {
    std::vector<std::string> seq;
    seq.reserve(ids.size());
    for (auto i : ids) seq.push_back(c.str(c.tasks[i].type));
    for (std::size_t at = 0; at < seq.size();) {
      std::size_t len = 0;
      const Pattern* hit = nullptr;
      for (const auto& p : patterns()) {
        len = match(p, seq, at);
        if (len > 0) {
          hit = &p;
          break;
        }
      }
      if (hit == nullptr) {
        ++at;
        continue;
      }
      Group& g = groups[hit->name];
      g.replacement = hit->replacement;
      ++g.matches;
      double sum = 0, longest = 0;
      for (std::size_t k = at; k < at + len; ++k) {
        sum += c.tasks[ids[k]].duration_us;
        longest = std::max(longest, c.tasks[ids[k]].duration_us);
      }
      g.device_us += sum;
      g.at_stake_us += sum - longest;
      if (g.first_task == kNone) g.first_task = ids[at];
      at += len;
    }
  }
  // The optimizer step as multi-tensor Foreach ops (torch's foreach implementation).
  std::uint64_t foreach_calls = 0;
  double foreach_us = 0, foreach_longest = 0;
  bool adam_like = false;
  std::uint32_t foreach_first = kNone;
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    const Task& t = c.tasks[i];
    const std::string& type = c.str(t.type);
    if (t.kernel == kNone || type.rfind("Foreach", 0) != 0) continue;
    ++foreach_calls;
    foreach_us += t.duration_us;
    foreach_longest = std::max(foreach_longest, t.duration_us);
    if (foreach_first == kNone) foreach_first = i;
    if (type.find("Sqrt") != std::string::npos || type.find("Addcdiv") != std::string::npos) {
      adam_like = true;
    }
  }
  if (foreach_calls >= 2) {
    Group& g = groups["optimizer step"];
    g.replacement = adam_like ? "torch_npu.optim.NpuFusedAdamW (or NpuFusedAdam)"
                              : "torch_npu.optim.NpuFusedSGD";
    g.matches = foreach_calls;
    g.device_us = foreach_us;
    g.at_stake_us = foreach_us - foreach_longest;
    g.first_task = foreach_first;
  }
  if (groups.empty()) return;
  Finding f;
  f.check = "fused_ops";
  std::vector<std::pair<std::string, const Group*>> ranked;
  for (const auto& [name, g] : groups) ranked.emplace_back(name, &g);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second->at_stake_us > b.second->at_stake_us;
  });
  for (const auto& [name, g] : ranked) {
    f.time_us += g->at_stake_us;
    f.ops.push_back(c.str(c.tasks[g->first_task].name));
    f.evidence.push_back(
        {name, std::nullopt,
         fmt::format("{} {} {} on the device{}; fused: {}", g->matches,
                     name == "optimizer step" ? "Foreach op calls," : "unfused sequences,",
                     fmt_us(g->device_us),
                     fmt::format(" (first at line {})", c.tasks[g->first_task].line),
                     g->replacement)});
    f.advice.push_back(fmt::format("Replace the unfused {} with {}", name, g->replacement));
  }
  std::string names;
  for (const auto& [name, g] : ranked) names += (names.empty() ? "" : ", ") + name;
  f.title = fmt::format("unfused patterns a torch_npu fused op replaces: {}", names);
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
