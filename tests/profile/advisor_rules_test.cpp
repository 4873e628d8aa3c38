// The advisor's rules on crafted rows, one case per wrong statement of issue #17 and per rule
// the reference advisor has; each expected number is worked out by hand beside the rows.
#include <catch2/catch.hpp>

#include "advisor_crafted.h"

using namespace npusim::profile;
using npusim::test::comm;
using npusim::test::CraftedProfile;
using npusim::test::evidence;
using npusim::test::find;
using npusim::test::Row;
using npusim::test::row;

namespace {

// A step with a collective: compute [1000,1100), allReduce [1100,1400), Add [1150,1200) on the
// compute stream while it runs, TensorMove [1403,1423) after waiting 200 us (3 us after the
// collective ends), Mul [1600,1620) after waiting 150 us with no collective near.
//   span 620; computing 100 + 50 + 20 + 20 = 190; communication 300, of which 50 overlapped by
//   the Add, so exposed 250; free 620 - 190 - 250 = 180 = the idle time (union of all tasks 440).
std::vector<Row> step_with_collective() {
  Row mm = row("aclnnMm_MatMulV2", "MatMulV2", "AI_CORE", 1000, 100);
  Row add = row("aclnnAdd_Add", "Add", "AI_VECTOR_CORE", 1150, 50);
  Row move = row("aclnnCopy_TensorMove", "TensorMove", "AI_VECTOR_CORE", 1403, 20, 200);
  Row mul = row("aclnnMul_Mul", "Mul", "AI_VECTOR_CORE", 1600, 20, 150);
  return {mm, comm("hcom_allReduce__1", 1100, 300), add, move, mul};
}

}  // namespace

TEST_CASE("the step breakdown splits communication into exposed and overlapped", "[advisor]") {
  const Report r = CraftedProfile(step_with_collective()).analyze();
  REQUIRE(r.steps.size() == 1);
  const StepStat& s = r.steps[0];
  CHECK(s.has_communication);
  CHECK(s.span_us == Approx(620));
  CHECK(s.computing_us == Approx(190));
  CHECK(s.communication_us == Approx(300));
  CHECK(s.overlapped_communication_us == Approx(50));
  CHECK(s.exposed_communication_us == Approx(250));
  CHECK(s.free_us == Approx(180));
  CHECK(s.computing_us + s.exposed_communication_us + s.free_us == Approx(s.span_us));
  CHECK(s.idle_us == Approx(s.free_us));
}

TEST_CASE("exposed communication is a finding naming the costliest collective", "[advisor]") {
  const Report r = CraftedProfile(step_with_collective()).analyze();
  const Finding* f = find(r, "exposed_communication");
  REQUIRE(f != nullptr);
  CHECK(f->time_us == Approx(250));
  CHECK(f->severity == "high");  // 250 of 620 us
  CHECK(f->ops == std::vector<std::string>{"hcom_allReduce__1"});
  CHECK_THAT(evidence(*f, "hcom_allReduce__1"), Catch::StartsWith("250 us exposed of 300 us"));
}

TEST_CASE("no exposed-communication finding when compute covers the collective", "[advisor]") {
  Row mm = row("aclnnMm_MatMulV2", "MatMulV2", "AI_CORE", 1000, 500);
  const Report r = CraftedProfile({mm, comm("hcom_allReduce__1", 1100, 300)}).analyze();
  CHECK(r.steps[0].exposed_communication_us == Approx(0));
  CHECK(r.steps[0].overlapped_communication_us == Approx(300));
  CHECK(find(r, "exposed_communication") == nullptr);
}

