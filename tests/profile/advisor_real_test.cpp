// The statements issue #17 found wrong, checked on the real profiles they were found on (the
// Llama step and the CNN step of ../shared/profiles), against the profiler's own
// step_trace_time.csv where it has the figure. Skipped when the folder is absent.
#include <catch2/catch.hpp>

#include <filesystem>

#include "profile/advisor.h"
#include "profile/discover.h"
#include "advisor_crafted.h"

namespace fs = std::filesystem;
using namespace npusim::profile;
using npusim::test::find;

namespace {

const fs::path kRealShared = NPUSIM_SHARED_PROFILES_DIR;
const fs::path kLlama = kRealShared / "Ascend_msinsight/test/st/level2/rank_0_ascend_pt";
const fs::path kCnn = kRealShared / "Ascend_msinsight/test/data/pytorch/text/level1/rank0_ascend_pt";

bool present(const fs::path& p) {
  if (fs::is_directory(p)) return true;
  WARN("skipped: " << p.string() << " is absent (real profiles are not part of the repo)");
  return false;
}

Report analyze_one(const fs::path& p) {
  const auto d = discover_profiles(p);
  REQUIRE(d.profiles.size() == 1);
  return analyze(d.profiles.front(), AnalyzeOptions{});
}

}  // namespace

TEST_CASE("the CNN step's breakdown matches its step_trace_time.csv", "[real][advisor]") {
  if (!present(kCnn)) return;
  const Report r = analyze_one(kCnn);
  REQUIRE(r.steps.size() == 1);
  const StepStat& s = r.steps[0];
  // step_trace_time.csv: Computing 8873.756, Communication(Not Overlapped) 101963.203,
  // Overlapped 4028.675, Free 25744.05, Stage 136581.0.
  CHECK(s.span_us == Approx(136581.0).epsilon(1e-6));
  CHECK(s.computing_us == Approx(8873.756).margin(0.01));
  CHECK(s.exposed_communication_us == Approx(101963.203).margin(0.01));
  CHECK(s.overlapped_communication_us == Approx(4028.675).margin(0.01));
  CHECK(s.free_us == Approx(25744.05).margin(0.01));
}

TEST_CASE("the CNN step's exposed communication is its top finding", "[real][advisor]") {
  if (!present(kCnn)) return;
  const Report r = analyze_one(kCnn);
  REQUIRE(!r.findings.empty());
  const Finding& f = r.findings.front();
  CHECK(f.check == "exposed_communication");
  CHECK(f.severity == "high");
  CHECK(f.time_us == Approx(101963.203).margin(0.01));
  REQUIRE(!f.ops.empty());
  CHECK(f.ops.front() == "hcom_allReduce__586_0_1");
}

TEST_CASE("the CNN step's TensorMove after the 79 ms all-reduce waited on communication",
          "[real][advisor]") {
  if (!present(kCnn)) return;
  const Report r = analyze_one(kCnn);
  const Finding* c = find(r, "task_wait", "communication");
  REQUIRE(c != nullptr);
  REQUIRE(!c->ops.empty());
  // The 65,650 us wait of the TensorMove that starts 3 us after hcom_allReduce__586_0_1 ends.
  CHECK(c->time_us >= 65650);
  bool saw = false;
  for (const auto& e : c->evidence) {
    if (e.text.find("after hcom_allReduce__586_0_1 ended") != std::string::npos) saw = true;
  }
  CHECK(saw);
  // No host-launch finding keeps that wait.
  const Finding* h = find(r, "task_wait", "host_launch");
  if (h != nullptr) CHECK(h->time_us < 65650);
}

TEST_CASE("the CNN step's recompilation is backed by api_statistic", "[real][advisor]") {
  if (!present(kCnn)) return;
  const Report r = analyze_one(kCnn);
  const Finding* f = find(r, "task_wait", "recompilation");
  REQUIRE(f != nullptr);
  bool saw = false;
  for (const auto& e : f->evidence) saw = saw || e.key == "api_statistic aclopCompileAndExecute";
  CHECK(saw);
}

