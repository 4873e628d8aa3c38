// What-if speed: the graph passes on the default scenario's graph, alone and all together.
// The passes rewrite and re-validate a graph (Graph::build: DAG, cycle check, every op made at
// batch 1); whatif's wall time is the simulations that price each variant, not this.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/passes.h"
#include "sim/scenario.h"

namespace {

using namespace npusim;

const sim::Scenario& default_scenario() {
  static const sim::Scenario sc = sim::load_scenario(
      std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / "default.toml", {});
  return sc;
}

void BM_pass_alone(benchmark::State& state) {
  const Graph& g = default_scenario().graph;
  const PassInfo& pass = graph_passes().at(static_cast<std::size_t>(state.range(0)));
  state.SetLabel(pass.name);
  for (auto _ : state) {
    PassResult r = pass.run(g, PassOptions{});
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_pass_alone)->DenseRange(0, 6);

void BM_all_passes(benchmark::State& state) {
  const Graph& g = default_scenario().graph;
  std::vector<std::string> names;
  for (const PassInfo& p : graph_passes()) names.push_back(p.name);
  for (auto _ : state) {
    PassResult r = apply_passes(g, names, PassOptions{});
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_all_passes);

}  // namespace

BENCHMARK_MAIN();