TEST_CASE("a wait right after a collective is a wait on communication, not host launch",
          "[advisor]") {
  const Report r = CraftedProfile(step_with_collective()).analyze();
  const Finding* c = find(r, "task_wait", "communication");
  REQUIRE(c != nullptr);
  CHECK(c->ops == std::vector<std::string>{"aclnnCopy_TensorMove"});
  CHECK(c->time_us == Approx(200));
  CHECK_THAT(evidence(*c, "aclnnCopy_TensorMove"),
             Catch::Contains("starts 3.00 us after hcom_allReduce__1 ended"));
  const Finding* h = find(r, "task_wait", "host_launch");
  REQUIRE(h != nullptr);
  CHECK(h->ops == std::vector<std::string>{"aclnnMul_Mul"});
  CHECK(h->time_us == Approx(150));
}

TEST_CASE("a wait spent mostly while a collective runs is a wait on communication", "[advisor]") {
  // Mul waits [1200,1500): the collective [1100,1450) covers 250 of its 300 us.
  Row mm = row("aclnnMm_MatMulV2", "MatMulV2", "AI_CORE", 1000, 100);
  Row mul = row("aclnnMul_Mul", "Mul", "AI_VECTOR_CORE", 1500, 20, 300);
  const Report r = CraftedProfile({mm, comm("hcom_allGather__2", 1100, 350), mul}).analyze();
  const Finding* c = find(r, "task_wait", "communication");
  REQUIRE(c != nullptr);
  CHECK_THAT(evidence(*c, "aclnnMul_Mul"), Catch::Contains("ran during 83.3 % of the wait"));
  CHECK(find(r, "task_wait", "host_launch") == nullptr);
}

