#include "sim/scenario.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <filesystem>
#include <string>

#include "model/error.h"
#include "sim/card_sim.h"
#include "sim_test_util.h"

using npusim::InputError;
using npusim::sim::ArrivalKind;
using npusim::sim::BatchSizeDist;
using npusim::sim::load_scenario;
using npusim::sim::Scenario;

namespace {

const char* kBase = R"(
[scenario]
name = "base"
hw = "ascend910b3"
seed = 9

[graph]
[[graph.op]]
name = "a"
type = "Add"
shapes = "B,16;B,16"
dtypes = "FLOAT16"

[deployment]
streams = 2
gears = [1, 8, 4]
batch_window_us = 50

[workload]
arrival = "poisson"
rate_qps = 1000
requests = 100
batch_size = { 1 = 3, 8 = 1 }
)";

std::string error_of(const std::filesystem::path& p, const std::vector<std::string>& sets = {}) {
  try {
    (void)load_scenario(p, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a scenario loads into typed sections with defaults for optional keys", "[scenario]") {
  const Scenario s = npusim::test::scenario_from_text(kBase);
  CHECK(s.info.name == "base");
  CHECK(s.info.hw == "ascend910b3");
  CHECK(s.info.seed == 9);
  CHECK(s.graph.size() == 1);
  CHECK(s.deployment.streams == 2);
  CHECK(s.deployment.gears == std::vector<std::int64_t>{1, 4, 8});  // sorted
  CHECK(s.deployment.batch_window_us == 50);
  CHECK_FALSE(s.deployment.split_oversize);
  CHECK(s.deployment.cube_cores_per_stream == 0);
  CHECK(s.workload.arrival == ArrivalKind::kPoisson);
  CHECK(s.workload.rate_qps == 1000);
  CHECK(s.workload.warmup_requests == 0);
  CHECK(s.workload.batch_size.mean() == Approx(0.75 * 1 + 0.25 * 8));
  CHECK_FALSE(s.target.p99_ms.has_value());
}

TEST_CASE("scenario --set overrides are typed by the key and applied before validation", "[scenario]") {
  const Scenario s = npusim::test::scenario_from_text(
      kBase, {"deployment.streams=4", "workload.rate_qps=250", "deployment.gears=[1,2,3]",
              "target.p99_ms=2.5", "workload.batch_size={2 = 1}", "scenario.name=renamed"});
  CHECK(s.deployment.streams == 4);
  CHECK(s.workload.rate_qps == 250);
  CHECK(s.deployment.gears == std::vector<std::int64_t>{1, 2, 3});
  CHECK(s.info.name == "renamed");  // a bare word is a string
  CHECK(s.target.p99_ms == std::optional<double>{2.5});
  CHECK(s.workload.batch_size.max_size() == 2);
}

TEST_CASE("a max_gear compiles every batch size up to it", "[scenario]") {
  const Scenario s = npusim::test::scenario_from_text(std::string(kBase), {});
  const Scenario m = npusim::test::scenario_from_text(
      "[scenario]\nhw = \"ascend910b3\"\n[graph]\n[[graph.op]]\nname = \"a\"\ntype = \"Relu\"\n"
      "shapes = \"B,4\"\ndtypes = \"FLOAT16\"\n[deployment]\nstreams = 1\nmax_gear = 5\n"
      "[workload]\narrival = \"closed\"\nconcurrency = 1\nrequests = 3\nbatch_size = 2\n");
  CHECK(m.deployment.gears == std::vector<std::int64_t>{1, 2, 3, 4, 5});
  CHECK(s.deployment.gears.size() == 3);
}

TEST_CASE("a --set says what the user means: the command line wins over the file's gears",
          "[scenario]") {
  // kBase lists gears [1, 4, 8]: max_gear on the command line replaces them with 1..8.
  const Scenario m = npusim::test::scenario_from_text(kBase, {"deployment.max_gear=8"});
  CHECK(m.deployment.gears == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  // and the other way round: a file with max_gear takes a gears list from the command line.
  const std::string with_max = [] {
    std::string t = kBase;
    t.replace(t.find("gears = [1, 8, 4]"), 17, "max_gear = 8");
    return t;
  }();
  const Scenario g = npusim::test::scenario_from_text(with_max, {"deployment.gears=[2,8]"});
  CHECK(g.deployment.gears == std::vector<std::int64_t>{2, 8});
  // both on the command line is still ambiguous
  const auto p = npusim::test::write_temp("set_both_gears.toml", kBase);
  CHECK(error_of(p, {"deployment.gears=[2,8]", "deployment.max_gear=8"}) ==
        "<command line>: error: --set deployment.gears and deployment.max_gear: give one of them, "
        "not both");
}

TEST_CASE("a --set key=none removes an optional key such as a core limit", "[scenario]") {
  std::string limited = kBase;
  limited.replace(limited.find("streams = 2"), 11,
                  "streams = 2\ncube_cores_per_stream = 5\nvector_cores_per_stream = 10");
  const Scenario with = npusim::test::scenario_from_text(limited);
  CHECK(with.deployment.cube_cores_per_stream == 5);
  const Scenario without = npusim::test::scenario_from_text(
      limited, {"deployment.cube_cores_per_stream=none", "deployment.vector_cores_per_stream=none",
                "deployment.batch_window_us=none"});
  CHECK(without.deployment.cube_cores_per_stream == 0);  // 0: no limit
  CHECK(without.deployment.vector_cores_per_stream == 0);
  CHECK(without.deployment.batch_window_us == 0);
  // removing a key the file does not have is no error
  const Scenario target = npusim::test::scenario_from_text(kBase, {"target.p99_ms=none"});
  CHECK_FALSE(target.target.p99_ms.has_value());
  // a required key cannot be removed
  const auto p = npusim::test::write_temp("set_none_required.toml", kBase);
  CHECK_THAT(error_of(p, {"deployment.streams=none"}),
             Catch::StartsWith("<command line>: error: --set 'deployment.streams=none': "
                               "deployment.streams cannot be removed; `none` removes only "));
}

TEST_CASE("an unknown --set key is an error at the command line naming the accepted keys",
          "[scenario]") {
  const auto p = npusim::test::write_temp("set_unknown.toml", kBase);
  const std::string e = error_of(p, {"deployment.streamz=4"});
  CHECK_THAT(e, Catch::StartsWith("<command line>: error: --set 'deployment.streamz=4': unknown "
                                  "key 'deployment.streamz'; accepted keys:"));
  CHECK_THAT(e, Catch::Contains("deployment.streams"));
  CHECK_THAT(error_of(p, {"streams"}), Catch::Contains("expected section.key=value"));
}

TEST_CASE("an override of the wrong type or range is reported at the command line", "[scenario]") {
  const auto p = npusim::test::write_temp("set_type.toml", kBase);
  CHECK_THAT(error_of(p, {"deployment.streams=abc"}),
             Catch::StartsWith("<command line>: error: --set 'deployment.streams=abc': "
                               "[deployment].streams: expected an integer"));
  CHECK_THAT(error_of(p, {"deployment.streams=0"}),
             Catch::Contains("--set 'deployment.streams=0': [deployment].streams: expected an "
                             "integer in [1, 1024], got 0"));
}

TEST_CASE("each bad scenario file is rejected at its defect's line with its phrase", "[scenario]") {
  using npusim::test::data;
  CHECK_THAT(error_of(data("bad/scenario_unknown_key.toml")),
             Catch::Contains("scenario_unknown_key.toml:14:1") &&
                 Catch::Contains("unknown key 'streamz'"));
  CHECK_THAT(error_of(data("bad/scenario_missing_gears.toml")),
             Catch::Contains("scenario_missing_gears.toml:12:1") &&
                 Catch::Contains("needs `gears = [...]`"));
  CHECK_THAT(error_of(data("bad/scenario_oversize_no_split.toml")),
             Catch::Contains("scenario_oversize_no_split.toml:20:14") &&
                 Catch::Contains("exceed the largest gear 8; set [deployment] split_oversize"));
  CHECK_THAT(error_of(data("bad/scenario_rate_for_closed.toml")),
             Catch::Contains("scenario_rate_for_closed.toml:19:12") &&
                 Catch::Contains("only used with arrival = \"poisson\""));
  CHECK_THAT(error_of(data("bad/scenario_bad_arrival.toml")),
             Catch::Contains("scenario_bad_arrival.toml:17:11") &&
                 Catch::Contains("unknown arrival 'uniform'"));
  CHECK_THAT(error_of(data("bad/scenario_histogram_bad_key.toml")),
             Catch::Contains("scenario_histogram_bad_key.toml:20:") &&
                 Catch::Contains("histogram key must be a batch size"));
  CHECK_THAT(
      error_of(data("bad/scenario_negative_rate.toml")),
      Catch::Contains("scenario_negative_rate.toml:18:12") &&
          Catch::Contains("[workload].rate_qps: expected a number in (0, 1000000000], got -5"));
  CHECK_THAT(error_of(data("bad/scenario_gears_and_max_gear.toml")),
             Catch::Contains("scenario_gears_and_max_gear.toml:15:12") &&
                 Catch::Contains("give either `gears` or `max_gear`, not both"));
  CHECK_THAT(error_of(data("bad/scenario_trace_unsorted.toml")),
             Catch::Contains("scenario_trace_unsorted.csv:4:1") &&
                 Catch::Contains("arrival time 40 is before the previous line's 50"));
  CHECK_THAT(error_of(data("bad/scenario_graph_file_cycle.toml")),
             Catch::Contains("graph_cycle.toml:8:9") && Catch::Contains("dependency cycle"));
}

TEST_CASE("a core limit above the chip's cores is an error at the key once the chip is known",
          "[scenario]") {
  const Scenario s = load_scenario(npusim::test::data("bad/scenario_core_limit_too_big.toml"));
  const npusim::HwSpec hw = npusim::test::chip(s.info.hw);
  try {
    (void)npusim::sim::simulate(s, hw);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("scenario_core_limit_too_big.toml:15:25") &&
                             Catch::Contains("64 exceeds the 20 cube cores of ascend910b3"));
  }
}

TEST_CASE("every bundled scenario loads and names a chip that exists", "[scenario]") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(NPUSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    INFO(entry.path().string());
    const Scenario s = load_scenario(entry.path());
    CHECK_NOTHROW(npusim::test::chip(s.info.hw));
    ++loaded;
  }
  CHECK(loaded >= 1);
}

TEST_CASE("a batch-size histogram draws each size with its weight", "[scenario]") {
  const BatchSizeDist d = BatchSizeDist::histogram({1, 8, 20}, {2, 1, 1});
  CHECK(d.draw(0.0) == 1);
  CHECK(d.draw(0.49) == 1);
  CHECK(d.draw(0.5) == 8);
  CHECK(d.draw(0.76) == 20);
  CHECK(d.draw(0.999999) == 20);
  CHECK(d.max_size() == 20);
  CHECK(d.mean() == Approx(0.5 * 1 + 0.25 * 8 + 0.25 * 20));
  const BatchSizeDist s = BatchSizeDist::samples({3, 3, 5, 7});
  CHECK(s.probabilities() == std::vector<double>{0.5, 0.25, 0.25});
}

TEST_CASE("batch sizes and arrivals can come from files next to the scenario", "[scenario]") {
  npusim::test::write_temp("sizes.txt", "# observed\n1, 2\n2\n8\n");
  npusim::test::write_temp("arrivals.csv", "# arrival_us,batch_size\n0,1\n10.5,2\n10.5,4\n");
  std::string text = kBase;
  text.replace(text.find("batch_size = { 1 = 3, 8 = 1 }"), 29, "batch_size = \"sizes.txt\"");
  const Scenario s = npusim::test::scenario_from_text(text);
  CHECK(s.workload.batch_size.sizes() == std::vector<std::int64_t>{1, 2, 8});
  CHECK(s.workload.batch_size.probabilities()[1] == Approx(0.5));
  std::string trace = kBase;
  trace.replace(trace.find("arrival = \"poisson\"\nrate_qps = 1000\nrequests = 100"), 50,
                "arrival = \"trace\"\ntrace_file = \"arrivals.csv\"");
  const Scenario t = npusim::test::scenario_from_text(trace);
  CHECK(t.workload.requests == 3);
  CHECK(t.workload.trace[1].arrival_ns == 10500);
  CHECK(t.workload.trace[2].batch_size == 4);
  CHECK(t.workload.trace.size() == 3);
}

TEST_CASE("a scenario's hw overlay next to it changes the chip the run uses", "[scenario]") {
  npusim::test::write_temp("slow_host.toml", "[host]\nlaunch_aclnn_us = 20.0\n");
  std::string text = npusim::test::read_text(std::filesystem::path(NPUSIM_SOURCE_DIR) /
                                             "scenarios" / "mdc_validation.toml");
  text.replace(text.find("seed = "), 0, "overlay = \"slow_host.toml\"\n");
  const Scenario s = npusim::test::scenario_from_text(
      text, {"workload.requests=1000", "workload.warmup_requests=0"});
  const npusim::HwSpec hw =
      npusim::sim::load_scenario_hw(s, {std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"});
  CHECK(hw.host.launch_aclnn_us == 20.0);
  const npusim::sim::SimResult r = npusim::sim::simulate(s, hw);
  CHECK(r.service_ms_min == Approx((20.0 + 100.0) / 1e3));
}

TEST_CASE("an unknown chip is reported at the scenario's hw line, or at the command line",
          "[scenario]") {
  const std::vector<std::filesystem::path> dirs{std::filesystem::path(NPUSIM_SOURCE_DIR) /
                                                "hw_specs"};
  std::string text = kBase;
  text.replace(text.find("hw = \"ascend910b3\""), 18, "hw = \"ascend999\"");
  const Scenario in_file = npusim::test::scenario_from_text(text);
  try {
    (void)npusim::sim::load_scenario_hw(in_file, dirs);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 4);
    CHECK(e.pos().column == 6);
    CHECK_THAT(e.what(), Catch::Contains("[scenario].hw:"));
  }
  const Scenario overridden = npusim::test::scenario_from_text(kBase, {"scenario.hw=ascend999"});
  try {
    (void)npusim::sim::load_scenario_hw(overridden, dirs);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("<command line>: error: [scenario].hw:"));
  }
}

TEST_CASE("every scenario key is documented in docs/scenarios.md", "[scenario]") {
  const std::string doc =
      npusim::test::read_text(std::filesystem::path(NPUSIM_SOURCE_DIR) / "docs" / "scenarios.md");
  for (const std::string& key : npusim::sim::scenario_keys()) {
    const std::string section = key.substr(0, key.find('.'));
    const std::string name = key.substr(key.find('.') + 1);
    INFO(key);
    if (name == "op") {
      CHECK_THAT(doc, Catch::Contains("[[graph.op]]"));
    } else {
      CHECK_THAT(doc,
                 Catch::Contains("[" + section + "] " + name) || Catch::Contains("`" + name + "`"));
    }
  }
}

TEST_CASE("every scenario key is accepted by the loader", "[scenario]") {
  // One file per arrival kind between them sets every key.
  npusim::test::write_temp("keys_sizes.txt", "1\n2\n");
  npusim::test::write_temp("keys_trace.csv", "0\n5\n9\n");
  npusim::test::write_temp("keys_graph.toml",
                           "[graph]\nname = \"g\"\n[[graph.op]]\nname = \"a\"\ntype = \"Relu\"\n"
                           "shapes = \"B,8\"\ndtypes = \"FLOAT16\"\n");
  const std::string common = R"(
[scenario]
name = "keys"
hw = "ascend910b3"
overlay = []
seed = 3
[graph]
file = "keys_graph.toml"
[deployment]
streams = 2
cube_cores_per_stream = 4
vector_cores_per_stream = 8
max_gear = 4
batch_window_us = 10
split_oversize = true
[contention]
host = false
scheduler = false
l2_bandwidth = false
core_limit_bypass = false
[target]
p99_ms = 1
traffic_qps = 100
)";
  const Scenario poisson = npusim::test::scenario_from_text(
      common +
      "[workload]\narrival = \"poisson\"\nrate_qps = 10\nrequests = 5\n"
      "warmup_requests = 1\nbatch_size = \"keys_sizes.txt\"\ninput_bytes_per_sample = 64\n");
  const Scenario closed = npusim::test::scenario_from_text(
      common + "[workload]\narrival = \"closed\"\nconcurrency = 2\nrequests = 5\nbatch_size = 3\n");
  const Scenario trace = npusim::test::scenario_from_text(
      common +
      "[workload]\narrival = \"trace\"\ntrace_file = \"keys_trace.csv\"\nbatch_size = 2\n");
  CHECK(poisson.workload.input_bytes_per_sample == 64);
  CHECK(closed.workload.concurrency == 2);
  CHECK(trace.workload.requests == 3);
  CHECK(poisson.deployment.gears.size() == 4);
  // and each runs
  const npusim::HwSpec hw = npusim::test::chip("ascend910b3");
  for (const Scenario* s : {&poisson, &closed, &trace}) {
    const npusim::sim::SimResult r = npusim::sim::simulate(*s, hw);
    CHECK(r.requests == s->workload.requests);
  }
}

