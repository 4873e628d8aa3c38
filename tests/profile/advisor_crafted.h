#pragma once
// Crafted kernel_details rows for the advisor's rule tests: each test writes the few rows its
// case needs (a torch_npu layout with the PipeUtilization ratios) into a *_ascend_pt folder and
// analyses it, so every expected number is worked out by hand beside the rows.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "profile/advisor.h"
#include "profile/discover.h"
#include "test_files.h"

namespace npusim::test {

/// One kernel_details row. Times in µs; ratios as the profiler writes them (0..1).
struct Row {
  std::string name, type, core = "AI_VECTOR_CORE";
  double start = 0, dur = 0, wait = 0;
  int block = 40;
  std::string shapes, dtypes;
  double mac = 0, aic_scalar = 0, mte1 = 0, aic_mte2 = 0, fixpipe = 0;
  double vec = 0, aiv_scalar = 0, aiv_mte2 = 0, mte3 = 0;
  double aic_mte2_time = 0, aiv_mte2_time = 0;
  std::string stream = "2";
  std::string output_shapes;
};

/// A row with the fields most cases set; the pipe ratios are set on the result.
inline Row row(std::string name, std::string type, std::string core, double start, double dur,
               double wait = 0, int block = 40, std::string shapes = "", std::string dtypes = "") {
  Row r;
  r.name = std::move(name);
  r.type = std::move(type);
  r.core = std::move(core);
  r.start = start;
  r.dur = dur;
  r.wait = wait;
  r.block = block;
  r.shapes = std::move(shapes);
  r.dtypes = std::move(dtypes);
  return r;
}

/// A communication row (an hcom_* task on no stream).
inline Row comm(const std::string& name, double start, double dur) {
  Row r;
  r.name = name;
  r.type = "hcom_allReduce_";
  r.core = "HCCL";
  r.start = start;
  r.dur = dur;
  r.block = 0;
  r.stream = "N/A";
  return r;
}

inline std::string kernel_details(const std::vector<Row>& rows) {
  std::string s =
      "Step Id,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
      "Block Dim,Input Shapes,Input Data Types,Output Shapes,aic_mac_ratio,aic_scalar_ratio,"
      "aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_ratio,aiv_vec_ratio,"
      "aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_ratio\n";
  for (const Row& r : rows) {
    s += fmt::format("1,{},{},{},{},{:.3f}\t,{:.3f},{:.3f},{},\"{}\",{},\"{}\",{},{},{},{},{},{},{},{},"
                     "{},{},{}\n",
                     r.stream, r.name, r.type, r.core, r.start, r.dur, r.wait, r.block, r.shapes,
                     r.dtypes.empty() ? "N/A" : r.dtypes, r.output_shapes, r.mac, r.aic_scalar,
                     r.mte1, r.aic_mte2_time, r.aic_mte2, r.fixpipe, r.vec, r.aiv_scalar,
                     r.aiv_mte2_time, r.aiv_mte2, r.mte3);
  }
  return s;
}

/// A torch_npu profile folder holding the rows and any extra files (name -> content, relative
/// to ASCEND_PROFILER_OUTPUT unless the name starts with "../").
class CraftedProfile {
 public:
  explicit CraftedProfile(const std::vector<Row>& rows,
                          const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    dir_.write("rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", kernel_details(rows));
    for (const auto& [name, content] : extra) {
      dir_.write("rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/" + name, content);
    }
  }
  [[nodiscard]] profile::Report analyze(const profile::AnalyzeOptions& o = {}) const {
    const auto d = profile::discover_profiles(dir_.path() / "rank_0_ascend_pt");
    return profile::analyze(d.profiles.at(0), o);
  }

 private:
  TempDir dir_;
};

inline const profile::Finding* find(const profile::Report& r, const std::string& check,
                                    const std::string& cause = "") {
  for (const auto& f : r.findings) {
    if (f.check != check) continue;
    if (cause.empty()) return &f;
    for (const auto& e : f.evidence) {
      if (e.key == "cause" && e.text == cause) return &f;
    }
  }
  return nullptr;
}

/// The text of evidence `key`, "" when absent.
inline std::string evidence(const profile::Finding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.key == key) return e.text;
  }
  return {};
}

}  // namespace npusim::test