namespace {

Row cube(const std::string& name, double mac, double mte2, const std::string& shapes) {
  Row r = row(name, "MatMulV2", "AI_CORE", 0, 100);
  r.block = 20;
  r.shapes = shapes;
  r.dtypes = "DT_BF16;DT_BF16";
  r.mac = mac;
  r.aic_mte2 = mte2;
  r.aic_mte2_time = 100 * mte2;
  return r;
}
Row vector(const std::string& name, const std::string& type, double vec, double mte2, double mte3,
           const std::string& shapes = "1024,256;1024,256", const std::string& dtypes = "FLOAT16;FLOAT16") {
  Row r = row(name, type, "AI_VECTOR_CORE", 0, 100);
  r.shapes = shapes;
  r.dtypes = dtypes;
  r.vec = vec;
  r.aiv_mte2 = mte2;
  r.aiv_mte2_time = 100 * mte2;
  r.mte3 = mte3;
  return r;
}
// Lays rows one after another on the stream, 100 us apart.
std::vector<Row> laid_out(std::vector<Row> rows) {
  double t = 1000;
  for (auto& r : rows) r.start = t, t += 200;
  return rows;
}
const KernelBound* bound_of(const Report& r, const std::string& name) {
  for (const auto& k : r.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("each kernel is judged by its own pipes, overlap taken into account", "[advisor]") {
  Row scalar = cube("scalar_mm", 0.2, 0.3, "64,64;64,64");
  scalar.aic_scalar = 0.9;
  Row fix = cube("fix_mm", 0.5, 0.4, "128,128;128,128");
  fix.fixpipe = 0.8;
  Row stall = cube("stalled_mm", 0.7, 0.9, "256,256;256,256");
  stall.mte1 = 0.5;  // MAC + MTE1 + MTE2 = 2.1: they overlap, yet none is saturated
  Row fa = row("fa", "FlashAttentionScore", "MIX_AIC", 0, 100);
  fa.mac = 0.6, fa.vec = 0.75, fa.aic_mte2 = 0.5;
  const Report r = CraftedProfile(laid_out({
      cube("busy_mm", 0.84, 0.90, "4096,4096;4096,1024"),  // MAC 0.84: its loads overlap it
      cube("starved_mm", 0.30, 0.97, "4096,4096;4096,2048"),  // MTE2 0.97 >= 0.95
      vector("add", "Add", 0.2, 0.85, 0.1),                    // MTE2 0.85 >= 0.7
      vector("mul", "Mul", 0.75, 0.8, 0.1),                    // vector 0.75 >= 0.7 first
      vector("cast", "Cast", 0.4, 0.3, 0.3),                   // none saturated, sum 1.0
      vector("sub", "Sub", 0.1, 0.2, 0.1),                     // nothing busy
      scalar, fix, stall, fa})).analyze();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"busy_mm", "cube"}, {"starved_mm", "mte2"}, {"add", "mte2"},        {"mul", "vector"},
      {"cast", "serial"},  {"sub", "latency"},     {"scalar_mm", "scalar"}, {"fix_mm", "fixpipe"},
      {"stalled_mm", "stalled"}, {"fa", "vector"}};
  for (const auto& [name, bound] : expected) {
    INFO(name);
    const KernelBound* k = bound_of(r, name);
    REQUIRE(k != nullptr);
    CHECK(k->bound == bound);
  }
  CHECK(bound_of(r, "fa")->side == "mix");
  const Finding* mem = find(r, "memory_bound");
  REQUIRE(mem != nullptr);
  CHECK(std::count(mem->ops.begin(), mem->ops.end(), "busy_mm") == 0);
  CHECK(std::count(mem->ops.begin(), mem->ops.end(), "starved_mm") == 1);
  CHECK(std::count(mem->ops.begin(), mem->ops.end(), "fix_mm") == 1);
  REQUIRE(find(r, "scalar_bound") != nullptr);
  CHECK(find(r, "scalar_bound")->ops == std::vector<std::string>{"scalar_mm"});
  REQUIRE(find(r, "serial_pipes") != nullptr);
  CHECK(find(r, "serial_pipes")->time_us == Approx(100 * (1 - 0.4)));
  REQUIRE(find(r, "stalled_pipes") != nullptr);
  CHECK(find(r, "stalled_pipes")->time_us == Approx(100 * (1 - 0.9)));
  REQUIRE(find(r, "latency_bound") != nullptr);
}

TEST_CASE("aligned memory-bound kernels get no alignment advice", "[advisor]") {
  const Report r = CraftedProfile(laid_out({vector("add", "Add", 0.2, 0.85, 0.1)})).analyze();
  const Finding* f = find(r, "memory_bound");
  REQUIRE(f != nullptr);
  CHECK_THAT(evidence(*f, "add"), Catch::Contains("last axes 32-byte aligned"));
  for (const auto& a : f->advice) CHECK_THAT(a, !Catch::Contains("32 bytes"));
}

TEST_CASE("an unaligned memory-bound kernel gets the alignment advice", "[advisor]") {
  const Report r =
      CraftedProfile(laid_out({vector("abs", "Abs", 0.2, 0.85, 0.1, "100,33", "FLOAT16")}))
          .analyze();
  const Finding* f = find(r, "memory_bound");
  REQUIRE(f != nullptr);
  CHECK_THAT(evidence(*f, "abs"), Catch::Contains("NOT aligned: input 0 last axis 66 B"));
  CHECK_THAT(f->advice.front(), Catch::Contains("32 bytes"));
}

TEST_CASE("one-element inputs and Foreach tensor lists are not called unaligned", "[advisor]") {
  const Report r = CraftedProfile(laid_out({
      vector("muls", "Muls", 0.2, 0.85, 0.1, "1024,256;1", "FLOAT16;INT64"),
      vector("foreach", "ForeachMulScalar", 0.2, 0.85, 0.1, "3,3;5;7,9;1", "FLOAT"),
  })).analyze();
  const Finding* f = find(r, "memory_bound");
  REQUIRE(f != nullptr);
  CHECK_THAT(evidence(*f, "muls"), Catch::Contains("last axes 32-byte aligned"));
  CHECK_THAT(evidence(*f, "foreach"), Catch::Contains("last axes 32-byte aligned"));
  for (const auto& a : f->advice) CHECK_THAT(a, !Catch::Contains("32 bytes"));
}

namespace {

// An aclop-style Cast called on two shapes, waiting 100 us before the second.
std::vector<Row> recompiled_cast() {
  Row a = row("Cast_1", "Cast", "AI_VECTOR_CORE", 1000, 5, 0, 8, "100,32", "FLOAT16");
  Row b = row("Cast_1", "Cast", "AI_VECTOR_CORE", 1200, 5, 100, 8, "200,32", "FLOAT16");
  return {a, b};
}
const char* const kApiHeader = "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n";

}  // namespace

TEST_CASE("no recompilation without compile calls in api_statistic", "[advisor]") {
  const std::string api = std::string(kApiHeader) + "host,runtime,EventRecord,60,12,5,4,6,0.5\n";
  const Report r = CraftedProfile(recompiled_cast(), {{"api_statistic.csv", api}}).analyze();
  CHECK(find(r, "task_wait", "recompilation") == nullptr);
  REQUIRE(find(r, "task_wait", "host_launch") != nullptr);
  CHECK(find(r, "task_wait", "host_launch")->time_us == Approx(100));
}

TEST_CASE("recompilation with api_statistic compile calls says so", "[advisor]") {
  const std::string api =
      std::string(kApiHeader) + "host,acl,aclopCompileAndExecute,900.5,2,450.25,400.5,500,2500\n";
  const Report r = CraftedProfile(recompiled_cast(), {{"api_statistic.csv", api}}).analyze();
  const Finding* f = find(r, "task_wait", "recompilation");
  REQUIRE(f != nullptr);
  CHECK(f->time_us == Approx(100));
  CHECK_THAT(evidence(*f, "evidence"), Catch::StartsWith("api_statistic compile calls"));
  CHECK_THAT(evidence(*f, "api_statistic aclopCompileAndExecute"),
             Catch::EndsWith("in 2 calls on the host"));
}

TEST_CASE("recompilation without api_statistic says it is inferred", "[advisor]") {
  const Report r = CraftedProfile(recompiled_cast()).analyze();
  const Finding* f = find(r, "task_wait", "recompilation");
  REQUIRE(f != nullptr);
  CHECK_THAT(evidence(*f, "evidence"), Catch::StartsWith("no api_statistic in the profile"));
}

TEST_CASE("% of HBM uses the bandwidth of the chip the profile's cores and clock match",
          "[advisor]") {
  // The crafted msprof profile measures 20 cube cores at 1000 MHz; of the known chips the one
  // with 20 cores and the nearest nominal clock at or above 1000 MHz is "slow" (800 GB/s).
  AnalyzeOptions o;
  auto chip = [](const char* name, int cores, double mhz, double hbm) {
    ChipFigures c;
    c.name = name;
    c.cube_cores = cores;
    c.vector_cores = 2 * cores;
    c.freq_mhz = mhz;
    c.hbm_gbps = hbm;
    return c;
  };
  o.chip = chip("default", 20, 1800, 1600);
  o.known_chips = {chip("fast", 20, 1800, 1600), chip("slow", 20, 1500, 800),
                   chip("other", 24, 1000, 3000)};
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/msprof_crafted");
  const Report r = analyze(d.profiles.at(0), o);
  CHECK(r.chip.name == "slow");
  REQUIRE(r.chip.hbm_gbps.has_value());
  CHECK(*r.chip.hbm_gbps == 800);
  CHECK(r.chip.vector_cores == 40);
  const Finding* f = find(r, "memory_bound");
  REQUIRE(f != nullptr);
  // Add: 1 MiB in 2 us = 524 GB/s = 65.5 % of 800 GB/s.
  CHECK_THAT(evidence(*f, "aclnnAdd_AddAiCore_Add"), Catch::Contains("65.5 % of 800 GB/s HBM, slow"));
}

TEST_CASE("the cube utilisation label says it measures core-active time", "[advisor]") {
  const auto d = discover_profiles(npusim::test::data_dir() + "/profiles/msprof_crafted");
  const Report r = analyze(d.profiles.at(0), AnalyzeOptions{});
  const Finding* f = find(r, "cube_utilization");
  REQUIRE(f != nullptr);
  CHECK_THAT(f->title, Catch::StartsWith("cube cores active"));
  CHECK_THAT(evidence(*f, "MatMulV2"), Catch::StartsWith("cube cores active 50.0 % while it runs"));
}

TEST_CASE("block dim: a last partial wave leaves cores idle", "[advisor]") {
  // 48 blocks on 40 vector cores: 2 waves, the last with 8 blocks: 1 - 48 / 80 = 40 % idle.
  AnalyzeOptions o;
  o.chip.cube_cores = 20, o.chip.vector_cores = 40, o.chip.freq_mhz = 1800;
  o.chip_given = true;
  Row partial = row("aclnnAdd_Add", "Add", "AI_VECTOR_CORE", 1000, 100);
  partial.block = 48;
  Row full = row("aclnnMul_Mul", "Mul", "AI_VECTOR_CORE", 1200, 100);
  full.block = 40;
  Row tiny = row("aclnnSub_Sub", "Sub", "AI_VECTOR_CORE", 1400, 5);
  tiny.block = 1;  // too short to matter: few blocks are right for it
  const Report r = CraftedProfile({partial, full, tiny}).analyze(o);
  const Finding* f = find(r, "block_dim");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"aclnnAdd_Add"});
  CHECK(f->time_us == Approx(40));
  CHECK_THAT(evidence(*f, "aclnnAdd_Add"), Catch::Contains("2 waves, the last with 8 blocks"));
}

