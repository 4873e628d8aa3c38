// Capacity search cost: one point of the default scenario (4 streams, and 2 streams) searched by
// find_max_qps and by the exhaustive bisection it replaced, against one plain simulation of the
// point at its own rate. Counters: sims (runs started per search), events/plain (kernel events of
// the search over those of the plain run: the machine-independent cost ratio) and
// events/at-capacity (over those of one full run at the capacity found: the least any search
// that reports a full run can cost).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "sim/capacity.h"

namespace {

using namespace npusim;

struct Point {
  sim::Scenario sc;
  HwSpec hw;
};

Point point(int streams) {
  const auto dir = std::filesystem::path(NPUSIM_SOURCE_DIR);
  Point p{sim::load_scenario(dir / "scenarios" / "default.toml",
                             {"deployment.streams=" + std::to_string(streams)}),
          {}};
  p.hw = sim::load_scenario_hw(p.sc, {dir / "hw_specs"});
  return p;
}

void BM_PlainRun(benchmark::State& state) {
  const Point p = point(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(sim::simulate(p.sc, p.hw).events);
}

template <bool kBisection>
void BM_Capacity(benchmark::State& state) {
  const Point p = point(static_cast<int>(state.range(0)));
  const double plain = static_cast<double>(sim::simulate(p.sc, p.hw).events);
  sim::MaxQps m;
  for (auto _ : state) {
    m = kBisection ? sim::find_max_qps_bisection(p.sc, p.hw, 0.02)
                   : sim::find_max_qps(p.sc, p.hw, 0.02);
    benchmark::DoNotOptimize(m.events);
  }
  const double capacity_qps = m.rate_qps;
  state.counters["capacity_qps"] = capacity_qps;
  state.counters["sims"] = static_cast<double>(m.simulations);
  state.counters["events/plain"] = static_cast<double>(m.events) / plain;
  state.counters["events/at-capacity"] =
      static_cast<double>(m.events) / static_cast<double>(m.result.events);
}

BENCHMARK(BM_PlainRun)->Arg(4)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Capacity<false>)->Name("BM_FindMaxQps")->Arg(4)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Capacity<true>)
    ->Name("BM_FindMaxQpsBisection")
    ->Arg(4)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
