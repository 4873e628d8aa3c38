// The capacity search on docs/scenarios.md's 100-point grid of the default scenario
// (streams 1..4 x batch_window_us 0..400 x max_gear 8..32), in machine-independent counts: per
// point the kernel events of the plain run at the scenario's rate, of the search, and of the full
// run at the capacity found, with the capacity bracket, and the thread CPU seconds of the plain
// run and of the search (run back to back on one thread, so both see the same load). `--bisection`
// also runs the exhaustive reference search and prints its bracket. Two worker threads (as the
// sweep's --jobs 2).
// Usage: bench_capacity_grid [--bisection] [--point I] [--set KEY=VALUE]... > grid.csv
#include <algorithm>
#include <atomic>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/capacity.h"

namespace {

using namespace npusim;

struct Row {
  int streams = 0, window = 0, gear = 0;
  std::uint64_t plain = 0, search = 0, at_cap = 0;
  std::int64_t sims = 0;
  double rate = 0, fail = 0;
  double b_rate = 0, b_fail = 0;
  std::uint64_t b_events = 0;
  double plain_cpu_s = 0, search_cpu_s = 0;
};

// CPU seconds the calling thread has used.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// As the sweep's deployment.max_gear on a scenario listing its gears: those up to n, and n.
std::string gears_up_to(int n) {
  std::string list;
  for (const int x : {1, 2, 4, 8, 16, 20}) {
    if (x < n) list += std::to_string(x) + ", ";
  }
  return "deployment.gears=[" + list + std::to_string(n) + "]";
}

}  // namespace

int main(int argc, char** argv) {
  bool bisection = false;
  std::vector<std::string> extra;  // --set KEY=VALUE, applied to every point (e.g. scenario.seed=2)
  int only = -1;  // --point I: only the I-th point (0-based, streams slowest, max gear fastest)
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--bisection") bisection = true;
    if (a == "--point" && i + 1 < argc) only = std::stoi(argv[++i]);
    if (a == "--set" && i + 1 < argc) extra.emplace_back(argv[++i]);
  }
  const auto dir = std::filesystem::path(NPUSIM_SOURCE_DIR);
  std::vector<Row> rows;
  for (int s = 1; s <= 4; ++s) {
    for (const int w : {0, 100, 200, 300, 400}) {
      for (const int g : {8, 16, 20, 24, 32}) rows.push_back({s, w, g});
    }
  }
  if (only >= 0) rows = {rows.at(static_cast<std::size_t>(only))};
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < rows.size();) {
      Row& r = rows[i];
      std::vector<std::string> sets = {"deployment.streams=" + std::to_string(r.streams),
                                       "deployment.batch_window_us=" + std::to_string(r.window),
                                       gears_up_to(r.gear)};
      sets.insert(sets.end(), extra.begin(), extra.end());
      const sim::Scenario sc = sim::load_scenario(dir / "scenarios" / "default.toml", sets);
      const HwSpec hw = sim::load_scenario_hw(sc, {dir / "hw_specs"});
      const double t0 = thread_cpu_s();
      r.plain = sim::simulate(sc, hw).events;
      const double t1 = thread_cpu_s();
      const sim::MaxQps m = sim::find_max_qps(sc, hw, 0.02);
      r.plain_cpu_s = t1 - t0;
      r.search_cpu_s = thread_cpu_s() - t1;
      r.search = m.events;
      r.at_cap = m.result.events;
      r.sims = m.simulations;
      r.rate = m.rate_qps;
      r.fail = m.fail_qps.value_or(0);
      if (bisection) {
        const sim::MaxQps b = sim::find_max_qps_bisection(sc, hw, 0.02);
        r.b_rate = b.rate_qps;
        r.b_fail = b.fail_qps.value_or(0);
        r.b_events = b.events;
      }
    }
  };
  std::thread t(work);
  work();
  t.join();
  std::printf("streams,window_us,max_gear,plain_events,search_events,at_cap_events,sims,rate,fail,"
              "bisect_rate,bisect_fail,bisect_events,plain_cpu_s,search_cpu_s\n");
  for (const Row& r : rows) {
    std::printf("%d,%d,%d,%llu,%llu,%llu,%lld,%.3f,%.3f,%.3f,%.3f,%llu,%.4f,%.4f\n", r.streams,
                r.window,
                r.gear, static_cast<unsigned long long>(r.plain),
                static_cast<unsigned long long>(r.search),
                static_cast<unsigned long long>(r.at_cap), static_cast<long long>(r.sims), r.rate,
                r.fail, r.b_rate, r.b_fail, static_cast<unsigned long long>(r.b_events),
                r.plain_cpu_s, r.search_cpu_s);
  }
}