TEST_CASE("the Llama step's breakdown matches its step_trace_time.csv", "[real][advisor]") {
  if (!present(kLlama)) return;
  const Report r = analyze_one(kLlama);
  REQUIRE(r.steps.size() == 1);
  const StepStat& s = r.steps[0];
  // Computing 231290.1, Communication(Not Overlapped) 420174.26, Overlapped 0, Free 158558.0,
  // Stage 810022.25.
  CHECK(s.computing_us == Approx(231290.1).margin(0.01));
  CHECK(s.exposed_communication_us == Approx(420174.26).margin(0.01));
  CHECK(s.overlapped_communication_us == Approx(0).margin(0.01));
  CHECK(s.free_us == Approx(158558.0).margin(0.5));
  const Finding* f = find(r, "exposed_communication");
  REQUIRE(f != nullptr);
  CHECK(f->severity == "high");  // 52 % of the step
}

TEST_CASE("the Llama step has no recompilation: its api_statistic has no compile call",
          "[real][advisor]") {
  if (!present(kLlama)) return;
  const Report r = analyze_one(kLlama);
  CHECK(find(r, "task_wait", "recompilation") == nullptr);
}

TEST_CASE("the Llama step's busy MatMuls are cube-bound, not MTE2-bound", "[real][advisor]") {
  if (!present(kLlama)) return;
  const Report r = analyze_one(kLlama);
  const KernelBound* mm = nullptr;
  for (const auto& k : r.kernels) {
    if (k.type == "MatMulV2" && k.shapes == "4096,4096;4096,1024") mm = &k;
  }
  REQUIRE(mm != nullptr);
  CHECK(mm->bound == "cube");
  const Finding* mem = find(r, "memory_bound");
  if (mem != nullptr) {
    for (const auto& e : mem->evidence) {
      CHECK_THAT(e.text, !Catch::Contains("MatMulV2 [4096,4096;4096,1024]"));
    }
    // Advice follows the evidence: alignment advice only with an unaligned kernel listed.
    bool unaligned = false;
    for (const auto& e : mem->evidence) unaligned = unaligned || e.text.find("NOT aligned") != std::string::npos;
    for (const auto& a : mem->advice) {
      if (!unaligned) CHECK_THAT(a, !Catch::Contains("32 bytes"));
    }
  }
}

TEST_CASE("the Llama step runs fused RmsNorm, rotary, SwiGLU and AdamW: no fused-op finding",
          "[real][advisor]") {
  if (!present(kLlama)) return;
  const Report r = analyze_one(kLlama);
  CHECK(find(r, "fused_ops") == nullptr);
}

TEST_CASE("no finding's time at stake exceeds the step", "[real][advisor]") {
  for (const auto& p : {kLlama, kCnn}) {
    if (!present(p)) return;
    const Report r = analyze_one(p);
    double span = 0;
    for (const auto& s : r.steps) span += s.span_us;
    for (const auto& f : r.findings) {
      INFO(p.string() << " " << f.check << ": " << f.title);
      CHECK(f.time_us <= span * (1 + 1e-9));
    }
  }
}

TEST_CASE("one-element INT64 inputs and Foreach lists of the real steps are not unaligned",
          "[real][advisor]") {
  for (const auto& p : {kLlama, kCnn}) {
    if (!present(p)) return;
    const Report r = analyze_one(p);
    const Finding* mem = find(r, "memory_bound");
    if (mem == nullptr) continue;
    for (const auto& e : mem->evidence) {
      INFO(e.key << ": " << e.text);
      // ApplyAdamWV2 takes its step count as a one-element INT64; ForeachAddList a tensor list.
      if (e.text.rfind("ApplyAdamWV2 ", 0) == 0 || e.text.rfind("ForeachAddList ", 0) == 0) {
        CHECK_THAT(e.text, Catch::Contains("last axes 32-byte aligned"));
      }
    }
  }
}
