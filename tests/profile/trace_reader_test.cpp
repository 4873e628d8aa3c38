#include "profile/trace_reader.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "profile/discover.h"
#include "test_files.h"

using npusim::InputError;
using namespace npusim::profile;
namespace fs = std::filesystem;

namespace {

struct Read {
  std::vector<KernelRow> rows;
  KernelFileInfo info;
};

Read read(const fs::path& file, bool strict = false) {
  Read r;
  r.info = read_kernel_table(file, [&](const KernelRow& k) { r.rows.push_back(k); },
                             ReadOptions{strict});
  return r;
}

// Hardware track 7 (its process_name comes last), HCCL track 5, a host track 9.
const std::string kTrace = R"([
{"name":"MatMul_1","ph":"X","pid":7,"tid":2,"ts":"1736408883704643.212","dur":53.7410625,"args":{"Task Type":"AI_CORE","Physic Stream Id":2,"Task Id":11}},
{"name":"Odd {name} \"quoted\"","ph":"X","pid":7,"tid":3,"ts":1736408883704600.5,"dur":2,"args":{"Task Type":"AI_VECTOR_CORE","Task Id":12}},
{"name":"Notify Wait","ph":"X","pid":7,"tid":2,"ts":"1736408883704700.0","dur":1,"args":{"Task Type":"Notify Wait"}},
{"name":"aclnnDropout_DSAGenBitMask","ph":"X","pid":7,"tid":3,"ts":"1736408883704800.0","dur":3.4,"args":{"Task Type":"DSA_SQE"}},
{"name":"hcom_allReduce__1_0_1","ph":"X","pid":5,"tid":0,"ts":"1736408883704900.0","dur":100,"args":{"count":4}},
{"name":"Reduce_Inline","ph":"X","pid":5,"tid":1,"ts":"1736408883704900.0","dur":0.6,"args":{"task type":"Reduce_Inline"}},
{"name":"aten::add","ph":"X","pid":9,"tid":1,"ts":"1736408883704000.0","dur":10,"args":{}},
{"name":"AI Core Freq","ph":"C","pid":8,"ts":"1.0","args":{"MHz":1650}},
{"name":"AI Core Freq","ph":"C","pid":8,"ts":"2.0","args":{"MHz":1800}},
{"name":"process_name","ph":"M","pid":9,"args":{"name":"Python"}},
{"name":"process_name","ph":"M","pid":5,"args":{"name":"HCCL"}},
{"name":"process_name","ph":"M","pid":7,"args":{"name":"Ascend Hardware"}}
]
)";

}  // namespace

TEST_CASE("a timeline's hardware and HCCL tracks become rows in start order", "[trace]") {
  npusim::test::TempDir d;
  const auto p = d.write("trace_view.json", kTrace);
  const Read r = read(p);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.info.source_kind == "trace");
  CHECK(r.rows[0].name == "Odd {name} \"quoted\"");  // braces inside a string do not count
  CHECK(r.rows[0].start_ns == 1736408883704600500);   // a number ts keeps its digits
  CHECK(r.rows[0].kind == TaskKind::kVector);
  CHECK(r.rows[0].stream_id == 3);  // no stream id in args: the tid
  CHECK(r.rows[1].name == "MatMul_1");
  CHECK(r.rows[1].start_ns == 1736408883704643212);
  CHECK(r.rows[1].duration_us == 53.7410625);
  CHECK(r.rows[1].stream_id == 2);
  CHECK(r.rows[1].task_id == 11);
  CHECK(r.rows[1].line == 2);
  CHECK(r.rows[2].task_type == "DSA_SQE");
  CHECK(r.rows[2].kind == TaskKind::kOther);
  CHECK(r.rows[3].kind == TaskKind::kCommunication);
  CHECK(r.rows[3].duration_us == 100);
  REQUIRE(r.info.aicore_freq_mhz.has_value());
  CHECK(*r.info.aicore_freq_mhz == 1800);
  CHECK_THAT(r.info.layout, Catch::Contains("1 runtime tasks"));
}

TEST_CASE("an object with traceEvents reads like the bare array", "[trace]") {
  npusim::test::TempDir d;
  const auto p = d.write("msprof_1.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":" + kTrace +
                                              ",\"otherData\":{\"v\":[1,{\"x\":2}]}}");
  CHECK(read(p).rows.size() == 4);
}

TEST_CASE("events longer than the read block and across its edge are whole", "[trace]") {
  npusim::test::TempDir d;
  std::string text = "[\n";
  const int n = 60000;  // ~8 MB: two block edges
  for (int i = 0; i < n; ++i) {
    text += R"({"name":"K)" + std::to_string(i) + R"(","ph":"X","pid":1,"tid":2,"ts":")" +
            std::to_string(1000000 + i) + R"(.5","dur":1.5,"args":{"Task Type":"AI_CORE","pad":")" +
            std::string(static_cast<std::size_t>(i % 200), 'x') + "\"}},\n";
  }
  text += R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"Ascend Hardware"}}])";
  const auto p = d.write("trace_view.json", text);
  const Read r = read(p);
  REQUIRE(r.rows.size() == static_cast<std::size_t>(n));
  CHECK(r.info.broken_rows == 0);
  CHECK(r.rows.back().name == "K" + std::to_string(n - 1));
  CHECK(r.rows.back().line == static_cast<std::uint32_t>(n + 1));
}