TEST_CASE("bad lines in size and trace files are reported at their line", "[scenario]") {
  npusim::test::write_temp("bad_sizes.txt", "1\n2, x\n");
  npusim::test::write_temp("bad_trace.csv", "0,1\nsoon,2\n");
  std::string sizes = kBase;
  sizes.replace(sizes.find("batch_size = { 1 = 3, 8 = 1 }"), 29, "batch_size = \"bad_sizes.txt\"");
  const auto p = npusim::test::write_temp("uses_bad_sizes.toml", sizes);
  CHECK_THAT(error_of(p),
             Catch::Contains("bad_sizes.txt:2:") &&
                 Catch::Contains("batch size 'x': expected an integer in [1, 1048576]"));
  std::string trace = kBase;
  trace.replace(trace.find("arrival = \"poisson\"\nrate_qps = 1000\nrequests = 100"), 50,
                "arrival = \"trace\"\ntrace_file = \"bad_trace.csv\"");
  const auto t = npusim::test::write_temp("uses_bad_trace.toml", trace);
  CHECK_THAT(error_of(t), Catch::Contains("bad_trace.csv:2:1") &&
                              Catch::Contains("arrival time 'soon': expected microseconds >= 0"));
}

TEST_CASE("a rate or a trace time beyond the simulator's clock is an error at its key",
          "[scenario]") {
  // 100 requests at 1e-9 QPS would span 3 million years; the event queue's clock holds 106 days.
  std::string slow = kBase;
  slow.replace(slow.find("rate_qps = 1000"), 15, "rate_qps = 1e-9");
  const auto p = npusim::test::write_temp("slow_rate.toml", slow);
  CHECK_THAT(error_of(p), Catch::Contains("slow_rate.toml:21:12") &&
                              Catch::Contains("[workload].rate_qps: 1e-09 QPS spreads") &&
                              Catch::Contains("the least rate for them is"));
  // The same from --set names the option.
  CHECK_THAT(error_of(npusim::test::write_temp("base.toml", kBase), {"workload.rate_qps=1e-9"}),
             Catch::Contains("workload.rate_qps=1e-9") && Catch::Contains("1e-09 QPS spreads"));
  // The least rate itself loads and runs to the end (a tenth of the clock, 50 arrivals at least).
  const double least = npusim::sim::min_rate_qps(100);
  CHECK(least == Approx(100.0 / 9.2e5));
  CHECK(npusim::sim::min_rate_qps(1) == Approx(50.0 / 9.2e5));
  CHECK(npusim::sim::min_rate_qps(1'000'000) == Approx(1e6 / 9.2e5));
  const Scenario s = load_scenario(npusim::test::write_temp("base.toml", kBase),
                                   {fmt::format("workload.rate_qps={}", least * 1.0001)});
  const npusim::sim::SimResult r = npusim::sim::simulate(s, npusim::test::chip(s.info.hw));
  CHECK(r.requests == 100);
  // A trace arrival past half the clock (the run goes on after it).
  npusim::test::write_temp("late_trace.csv", "0,1\n5e12,2\n");
  std::string trace = kBase;
  trace.replace(trace.find("arrival = \"poisson\"\nrate_qps = 1000\nrequests = 100"), 50,
                "arrival = \"trace\"\ntrace_file = \"late_trace.csv\"");
  CHECK_THAT(error_of(npusim::test::write_temp("uses_late_trace.toml", trace)),
             Catch::Contains("late_trace.csv:2:1") &&
                 Catch::Contains("past the simulator's horizon"));
}

