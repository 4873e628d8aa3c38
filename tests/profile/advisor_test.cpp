// Each advisor rule on the crafted msprof profile (tests/data/profiles/msprof_crafted), whose
// answers are worked out by hand below from its 13 rows:
//
//  row  op (stream)                 start  dur   wait  notes
//   1   MatMulV2 (5)                  0     20     0   AI_CORE, 20 blocks, 200000 cycles, aicore 10us, util 50 %
//   2   Add (5)                      20     10     0   aiv mte2 ratio 0.9, mte2 2.0 us, 2 x 1024x256 fp16
//   3   Cast_1 (5)                   30      5     0   aclop-style, 100x33 fp16 (66-byte rows), mte2 0.85 / 1.0 us
//   4   NonZero (5)                  35      5     0
//   5   Slice (5)                   140     10   100   after NonZero: dynamic-shape wait
//   6   Cast_1 (5)                  250      5   100   aclop, shapes now 200x33: recompilation
//   7   ScatterNdUpdate (5)         255   1500     0   AI_CPU, INT64 indices, > 1000 us
//   8   Mul (5)                    1815      5    60   right after the AI CPU op
//   9   hcom_allReduce (N/A)       1820    100     0   communication
//  10   MatMulV2 (7)               1830     20     0   as row 1
//  11-13 Mul (5)          1925, 1930, 1935   5,5,25    mean of the 4 Mul calls 10, max 25
//
// Compute: 12 ops, 1615 us. Busy intervals [0,40) [140,150) [250,1755) [1815,1920) [1925,1960):
// 1695 us over a 1960 us span, idle 265 us = 13.5 %.
#include "profile/advisor.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "profile/discover.h"
#include "advisor_crafted.h"
#include "test_files.h"

using namespace npusim::profile;
using npusim::test::find;

namespace {

AnalyzeOptions crafted_options() {
  AnalyzeOptions o;
  o.chip.hbm_gbps = 1000;
  o.chip.vector_cores = 40;  // the block-dim check judges vector kernels against it
  o.chip.pcie_gbps = 16;
  o.chip.pcie_efficiency = 0.8;
  o.chip.bandwidth_source = "test";
  return o;
}

Report crafted(const AnalyzeOptions& o = crafted_options()) {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/msprof_crafted");
  REQUIRE(d.profiles.size() == 1);
  return analyze(d.profiles.front(), o);
}

double ev(const Finding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.key == key && e.number) return *e.number;
  }
  FAIL("no numeric evidence " << key);
  return 0;
}

}  // namespace

TEST_CASE("totals, op types and the timeline of the crafted profile", "[advisor]") {
  const Report r = crafted();
  CHECK(r.producer == "msprof");
  CHECK(r.ops == 12);
  CHECK(r.total_time_us == Approx(1615));
  CHECK(r.communication_ops == 1);
  CHECK(r.communication_time_us == Approx(100));
  CHECK(r.wait_time_us == Approx(265));  // 100 + 100 + 60 + 5
  REQUIRE(r.op_types.size() == 7);
  CHECK(r.op_types[0].type == "ScatterNdUpdate");
  CHECK(r.op_types[0].share == Approx(1500.0 / 1615));
  const auto mul = std::find_if(r.op_types.begin(), r.op_types.end(),
                                [](const TypeStat& t) { return t.type == "Mul"; });
  REQUIRE(mul != r.op_types.end());
  CHECK(mul->count == 4);
  CHECK(mul->mean_us() == Approx(10));
  CHECK(mul->min_us == 5);
  CHECK(mul->max_us == 25);
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].span_us == Approx(1960));
  CHECK(r.steps[0].busy_us == Approx(1695));
  CHECK(r.steps[0].idle_us == Approx(265));
}

TEST_CASE("the op type above 40 % of compute time is flagged with its statistics", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "op_type_share");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"ScatterNdUpdate"});
  CHECK(f->time_us == Approx(1500));
  CHECK(f->severity == "high");  // 1500 / 1960 of the step
  CHECK(ev(*f, "count") == 1);
  CHECK(ev(*f, "share") == Approx(1500.0 / 1615));
  // Only one type is above the threshold.
  CHECK(std::count_if(r.findings.begin(), r.findings.end(),
                      [](const Finding& x) { return x.check == "op_type_share"; }) == 1);
}

TEST_CASE("raising the share threshold above the top type removes the finding", "[advisor]") {
  AnalyzeOptions o = crafted_options();
  o.thresholds.type_share = 0.95;
  const Report r = crafted(o);
  CHECK(find(r, "op_type_share") == nullptr);
}

TEST_CASE("ops over 1000 us are listed", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "long_ops");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"ScatterNdUpdate_7"});
  CHECK(f->time_us == Approx(1500));
}

TEST_CASE("a kernel whose max is far above its mean is a call-site problem", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "max_over_mean");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"aclnnMul_MulAiCore_Mul"});
  CHECK(f->time_us == Approx(15));  // max 25 - mean 10
  CHECK(f->severity == "low");
}