TEST_CASE("shape affinity: cube and attention axes the kernels pad", "[advisor]") {
  Row mm = row("mm", "MatMulV2", "AI_CORE", 1000, 100, 0, 20, "4096,1000;1000,4096", "DT_BF16;DT_BF16");
  Row ok = row("mm_ok", "MatMulV2", "AI_CORE", 1200, 100, 0, 20, "4096,1024;1024,4096", "DT_BF16;DT_BF16");
  // SBH query [S=4096, B=1, H=2048] with softmax statistics [1, 16, 4096, 8]: D = 128, S = 4096.
  Row fa = row("fa", "FlashAttentionScore", "MIX_AIC", 1400, 100, 0, 20,
         "4096,1,2048;4096,1,1024;4096,1,1024", "DT_BF16;DT_BF16;DT_BF16");
  fa.output_shapes = "1,16,4096,8;1,16,4096,8;;4096,1,2048";
  Row fa_bad = fa;
  fa_bad.name = "fa_bad";
  fa_bad.start = 1600;
  fa_bad.dur = 200;
  fa_bad.shapes = "1000,1,2048;1000,1,1024;1000,1,1024";
  fa_bad.output_shapes = "1,16,1000,8;1,16,1000,8;;1000,1,2048";
  const Report r = CraftedProfile({mm, ok, fa, fa_bad}).analyze();
  const Finding* f = find(r, "shape_affinity");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"fa_bad", "mm"});  // the same padding, longer first
  CHECK_THAT(evidence(*f, "mm"), Catch::Contains("input 0 inner axis 1000 not a multiple of 256"));
  CHECK_THAT(evidence(*f, "fa_bad"), Catch::Contains("sequence S = 1000 not a multiple of 128"));
  // mm: 100 us x (1 - 1000/1024); fa_bad: 200 us x (1 - 1000/1024).
  CHECK(f->time_us == Approx(300 * (1 - 1000.0 / 1024)));
}