TEST_CASE("a cut or malformed timeline is read up to the damage, or fails with --strict",
          "[trace][damaged]") {
  npusim::test::TempDir d;
  SECTION("cut inside an event") {
    const std::string cut = kTrace.substr(0, kTrace.find("\"Notify Wait\"") + 20);
    const auto p = d.write("trace_view.json", cut);
    const Read r = read(p);
    CHECK(r.rows.size() == 2);  // no process names read: the Task Type events are taken
    REQUIRE(r.info.truncated.has_value());
    CHECK(*r.info.truncated == p.string() + ":4: error: the file ends inside an event: truncated");
    CHECK_THROWS_WITH(read(p, true), p.string() + ":4: error: the file ends inside an event: "
                                                  "truncated");
  }
  SECTION("a malformed event") {
    std::string bad = kTrace;
    bad.replace(bad.find("\"dur\":53.7410625"), 16, "\"dur\":53.7.4");
    const auto p = d.write("trace_view.json", bad);
    const Read r = read(p);
    CHECK(r.rows.size() == 3);
    CHECK(r.info.broken_rows == 1);
    CHECK_THAT(r.info.broken_row_messages.at(0), Catch::StartsWith(p.string() + ":2: error: "));
    CHECK_THROWS_AS(read(p, true), InputError);
  }
  SECTION("a duration beyond a day") {
    std::string bad = kTrace;
    bad.replace(bad.find("\"dur\":53.7410625"), 16, "\"dur\":1e300");
    const auto p = d.write("trace_view.json", bad);
    const Read r = read(p);
    CHECK(r.rows.size() == 3);
    REQUIRE(r.info.broken_rows == 1);
    CHECK_THAT(r.info.broken_row_messages.at(0),
               Catch::StartsWith(p.string() + ":2: error: ") && Catch::Contains("above one day"));
  }
  SECTION("not a trace at all") {
    const auto p = d.write("trace_view.json", "Op Name,OP Type\n");
    CHECK_THROWS_WITH(read(p), p.string() + ":1: error: expected a JSON array of trace events "
                                            "(or an object with \"traceEvents\")");
  }
  SECTION("mostly malformed") {
    const auto p = d.write("trace_view.json", "[{\"ph\":\"X\",},{\"a\":},{\"ph\":\"M\"}]");
    CHECK_THROWS_WITH(read(p), Catch::Contains("2 of 3 events are malformed"));
  }
}

TEST_CASE("a folder with only a timeline uses it as the per-op source", "[trace][discover]") {
  npusim::test::TempDir d;
  d.write("r_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", kTrace);
  const auto disc = discover_profiles(d.path());
  REQUIRE(disc.profiles.size() == 1);
  CHECK(disc.profiles.front().kernel_source == "trace");
  CHECK(disc.profiles.front().kernel_files.size() == 1);
}

TEST_CASE("shared timelines give the kernel table's device tasks", "[trace][real]") {
  // torch_npu's trace_view.json beside kernel_details.csv: same names, start times and count.
  const fs::path shared = NPUSIM_SHARED_PROFILES_DIR;
  std::error_code ec;
  if (!fs::is_directory(shared, ec)) return;  // ../shared/profiles absent: skipped
  std::size_t compared = 0;
  for (auto it = fs::recursive_directory_iterator(shared, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() != "trace_view.json") continue;
    const fs::path kd = it->path().parent_path() / "kernel_details.csv";
    if (!fs::exists(kd)) continue;
    INFO(it->path().string());
    std::map<std::int64_t, std::string> table;  // compute and other device tasks by start
    std::map<std::string, std::int64_t> comm;   // hcom ops by name
    (void)read_kernel_table(kd, [&](const KernelRow& r) {
      if (r.kind == TaskKind::kCommunication) {
        comm[r.name] = r.start_ns;
      } else {
        table[r.start_ns] = r.name;
      }
    });
    const Read t = read(it->path());
    CHECK(t.info.broken_rows == 0);
    std::size_t matched = 0, comm_matched = 0;
    for (const auto& r : t.rows) {
      if (r.kind == TaskKind::kCommunication) {
        // The HCCL track's start differs from kernel_details' by 1 ns on some ops.
        const auto m = comm.find(r.name);
        comm_matched += m != comm.end() && std::llabs(m->second - r.start_ns) <= 1000;
        continue;
      }
      const auto m = table.find(r.start_ns);
      matched += m != table.end() && m->second == r.name;
    }
    // Every kernel_details row is on the timeline at the same ns under the same name.
    CHECK(matched == table.size());
    CHECK(comm_matched == comm.size());
    ++compared;
  }
  CHECK(compared >= 1);
}
