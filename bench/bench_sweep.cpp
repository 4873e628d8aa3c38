// Sweep speed: a 20-point grid of the default scenario (streams 1..4 x cube core limit 1..5) with
// 1 and 2 worker threads; the counter points/s is grid points simulated per wall second. The
// threads share nothing but the read-only chip, so 2 jobs should approach twice 1 job on two
// idle cores.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "sim/sweep.h"

namespace {

using namespace npusim;

void BM_SweepDefault(benchmark::State& state) {
  sim::SweepSpec spec;
  spec.scenario_file = std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / "default.toml";
  spec.axes = {sim::parse_sweep_axis("deployment.streams=1..4"),
               sim::parse_sweep_axis("deployment.cube_cores_per_stream=1..5")};
  spec.hw_dirs = {std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"};
  std::size_t points = 0;
  for (auto _ : state) {
    const sim::SweepResult r = sim::run_sweep(spec, static_cast<unsigned>(state.range(0)));
    benchmark::DoNotOptimize(r.points.data());
    points += r.points.size();
  }
  state.counters["points/s"] =
      benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepDefault)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