TEST_CASE("task waits are attributed to their likely causes", "[advisor]") {
  const Report r = crafted();
  const Finding* dyn = find(r, "task_wait", "after_dynamic_shape");
  REQUIRE(dyn != nullptr);
  CHECK(dyn->ops == std::vector<std::string>{"aclnnSlice_SliceAiCore_Slice"});
  CHECK(dyn->time_us == Approx(100));
  CHECK(dyn->severity == "medium");
  const Finding* rec = find(r, "task_wait", "recompilation");
  REQUIRE(rec != nullptr);
  CHECK(rec->ops == std::vector<std::string>{"Cast_1"});
  CHECK(rec->time_us == Approx(100));
  CHECK_THAT(rec->advice.front(), Catch::Contains("aclnn"));
  // api_statistic's aclopCompileAndExecute backs it up.
  const auto api = std::find_if(rec->evidence.begin(), rec->evidence.end(), [](const Evidence& e) {
    return e.key == "api_statistic aclopCompileAndExecute";
  });
  REQUIRE(api != rec->evidence.end());
  CHECK_THAT(api->text, Catch::EndsWith("us in 2 calls on the host"));
  const Finding* cpu = find(r, "task_wait", "after_aicpu");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->ops == std::vector<std::string>{"aclnnMul_MulAiCore_Mul"});
  CHECK(cpu->time_us == Approx(60));
  // The 5 us wait of row 11 is under the 50 us threshold: no host-launch finding.
  CHECK(find(r, "task_wait", "host_launch") == nullptr);
}

TEST_CASE("AI CPU ops are listed with int64 advice", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "aicpu");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"ScatterNdUpdate"});
  CHECK(f->time_us == Approx(1500));
  CHECK_THAT(f->advice.front(), Catch::Contains("INT64") && Catch::Contains("int32"));
}

TEST_CASE("cube utilisation comes from cycles, with cores and clock inferred", "[advisor]") {
  const Report r = crafted();
  // 200000 cycles / (10 us x 20 blocks) = 1000 MHz; 200000 / (1000 x 20 us x 50 %) = 20 cores.
  REQUIRE(r.chip.freq_mhz.has_value());
  CHECK(*r.chip.freq_mhz == 1000);
  REQUIRE(r.chip.cube_cores.has_value());
  CHECK(*r.chip.cube_cores == 20);
  REQUIRE(r.steps[0].cube_utilization.has_value());
  CHECK(*r.steps[0].cube_utilization == Approx(400000.0 / (1960 * 20 * 1000)));
  const auto mm = std::find_if(r.op_types.begin(), r.op_types.end(),
                               [](const TypeStat& t) { return t.type == "MatMulV2"; });
  REQUIRE(mm->cube_utilization.has_value());
  CHECK(*mm->cube_utilization == Approx(0.5));
  const Finding* f = find(r, "cube_utilization");
  REQUIRE(f != nullptr);
  CHECK(f->severity == "info");
}

TEST_CASE("a chip given by the user is used as is", "[advisor]") {
  AnalyzeOptions o = crafted_options();
  o.chip.cube_cores = 40;
  o.chip.freq_mhz = 2000;
  o.chip_given = true;
  const Report r = crafted(o);
  CHECK(*r.steps[0].cube_utilization == Approx(400000.0 / (1960 * 40 * 2000)));
}

TEST_CASE("MTE2-bound ops get their achieved bandwidth and alignment", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "memory_bound");
  REQUIRE(f != nullptr);
  // Add: 1 MiB in / 2 us = 524.288 GB/s -> 10 x (1 - 0.524288) at stake;
  // Cast: 6600 B / 1 us = 6.6 GB/s -> 5 x (1 - 0.0066).
  CHECK(f->time_us == Approx(10 * (1 - 0.524288) + 5 * (1 - 0.0066)));
  REQUIRE(f->ops.size() == 2);
  CHECK(f->ops[0] == "Cast_1");
  CHECK(ev(*f, "calls") == 2);  // Cast_1 is one kernel per shape: the 100x33 call
  bool saw_unaligned = false, saw_bw = false;
  for (const auto& e : f->evidence) {
    if (e.key == "Cast_1") saw_unaligned = e.text.find("NOT aligned") != std::string::npos;
    if (e.key == "aclnnAdd_AddAiCore_Add") saw_bw = e.text.find("524 GB/s") != std::string::npos;
  }
  CHECK(saw_unaligned);
  CHECK(saw_bw);
  CHECK_THAT(f->advice.front(), Catch::Contains("32 bytes"));
}

TEST_CASE("device idle gaps make a host-bound finding", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "idle_gaps");
  REQUIRE(f != nullptr);
  CHECK(f->time_us == Approx(265));
  CHECK(ev(*f, "idle_share") == Approx(265.0 / 1960));
  // The 5 us gap is below the listing threshold; the three others are listed, longest first.
  CHECK(f->ops == std::vector<std::string>{"aclnnSlice_SliceAiCore_Slice", "Cast_1",
                                           "aclnnMul_MulAiCore_Mul"});
}

