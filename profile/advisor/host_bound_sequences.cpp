// Rule host_bound_sequences: repeated op sequences (fusion candidates) whose wall time is mostly
// host: the device sits between their ops. Source: msprof-analyze advisor
// rules/en/fusible_operator.yaml: sequences of 2..10 ops (kMinLength, kMaxLength) seen at least
// 5 times (kMinCount), host-bound when the gaps are at least 40 % of their wall time
// (kHostShare). The reference counts every window, so overlapping windows of one run of ops
// count several times and its totals can exceed the step. npusim counts each op once: the
// sequences are taken greedily, the one with the most host time first, and an op claimed by a
// chosen sequence is not counted again (nor are overlapping windows of one sequence). A window's
// host time is its wall time not covered by any device task (a collective the ops wait on, or
// another stream's kernels, is not host time), and a window never spans two steps.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

constexpr std::size_t kMinLength = 2;
constexpr std::size_t kMaxLength = 10;
constexpr std::size_t kMinCount = 5;
constexpr double kHostShare = 0.4;
/// How many sequences the finding names (reference: top_num 5).
constexpr std::size_t kTop = 5;

struct Candidate {
  std::vector<std::uint32_t> starts;  ///< index into the stream's list
  std::size_t length = 0;
  std::size_t stream = 0;
};

struct Chosen {
  std::string types;
  std::size_t count = 0;
  double wall_us = 0, device_us = 0, host_us = 0;
  std::uint32_t first_task = 0;
};

}  // namespace

void check_host_bound_sequences(Context& c) {
  if (!c.timeline) return;
  std::map<std::int64_t, std::vector<std::uint32_t>> by_stream;
  for (std::uint32_t i : c.by_start) {
    if (c.tasks[i].kernel != kNone) by_stream[c.tasks[i].stream].push_back(i);
  }
  std::vector<std::vector<std::uint32_t>> streams;
  for (auto& [s, ids] : by_stream) streams.push_back(std::move(ids));
  std::vector<std::vector<bool>> claimed(streams.size());
  for (std::size_t s = 0; s < streams.size(); ++s) claimed[s].assign(streams[s].size(), false);

  std::vector<Interval> all;
  all.reserve(c.tasks.size());
  for (std::uint32_t i = 0; i < c.tasks.size(); ++i) {
    all.push_back({c.tasks[i].start_ns, c.tasks[i].end_ns, i});
  }
  const std::vector<Interval> busy = merged(std::move(all));
  // Wall time of a window, its ops' device time, and its host time (wall not covered by any
  // device task).
  auto window = [&](std::size_t s, std::size_t at, std::size_t len, double* wall, double* dev,
                    double* host) {
    const auto& ids = streams[s];
    const Task& first = c.tasks[ids[at]];
    const Task& last = c.tasks[ids[at + len - 1]];
    const std::int64_t end = std::max(first.end_ns, last.end_ns);
    *wall = us(end - first.start_ns);
    *dev = 0;
    for (std::size_t k = at; k < at + len; ++k) *dev += c.tasks[ids[k]].duration_us;
    *host = *wall - us(covered_ns(busy, first.start_ns, end));
  };

  std::vector<Chosen> chosen;
  double host_total = 0, wall_total = 0;
  while (chosen.size() < kTop) {
    // Count each sequence's non-overlapping, unclaimed occurrences.
    std::unordered_map<std::string, Candidate> cands;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      const auto& ids = streams[s];
      for (std::size_t len = kMinLength; len <= kMaxLength; ++len) {
        std::unordered_map<std::string, std::size_t> next_free;  // key -> first index it may use
        for (std::size_t at = 0; at + len <= ids.size(); ++at) {
          bool free = c.tasks[ids[at]].step == c.tasks[ids[at + len - 1]].step;
          std::string key = std::to_string(s) + ':';  // per stream: starts index its ops
          for (std::size_t k = at; k < at + len; ++k) {
            if (claimed[s][k]) free = false;
            key += std::to_string(c.tasks[ids[k]].type);
            key += ',';
          }
          if (!free) continue;
          auto& nf = next_free[key];
          if (at < nf) continue;  // overlaps the previous occurrence of the same sequence
          nf = at + len;
          Candidate& cand = cands[key];
          cand.length = len;
          cand.stream = s;
          cand.starts.push_back(std::uint32_t(at));
        }
      }
    }
    // The host-bound candidate with the most host time.
    const Candidate* best = nullptr;
    std::string best_key;
    double best_host = 0, best_wall = 0, best_dev = 0;
    for (const auto& [key, cand] : cands) {
      if (cand.starts.size() < kMinCount) continue;
      double wall = 0, dev = 0, host = 0;
      for (auto at : cand.starts) {
        double w = 0, d = 0, h = 0;
        window(cand.stream, at, cand.length, &w, &d, &h);
        wall += w;
        dev += d;
        host += h;
      }
      if (wall <= 0 || host < kHostShare * wall) continue;
      // Ties (the same host time) go to the longer sequence, then the key, so the choice does
      // not depend on the hash order.
      if (best == nullptr || host > best_host ||
          (host == best_host && (cand.length > best->length ||
                                 (cand.length == best->length && key < best_key)))) {
        best = &cand, best_key = key, best_host = host, best_wall = wall, best_dev = dev;
      }
    }
    if (best == nullptr) break;
    Chosen ch;
    const auto& ids = streams[best->stream];
    for (std::size_t k = 0; k < best->length; ++k) {
      ch.types += (k ? "-" : "") + c.str(c.tasks[ids[best->starts[0] + k]].type);
    }
    ch.count = best->starts.size();
    ch.wall_us = best_wall;
    ch.device_us = best_dev;
    ch.host_us = best_host;
    ch.first_task = ids[best->starts[0]];
    for (auto at : best->starts) {
      for (std::size_t k = at; k < at + best->length; ++k) claimed[best->stream][k] = true;
    }
    host_total += best_host;
    wall_total += best_wall;
    chosen.push_back(std::move(ch));
  }
  if (chosen.empty()) return;
  Finding f;
  f.check = "host_bound_sequences";
  f.title = fmt::format("{} repeated op sequences are host-bound: {} of their {} wall time the "
                        "device is idle between their ops",
                        chosen.size(), fmt_us(host_total), fmt_us(wall_total));
  f.time_us = host_total;
  f.evidence = {{"host_us", host_total, ""}, {"wall_us", wall_total, ""}};
  for (const auto& ch : chosen) {
    f.ops.push_back(ch.types);
    f.evidence.push_back(
        {ch.types, std::nullopt,
         fmt::format("{} times, wall {}, its ops {}, device idle {}, first at line {}", ch.count,
                     fmt_us(ch.wall_us), fmt_us(ch.device_us), fmt_us(ch.host_us),
                     c.tasks[ch.first_task].line)});
  }
  f.advice = {"The host launches these ops slower than the device runs them: look up the code "
              "that issues them (a call-stack profile, with_stack=True) and check it runs "
              "NPU-friendly ops (no host round trips, no per-element Python loops)",
              "Then ask whether the sequence can be one fused kernel (an existing torch_npu "
              "fused op, or a custom one): one launch instead of several"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
