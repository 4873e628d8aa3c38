#include "sim/resources.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "sim/simulator.h"

using npusim::sim::CorePool;
using npusim::sim::EventTarget;
using npusim::sim::FluidBandwidth;
using npusim::sim::ServerPool;
using npusim::sim::Simulator;
using npusim::sim::TimeNs;
using npusim::sim::TimeWeighted;

namespace {

// Records (time, tag) of every completion a resource reports.
class Done final : public EventTarget {
 public:
  explicit Done(Simulator& sim) : sim_(sim) {}
  void on_event(std::uint32_t, std::uint64_t tag) override { at.emplace_back(sim_.now(), tag); }
  std::vector<std::pair<TimeNs, std::uint64_t>> at;

 private:
  Simulator& sim_;
};

// Starts a transfer at a given time (so tests can change the set of transfers mid-flight).
class Starter final : public EventTarget {
 public:
  Starter(FluidBandwidth& bw, double bytes, double cap) : bw_(bw), bytes_(bytes), cap_(cap) {}
  void on_event(std::uint32_t, std::uint64_t tag) override { bw_.start(bytes_, cap_, tag); }

 private:
  FluidBandwidth& bw_;
  double bytes_;
  double cap_;
};

}  // namespace

TEST_CASE("a time-weighted value integrates value times duration from its restart", "[resources]") {
  TimeWeighted w;
  w.set(0, 2);
  w.set(10, 4);   // 2 for 10 ns
  w.restart(20);  // forget the first 20 ns (area 2*10 + 4*10)
  w.add(30, -1);  // 4 for 10 ns, then 3
  CHECK(w.area(40) == Approx(4 * 10 + 3 * 10));
  CHECK(w.mean(40) == Approx(70.0 / 20.0));
}

TEST_CASE("a core pool grants what is free within the stream's cap", "[resources]") {
  CorePool pool(40, 2, 16);
  CHECK(pool.cap() == 16);
  CHECK(pool.grantable(0, 30) == 16);  // capped
  pool.acquire(0, 16, 0);
  CHECK(pool.grantable(0, 1) == 0);  // at its cap
  CHECK(pool.grantable(1, 30) == 16);
  pool.acquire(1, 16, 0);
  CHECK(pool.free() == 8);
  pool.release(0, 16, 100);
  CHECK(pool.free() == 24);
  // 32 cores busy for 100 ns, then 16 for 100 ns, over 40 cores
  CHECK(pool.busy().area(200) == Approx(32 * 100 + 16 * 100));
}

TEST_CASE("without a cap a stream may take every free core", "[resources]") {
  CorePool pool(20, 3, 0);
  CHECK(pool.grantable(2, 25) == 20);
  pool.acquire(2, 15, 0);
  CHECK(pool.grantable(0, 20) == 5);
}

TEST_CASE("one transfer alone runs at its cap", "[resources][fluid]") {
  Simulator sim(1);
  Done done(sim);
  FluidBandwidth bw(sim, /*capacity*/ 100.0, &done, 7);
  bw.start(1000.0, 40.0, 1);  // 1000 bytes at 40 B/ns -> 25 ns
  sim.run();
  REQUIRE(done.at.size() == 1);
  CHECK(done.at[0] == std::make_pair(TimeNs{25}, std::uint64_t{1}));
}

TEST_CASE("two memory-bound transfers sharing the bandwidth each run at half the rate",
          "[resources][fluid]") {
  Simulator sim(1);
  Done done(sim);
  FluidBandwidth bw(sim, 100.0, &done, 7);
  // Each could use the whole capacity alone (cap = capacity): alone 1000 B takes 10 ns.
  bw.start(1000.0, 100.0, 1);
  bw.start(1000.0, 100.0, 2);
  CHECK(bw.rate_of(1) == Approx(50.0));
  CHECK(bw.rate_of(2) == Approx(50.0));
  sim.run();
  REQUIRE(done.at.size() == 2);
  CHECK(done.at[0].first == 20);  // twice the time alone
  CHECK(done.at[1].first == 20);
  CHECK(bw.bytes_moved() == Approx(2000.0));
}

TEST_CASE("a transfer below its fair share keeps its cap and the rest share the remainder",
          "[resources][fluid]") {
  Simulator sim(1);
  Done done(sim);
  FluidBandwidth bw(sim, 100.0, &done, 7);
  bw.start(1000.0, 10.0, 1);   // small cap: takes 10
  bw.start(9000.0, 100.0, 2);  // the other two split 90
  bw.start(9000.0, 100.0, 3);
  CHECK(bw.rate_of(1) == Approx(10.0));
  CHECK(bw.rate_of(2) == Approx(45.0));
  CHECK(bw.rate_of(3) == Approx(45.0));
  sim.run();
  // 1 ends at 100 ns; 2 and 3 then have 4500 B left each and share all 100 B/ns: 90 ns more.
  REQUIRE(done.at.size() == 3);
  CHECK(done.at[0] == std::make_pair(TimeNs{100}, std::uint64_t{1}));
  CHECK(done.at[1].first == 190);
  CHECK(done.at[2].first == 190);
}

TEST_CASE("completion times are re-keyed when a transfer joins mid-flight and when it leaves",
          "[resources][fluid]") {
  Simulator sim(1);
  Done done(sim);
  FluidBandwidth bw(sim, 100.0, &done, 7);
  Starter late(bw, 500.0, 100.0);
  bw.start(2000.0, 100.0, 1);        // alone: would end at 20 ns
  sim.schedule_at(10, &late, 0, 2);  // at 10 ns: 1000 B left; the newcomer shares
  sim.run();
  // 10..20: both at 50 B/ns -> newcomer's 500 B done at 20 ns; transfer 1 has 500 B left,
  // alone again at 100 B/ns -> done at 25 ns.
  REQUIRE(done.at.size() == 2);
  CHECK(done.at[0] == std::make_pair(TimeNs{20}, std::uint64_t{2}));
  CHECK(done.at[1] == std::make_pair(TimeNs{25}, std::uint64_t{1}));
  CHECK(sim.stats().events_cancelled >= 2);  // both re-keys cancelled an event
}

TEST_CASE("a server pool serves in FIFO order on its servers", "[resources]") {
  Simulator sim(1);
  Done done(sim);
  ServerPool pool(sim, 2, &done, 3);
  pool.submit(100, 1);
  pool.submit(50, 2);
  pool.submit(10, 3);  // waits for the first free server (2, at 50 ns)
  CHECK(pool.queued() == 1);
  sim.run();
  REQUIRE(done.at.size() == 3);
  CHECK(done.at[0] == std::make_pair(TimeNs{50}, std::uint64_t{2}));
  CHECK(done.at[1] == std::make_pair(TimeNs{60}, std::uint64_t{3}));
  CHECK(done.at[2] == std::make_pair(TimeNs{100}, std::uint64_t{1}));
  CHECK(pool.busy_time().area(100) == Approx(100 + 50 + 10));
}