TEST_CASE("fused replacements for unfused RMSNorm, rotary and SwiGLU sequences", "[advisor]") {
  std::vector<Row> rows;
  double t = 1000;
  for (const char* type : {"Pows", "ReduceMean", "Adds", "Rsqrt", "Mul",  // RMSNorm
                           "Neg", "ConcatD", "Mul", "Add",                // rotary
                           "Swish", "Mul"}) {                             // SwiGLU
    rows.push_back(row(std::string("op_") + type, type, "AI_VECTOR_CORE", t, 10));
    t += 20;
  }
  const Report r = CraftedProfile(rows).analyze();
  const Finding* f = find(r, "fused_ops");
  REQUIRE(f != nullptr);
  CHECK_THAT(evidence(*f, "RMSNorm"), Catch::Contains("torch_npu.npu_rms_norm"));
  CHECK_THAT(evidence(*f, "rotary embedding"), Catch::Contains("torch_npu.npu_rotary_mul"));
  CHECK_THAT(evidence(*f, "SwiGLU"), Catch::Contains("torch_npu.npu_swiglu"));
  // Each sequence would run as one kernel: 5 + 4 + 2 ops of 10 us save 4 + 3 + 1 of them.
  CHECK(f->time_us == Approx(80));
}

TEST_CASE("host-bound repeated sequences count every op once", "[advisor]") {
  // Mul, Add repeated 6 times, 5 us each with 20 us gaps: each window [Mul..Add] is 30 us wall
  // of which 10 us device. Windows of other lengths (Mul-Add-Mul...) overlap them and must not
  // add to the total.
  std::vector<Row> rows;
  double t = 1000;
  for (int i = 0; i < 6; ++i) {
    rows.push_back(row("aclnnMul_Mul", "Mul", "AI_VECTOR_CORE", t, 5));
    rows.push_back(row("aclnnAdd_Add", "Add", "AI_VECTOR_CORE", t + 25, 5));
    t += 50;
  }
  const Report r = CraftedProfile(rows).analyze();
  const Finding* f = find(r, "host_bound_sequences");
  REQUIRE(f != nullptr);
  REQUIRE(!f->ops.empty());
  double span = 0;
  for (const auto& s : r.steps) span += s.span_us;
  CHECK(f->time_us <= span);
  // Whatever sequence is chosen first claims its ops: no op is counted twice, so the host time
  // is at most the step's gaps (5 gaps of 20 us inside pairs + 5 of 20 us between them).
  CHECK(f->time_us <= 11 * 20 + 1e-9);
}

