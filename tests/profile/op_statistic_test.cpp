#include "profile/op_statistic.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "profile/readers.h"

using namespace npusim::profile;
namespace fs = std::filesystem;

namespace {

KernelRow row(std::string name, std::string type, std::string task_type, double dur_us) {
  KernelRow r;
  r.name = std::move(name);
  r.type = std::move(type);
  r.task_type = std::move(task_type);
  r.kind = classify_task(r.task_type, r.name);
  r.duration_us = dur_us;
  return r;
}

}  // namespace

TEST_CASE("op_statistic keys on op type and core type, like msprof", "[op_statistic]") {
  OpStatistic s;
  s.add(row("mm1", "MatMulV3", "AI_CORE", 10));
  s.add(row("mm2", "MatMulV3", "AI_CORE", 30));
  s.add(row("mm3", "MatMulV3", "MIX_AIC", 20));
  s.add(row("dsa", "DSAGenBitMask", "DSA_SQE", 4));
  s.add(row("hcom_allReduce__1", "hcom_allReduce_", "COMMUNICATION", 1000));  // not counted
  s.add(row("Lvl0Kernel", "", "N/A", 16));  // no type: counted under its name
  const auto rows = s.rows();
  REQUIRE(rows.size() == 4);
  // By total descending; hand-computed: total of totals 80.
  CHECK(rows[0].type == "MatMulV3");
  CHECK(rows[0].core_type == "AI_CORE");
  CHECK(rows[0].count == 2);
  CHECK(rows[0].total_us == 40);
  CHECK(rows[0].min_us == 10);
  CHECK(rows[0].avg_us == 20);
  CHECK(rows[0].max_us == 30);
  CHECK(rows[0].ratio_pct == 50);
  CHECK(rows[1].type == "MatMulV3");
  CHECK(rows[1].core_type == "MIX_AIC");
  CHECK(rows[1].ratio_pct == 25);
  CHECK(rows[2].type == "Lvl0Kernel");
  CHECK(rows[3].type == "DSAGenBitMask");
  CHECK(rows[3].ratio_pct == 5);
  const auto other = s.other_device_rows();
  REQUIRE(other.size() == 1);
  CHECK(other[0].core_type == "DSA_SQE");
}

TEST_CASE("op_statistic equals msprof's own on every shared profile", "[op_statistic][real]") {
  const fs::path shared = NPUSIM_SHARED_PROFILES_DIR;
  std::error_code ec;
  if (!fs::is_directory(shared, ec)) return;  // ../shared/profiles absent: skipped
  std::vector<fs::path> stats;
  for (auto it = fs::recursive_directory_iterator(shared, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string n = it->path().filename().string();
    if (it->is_regular_file() && n.rfind("op_statistic", 0) == 0 && n.size() > 4 &&
        n.compare(n.size() - 4, 4, ".csv") == 0) {
      stats.push_back(it->path());
    }
  }
  REQUIRE(stats.size() >= 5);
  std::size_t compared = 0;
  for (const auto& f : stats) {
    INFO(f.string());
    std::vector<fs::path> tables;
    for (const auto& e : fs::directory_iterator(f.parent_path())) {
      const std::string n = e.path().filename().string();
      if (n.rfind("op_summary", 0) == 0 || n.rfind("kernel_details", 0) == 0) {
        tables.push_back(e.path());
      }
    }
    REQUIRE(tables.size() == 1);
    OpStatistic mine;
    (void)read_kernel_table(tables[0], [&](const KernelRow& r) { mine.add(r); });
    std::map<std::pair<std::string, std::string>, OpStatRow> got;
    for (const auto& r : mine.rows()) got[{r.type, r.core_type}] = r;
    const auto expected = read_op_statistic(f);
    CHECK(got.size() == expected.size());
    for (const auto& e : expected) {
      INFO(e.type << " / " << e.core_type << " (line " << e.line << ")");
      const auto it = got.find({e.type, e.core_type});
      REQUIRE(it != got.end());
      const OpStatRow& g = it->second;
      CHECK(g.count == e.count);
      // msprof rounds to 3 decimals.
      CHECK(g.total_us == Approx(e.total_us).margin(0.0015 * static_cast<double>(e.count)));
      CHECK(g.min_us == Approx(e.min_us).margin(0.0015));
      CHECK(g.max_us == Approx(e.max_us).margin(0.0015));
      CHECK(g.avg_us == Approx(e.avg_us).margin(0.0015));
      CHECK(g.ratio_pct == Approx(e.ratio_pct).margin(0.0015));
      ++compared;
    }
  }
  CHECK(compared >= 100);
}
