// Simulator speed: raw event-kernel throughput, and whole runs of the bundled scenarios.
// Target (issue #4): over 5 million events per second on one core, so that a sweep of a hundred
// configurations of 100k requests each finishes well under a minute on a 2-core machine; issue
// #16 raised it to 20 million on BM_DefaultScenario100k. Compare changes by instructions per
// event (valgrind --tool=callgrind): wall figures swing with the machine's load.
// Session 10 (issue #16 item 3), one run of BM_DefaultScenario100k (5,933,424 events), release
// preset: 2,571.1 M instructions (433.3 per event) -> 2,160.6 M (364.1 per event, -16.0 %),
// output byte-identical. What gave it: the event queue's insert scanning a short sorted run
// from the head (-128 M), resources completing in their owner with one virtual call and the
// per-event pushes inlined (-162 M), the pumps' nothing-to-do tests inline with their work out
// of line (-94 M), no water-filling order for a lone transfer and a flat time-source table
// (-27 M). Wall at load average ~5 on 2 cores: 13.6-15.8 -> 16.2-20.0 M events/s (median of 5).
// Session 11 (issue #16 item 3, target <= 290 per event), the same run: 2,157.8 M -> 1,737.1 M
// instructions in the whole program (363.7 -> 292.8 per event, -19.5 %); inside simulate()
// (valgrind --toggle-collect='npusim::sim::simulate*') 2,138.7 M -> 1,718.0 M (360.4 -> 289.5,
// -19.7 %); output byte-identical. What gave it (in simulate()): the model's events handled in
// its own run loop with the dispatch inlined, Simulator::run_for (-67 M); on_launch_done,
// on_op_done, on_host_done, memory_phase_done inline in that loop and try_start_on_cores in
// device_next (-132 M); the memory phase's transfers planned once per op timing,
// FluidBandwidth::alone() (-63 M); host work tags by shift and run_on_host inline (-32 M); a
// per (op, gear) memo of the op's full-budget timing, no integral update for an empty core
// grant, pushes without a key in memory (-48 M); trace records out of line (-22 M); the op
// count, the any-core flag and the gear count as members (-21 M); the layout test behind the
// sorted run in take_until (-21 M with the memo's one compare); event keys holding the time
// with its sign bit flipped, a sentinel ending the sorted run (-13 M). events/s at load average
// 10 on 2 cores, best of 5: 23.7 M -> 32.8 M; the wall time of a run 545 -> 394 ms.
// Reported counters: events/s (simulated events per CPU second: google-benchmark divides rate
// counters by the CPU time, so it holds under load where the wall time does not) and, for whole
// runs, the wall time of one run of 100k requests.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace {

using namespace npusim;

std::filesystem::path scenario_path(const char* name) {
  return std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios" / name;
}

// A self-rescheduling event chain: the kernel's cost per event with `depth` events pending.
class Chain final : public sim::EventTarget {
 public:
  explicit Chain(sim::Simulator& s) : sim_(s) {}
  void on_event(std::uint32_t kind, std::uint64_t payload) override {
    if (left_ == 0) return;
    --left_;
    // pseudo-random delays keep the heap working rather than appending in order
    payload = payload * 6364136223846793005ULL + 1442695040888963407ULL;
    sim_.schedule_in(static_cast<sim::TimeNs>(1 + (payload >> 54)), this, kind, payload);
  }
  std::uint64_t left_ = 0;

 private:
  sim::Simulator& sim_;
};

void BM_EventKernel(benchmark::State& state) {
  const auto depth = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t events = 0;
  for (auto _ : state) {
    sim::Simulator s(1);
    Chain c(s);
    c.left_ = 1'000'000;
    for (std::uint64_t i = 0; i < depth; ++i)
      s.schedule_at(static_cast<sim::TimeNs>(i), &c, 0, i + 1);
    events += s.run();
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventKernel)->Arg(16)->Arg(1024)->Unit(benchmark::kMillisecond);

void run_scenario(benchmark::State& state, const char* file, const std::vector<std::string>& sets) {
  const sim::Scenario sc = sim::load_scenario(scenario_path(file), sets);
  const HwSpec hw =
      sim::load_scenario_hw(sc, {std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"});
  std::uint64_t events = 0;
  for (auto _ : state) {
    const sim::SimResult r = sim::simulate(sc, hw);
    events += r.events;
    benchmark::DoNotOptimize(r.qps);
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events/run"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}

// The yardstick: the default scenario, 4 streams, 100k requests.
void BM_DefaultScenario100k(benchmark::State& state) {
  run_scenario(state, "default.toml",
               {"deployment.streams=4", "workload.requests=100000", "workload.warmup_requests=0"});
}
BENCHMARK(BM_DefaultScenario100k)->Unit(benchmark::kMillisecond);

// The queueing check: one op per request, so this is the serving machinery's own cost.
void BM_MdcValidation100k(benchmark::State& state) {
  run_scenario(state, "mdc_validation.toml",
               {"deployment.streams=4", "workload.requests=100000", "workload.rate_qps=25000"});
}
BENCHMARK(BM_MdcValidation100k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
