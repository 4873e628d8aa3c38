// Rule aicore_freq: the AI Core clock falling below its nominal value while ops run, from the
// "AI Core Freq" counter track of the timeline JSON (trace_view.json / msprof_*.json). Source:
// msprof-analyze advisor ai_core_freq_checker.py: an op is flagged when its mean clock is at
// least 5 % (kDropShare) below the chip's. The nominal clock is the chip's (--hw or the matched
// known chip), else the highest sample. At stake: each op's time × the share the clock fell
// during it (the time it would save at the nominal clock, if it is compute-bound).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

constexpr double kDropShare = 0.05;

}  // namespace

void check_aicore_freq(Context& c) {
  if (!c.src.trace_json) return;  // most profiles have no timeline JSON: nothing to say
  TraceInfo trace;
  try {
    trace = read_trace_json(*c.src.trace_json);
  } catch (const InputError& e) {
    c.skip("aicore_freq", fmt::format("timeline JSON not readable: {}", e.what()));
    return;
  }
  auto& samples = trace.aicore_freq_samples;
  if (samples.empty()) {
    c.skip("aicore_freq", "no AI Core Freq track in the timeline JSON");
    return;
  }
  std::stable_sort(samples.begin(), samples.end());
  double nominal = 0;
  for (const auto& s : samples) nominal = std::max(nominal, s.second);
  std::string basis = "the highest sample";
  if (c.report.chip.freq_mhz && !c.report.chip.name.empty()) {
    nominal = std::max(nominal, *c.report.chip.freq_mhz);
    basis = c.report.chip.name;
  }
  // The clock at time t: the last sample at or before t (a counter track holds its value).
  auto clock_at = [&](double t_us) {
    auto it = std::upper_bound(samples.begin(), samples.end(), std::make_pair(t_us, 1e300));
    if (it == samples.begin()) return samples.front().second;
    return std::prev(it)->second;
  };
  struct Stat {
    std::uint64_t count = 0;
    double us = 0, mhz_us = 0, at_stake = 0, low = 1e300;
  };
  std::map<std::string, Stat> per_type;
  for (const Task& t : c.tasks) {
    if (t.kernel == kNone || t.duration_us <= 0) continue;
    const double mhz = clock_at(us(t.start_ns));
    Stat& s = per_type[c.str(t.type)];
    ++s.count;
    s.us += t.duration_us;
    s.mhz_us += mhz * t.duration_us;
    s.low = std::min(s.low, mhz);
    if (mhz < nominal) s.at_stake += t.duration_us * (1 - mhz / nominal);
  }
  std::vector<std::pair<std::string, Stat>> hits;
  for (const auto& [type, s] : per_type) {
    if (s.us > 0 && 1 - s.mhz_us / s.us / nominal >= kDropShare) hits.emplace_back(type, s);
  }
  if (hits.empty()) return;
  std::stable_sort(hits.begin(), hits.end(),
                   [](const auto& a, const auto& b) { return a.second.at_stake > b.second.at_stake; });
  Finding f;
  f.check = "aicore_freq";
  double low = 1e300;
  for (const auto& s : samples) low = std::min(low, s.second);
  f.title = fmt::format("the AI Core clock falls to {:.0f} MHz ({} below {:.0f} MHz) while {} op "
                        "types run",
                        low, pct(1 - low / nominal), nominal, hits.size());
  f.evidence = {{"nominal_mhz", nominal, ""}, {"lowest_mhz", low, ""},
                {"nominal_from", std::nullopt, basis}};
  for (const auto& [type, s] : hits) {
    f.time_us += s.at_stake;
    if (f.ops.size() >= c.max_listed()) continue;
    f.ops.push_back(type);
    f.evidence.push_back({type, std::nullopt,
                          fmt::format("{} calls, {}, mean clock {:.0f} MHz, lowest {:.0f} MHz",
                                      s.count, fmt_us(s.us), s.mhz_us / s.us, s.low)});
  }
  f.advice = {"The chip throttles: check its temperature and power (npu-smi info), the "
              "cooling and the power cap; a lower clock slows every compute-bound op alike"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