TEST_CASE("PCIe below the link's achievable rate is reported", "[advisor]") {
  const Report r = crafted();
  const Finding* f = find(r, "pcie");
  REQUIRE(f != nullptr);
  CHECK(ev(*f, "achieved_gbps") == Approx(3.0));
  CHECK(ev(*f, "target_gbps") == Approx(12.8));
}

TEST_CASE("findings are ranked by the time at stake", "[advisor]") {
  const Report r = crafted();
  for (std::size_t i = 1; i < r.findings.size(); ++i) {
    CHECK(r.findings[i - 1].time_us >= r.findings[i].time_us);
  }
  // Every check runs but the byte-alignment one: raw msprof output has no communication.json.
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].check == "comm_byte_alignment");
}

TEST_CASE("checks that need a missing column are skipped and say so", "[advisor]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/torch_level0");
  const Report r = analyze(d.profiles.front(), AnalyzeOptions{});
  auto skipped = [&](const std::string& check) {
    return std::any_of(r.skipped.begin(), r.skipped.end(),
                       [&](const SkippedCheck& s) { return s.check == check; });
  };
  CHECK(skipped("cube_utilization"));
  CHECK(skipped("op_type_share"));
  CHECK(skipped("pipe_bound"));
  CHECK(skipped("pcie"));
  CHECK(r.ops == 2);
  CHECK(r.communication_ops == 1);
}

TEST_CASE("the JSON report is complete and carries the documented keys", "[advisor]") {
  const auto j = nlohmann::json::parse(render_json({crafted()}));
  CHECK(j["ops"] == 12);
  CHECK(j["total_time_us"].get<double>() == Approx(1615));
  REQUIRE(j["op_types"].size() == 7);
  CHECK(j["op_types"][0]["type"] == "ScatterNdUpdate");
  for (const char* k : {"count", "total_us", "mean_us", "min_us", "max_us", "share"}) {
    CHECK(j["op_types"][0].contains(k));
  }
  REQUIRE(j["utilization"].size() == 1);
  CHECK(j["utilization"][0]["cube_cores"] == 20);
  REQUIRE(j["findings"].size() > 5);
  for (const auto& f : j["findings"]) {
    for (const char* k : {"check", "severity", "ops", "time_us", "evidence", "advice"}) {
      CHECK(f.contains(k));
    }
  }
  CHECK(j["findings"][0]["check"] == "op_type_share");
}

TEST_CASE("the text and Markdown reports name the findings", "[advisor]") {
  const Report r = crafted();
  const std::string text = render_text({r});
  CHECK_THAT(text, Catch::Contains("12 compute ops") && Catch::Contains("[high]"));
  const std::string md = render_markdown({r});
  CHECK_THAT(md, Catch::StartsWith("# npusim analyze") && Catch::Contains("| ScatterNdUpdate |") &&
                     Catch::Contains("*Try:*"));
}

TEST_CASE("a folder of ranks gives one profile per rank", "[advisor][discover]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/torch_cann83");
  REQUIRE(d.profiles.size() == 2);
  CHECK(d.profiles[0].name == "rank_0_ascend_pt");
  CHECK(d.profiles[0].producer == "torch_npu");
  CHECK(d.profiles[0].profiler_info.has_value());
  CHECK(d.profiles[1].name == "rank_1_ascend_pt");
  const Report r = analyze(d.profiles[0], AnalyzeOptions{});
  CHECK(r.cann_version == "8.3.RC1");
  CHECK(r.steps.size() == 2);
  CHECK(r.ops == 6);
}

TEST_CASE("an op_statistic file alone gives op types and the share check", "[advisor][discover]") {
  const auto d = discover_profiles(
      npusim::test::data_dir() +
      "/profiles/msprof_crafted/PROF_000001_20260101000000000_CRAFTED/mindstudio_profiler_output/"
      "op_statistic_20260101000000.csv");
  const Report r = analyze(d.profiles.front(), AnalyzeOptions{});
  CHECK(r.ops == 12);
  CHECK(r.total_time_us == Approx(1615));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].check == "op_type_share");
  CHECK(r.findings[0].ops == std::vector<std::string>{"ScatterNdUpdate"});
}

TEST_CASE("a file without per-op times is refused with a pointer to what works", "[discover]") {
  try {
    (void)discover_profiles(
        npusim::test::data_dir() +
        "/profiles/msprof_crafted/PROF_000001_20260101000000000_CRAFTED/mindstudio_profiler_output/"
        "task_time_20260101000000.csv");
    FAIL("no error");
  } catch (const npusim::InputError& e) {
    CHECK_THAT(e.detail(), Catch::Contains("holds no per-op times"));
  }
}