TEST_CASE("environment settings are raised from profiler_metadata.json", "[advisor]") {
  const std::string meta =
      R"({"ENV_VARIABLES": {"ASCEND_LAUNCH_BLOCKING": "1", "ASCEND_GLOBAL_LOG_LEVEL": "3",
          "ACLNN_CACHE_LIMIT": "", "HCCL_ALGO": ""}})";
  const Report r =
      CraftedProfile(step_with_collective(), {{"../profiler_metadata.json", meta}}).analyze();
  const Finding* f = find(r, "environment");
  REQUIRE(f != nullptr);
  CHECK(std::count(f->ops.begin(), f->ops.end(), "ASCEND_LAUNCH_BLOCKING") == 1);
  CHECK(std::count(f->ops.begin(), f->ops.end(), "ASCEND_GLOBAL_LOG_LEVEL") == 0);
  // Idle 180 of 620 us: host-bound, so the unset aclnn cache is raised too.
  CHECK(std::count(f->ops.begin(), f->ops.end(), "ACLNN_CACHE_LIMIT") == 1);
}

TEST_CASE("a falling AI Core clock is found on the timeline's counter track", "[advisor]") {
  // 1800 MHz until t = 1300 us, then 1500 MHz: the Mul at 1600 runs 16.7 % slow.
  const std::string trace = R"([
    {"name": "AI Core Freq", "ph": "C", "ts": "1000.000", "pid": 1, "tid": 0, "args": {"MHz": 1800}},
    {"name": "AI Core Freq", "ph": "C", "ts": "1300.000", "pid": 1, "tid": 0, "args": {"MHz": 1500}}
  ])";
  const Report r = CraftedProfile(step_with_collective(), {{"trace_view.json", trace}}).analyze();
  const Finding* f = find(r, "aicore_freq");
  REQUIRE(f != nullptr);
  CHECK(std::count(f->ops.begin(), f->ops.end(), "Mul") == 1);
  CHECK(std::count(f->ops.begin(), f->ops.end(), "MatMulV2") == 0);
  // TensorMove and Mul, 20 us each at 1500 of 1800 MHz.
  CHECK(f->time_us == Approx(2 * 20 * (1 - 1500.0 / 1800)));
}