TEST_CASE("switching the arrival kind with --set tolerates the file's keys of the old kind",
          "[scenario]") {
  const Scenario s = npusim::test::scenario_from_text(
      kBase, {"workload.arrival=closed", "workload.concurrency=4"});
  CHECK(s.workload.arrival == ArrivalKind::kClosed);
  CHECK(s.workload.concurrency == 4);
  const auto p = npusim::test::write_temp("switch.toml", kBase);
  CHECK_THAT(
      error_of(p, {"workload.arrival=closed", "workload.concurrency=4", "workload.rate_qps=5"}),
      Catch::Contains("--set 'workload.rate_qps=5': [workload].rate_qps: only used with "
                      "arrival = \"poisson\""));
  CHECK_THAT(error_of(p, {"workload.concurrency=4"}),
             Catch::Contains("[workload].concurrency: only used with arrival = \"closed\""));
}

TEST_CASE("a measured block dim above the chip's cores holds every core, with a warning, and a "
          "fractional one is an error at the op",
          "[scenario]") {
  std::string text = kBase;
  text.replace(text.find("dtypes = \"FLOAT16\"\n"), 19,
               "dtypes = \"FLOAT16\"\nduration_us = 5.0\nattrs = { block_dim = 48 }\n");
  const Scenario s = npusim::test::scenario_from_text(text);
  // profiles show kernels launched with more logical blocks than cores (256 on 48): they run in
  // waves on the whole pool
  npusim::sim::check_scenario_fits(s, npusim::test::chip("ascend910b3"));
  const npusim::sim::SimResult r = npusim::sim::simulate(s, npusim::test::chip("ascend910b3"));
  bool warned = false;
  for (const auto& w : r.warnings) {
    warned |= w.find("block_dim 48 exceeds the 40 vector cores of ascend910b3") != std::string::npos;
  }
  CHECK(warned);
  std::string frac = kBase;
  frac.replace(frac.find("dtypes = \"FLOAT16\"\n"), 19,
               "dtypes = \"FLOAT16\"\nduration_us = 5.0\nattrs = { block_dim = 2.5 }\n");
  try {
    npusim::sim::check_scenario_fits(npusim::test::scenario_from_text(frac),
                                     npusim::test::chip("ascend910b3"));
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 8);
    CHECK_THAT(e.what(), Catch::Contains("attribute block_dim = 2.5: expected a positive integer"));
  }
}