namespace {

std::string communication_json(const std::string& sizes) {
  return R"j({"step1": {"p2p": {}, "collective": {
    "hcom_allReduce__1@9": {"Communication Time Info": {"Start Timestamp(us)": 1100,
      "Elapse Time(ms)": 0.3, "Transit Time(ms)": 0.1, "Wait Time(ms)": 0.15,
      "Synchronization Time(ms)": 0.1, "Idle Time(ms)": 0.05},
     "Communication Bandwidth Info": {
      "HCCS": {"Transit Size(MB)": 3.0, "Transit Time(ms)": 0.1, "Bandwidth(GB/s)": 30,
               "Large Packet Ratio": 0, "Size Distribution": )j" + sizes + R"j(},
      "SDMA": {"Transit Size(MB)": 3.0, "Transit Time(ms)": 0.1, "Bandwidth(GB/s)": 30,
               "Large Packet Ratio": 0, "Size Distribution": {}}}},
    "Total Op Info": {}}}})j";
}

}  // namespace

TEST_CASE("communication transfers off the 512-byte grid are found", "[advisor]") {
  // 1.937312 MB = 1937312 B = 3783 x 512 + 416; 2.064384 MB = 4032 x 512.
  const Report r = CraftedProfile(step_with_collective(),
                                  {{"communication.json",
                                    communication_json(
                                        R"({"2.064384": [12, 0.08], "1.937312": [2, 0.02]})")}})
                       .analyze();
  const Finding* f = find(r, "comm_byte_alignment");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"hcom_allReduce__1"});
  CHECK(f->time_us == Approx(20));
  CHECK_THAT(evidence(*f, "hcom_allReduce__1 HCCS 1937312 B"),
             Catch::StartsWith("2 transfers of 1937312 B (416 B past"));
  // The same collective's exposed time is told with communication.json's split.
  const Finding* e = find(r, "exposed_communication");
  REQUIRE(e != nullptr);
  CHECK_THAT(evidence(*e, "hcom_allReduce__1"), Catch::Contains("wait 150 us"));
}

TEST_CASE("aligned transfers make no byte-alignment finding, and small collectives do",
          "[advisor]") {
  const Report r =
      CraftedProfile(step_with_collective(),
                     {{"communication.json", communication_json(R"({"2.064384": [12, 0.08]})")}})
          .analyze();
  CHECK(find(r, "comm_byte_alignment") == nullptr);
  // The one collective moves 3 MB over SDMA, under 16 MB: 1 of 1 is small.
  const Finding* f = find(r, "comm_small_packets");
  REQUIRE(f != nullptr);
  CHECK(f->ops == std::vector<std::string>{"hcom_allReduce__1"});
  CHECK(f->time_us == Approx(300));
}

TEST_CASE("a malformed communication.json is noted with its line and the rest still runs",
          "[advisor]") {
  const Report r = CraftedProfile(step_with_collective(),
                                  {{"communication.json", "{\"step1\": {\n  \"collective\": [1,\n"}})
                       .analyze();
  bool noted = false;
  for (const auto& n : r.notes) {
    noted = noted || (n.find("communication.json not used") != std::string::npos &&
                      n.find("communication.json:3") != std::string::npos);
  }
  CHECK(noted);
  CHECK(find(r, "exposed_communication") != nullptr);
}
