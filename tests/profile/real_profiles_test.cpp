// Every real profiler file under ../shared/profiles that npusim reads is read without error, and
// its totals are cross-checked against independent sources: the row and event counts of
// MANIFEST.tsv, a naive line-by-line sum of the duration column, and the profiler's own
// op_statistic. The folder is public data kept outside the project: when it is absent (a fresh
// clone) these tests say so and pass without checking.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/graph.h"
#include "profile/advisor.h"
#include "profile/csv_reader.h"
#include "profile/discover.h"
#include "profile/graph_export.h"
#include "profile/readers.h"
#include "test_files.h"

namespace fs = std::filesystem;
using namespace npusim::profile;

namespace {

const fs::path kShared = NPUSIM_SHARED_PROFILES_DIR;

bool shared_present() {
  if (fs::is_directory(kShared) && fs::exists(kShared / "MANIFEST.tsv")) return true;
  WARN("skipped: " << kShared.string() << " is absent (real profiles are not part of the repo)");
  return false;
}

// local_file -> "rows_or_events" column of MANIFEST.tsv
std::map<std::string, std::string> manifest() {
  std::map<std::string, std::string> m;
  std::ifstream in(kShared / "MANIFEST.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    if (cols.size() >= 6) m[cols[0]] = cols[5];
  }
  return m;
}

// "2463 rows x 47 cols" -> 2463, "8375 events" -> 8375
std::uint64_t leading_count(const std::string& s) { return std::stoull(s.substr(0, s.find(' '))); }

std::string strip(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\t' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, ',')) out.push_back(strip(c));
  return out;
}

// Independent of the reader: the duration column precedes every quoted column in all layouts,
// so a plain comma split of each line finds it.
// Rows narrower than the header are left out when `skip_short` (the reader skips them too).
std::pair<std::uint64_t, double> naive_duration_sum(const fs::path& file, bool skip_short) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  const auto header = split_commas(strip(line));
  std::size_t col = header.size();
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "Duration(us)" || header[i] == "Task Duration(us)") col = i;
  }
  REQUIRE(col < header.size());
  std::uint64_t rows = 0;
  double sum = 0;
  // Count fields outside quotes to spot short rows, independently of the reader.
  auto width = [](const std::string& l) {
    std::size_t n = 1;
    bool q = false;
    for (char c : l) {
      if (c == '"') q = !q;
      if (c == ',' && !q) ++n;
    }
    return n;
  };
  while (std::getline(in, line)) {
    if (strip(line).empty()) continue;
    if (skip_short && width(strip(line)) < header.size()) continue;
    const auto f = split_commas(line);
    REQUIRE(col < f.size());
    sum += std::stod(f[col]);
    ++rows;
  }
  return {rows, sum};
}

std::string rel(const fs::path& p) { return fs::relative(p, kShared).string(); }

std::vector<fs::path> files_named(bool (*pred)(const std::string&)) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(kShared)) {
    if (e.is_regular_file() && pred(e.path().filename().string())) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_kernel_table(const std::string& n) {
  return ((n.rfind("op_summary", 0) == 0 || n.rfind("kernel_details", 0) == 0) &&
          n.size() > 4 && n.substr(n.size() - 4) == ".csv") ||
         n == "OpBasicInfo.csv";
}

}  // namespace

TEST_CASE("every real kernel table is read and its totals match MANIFEST and a naive sum",
          "[real]") {
  if (!shared_present()) return;
  const auto m = manifest();
  const auto files = files_named(is_kernel_table);
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    INFO(rel(f));
    std::uint64_t rows = 0;
    double sum = 0;
    std::int64_t last_start = 0;
    bool ordered = true;
    const auto info = read_kernel_table(f, [&](const KernelRow& r) {
      ++rows;
      sum += r.duration_us;
      ordered = ordered && r.start_ns >= last_start;
      last_start = r.start_ns;
    });
    REQUIRE(m.count(rel(f)) == 1);
    CHECK(rows + info.broken_rows == leading_count(m.at(rel(f))));
    CHECK(info.rows == rows);
    const auto [naive_rows, naive_sum] = naive_duration_sum(f, info.broken_rows > 0);
    CHECK(rows == naive_rows);
    CHECK(sum == Approx(naive_sum).epsilon(1e-12));
    CHECK(ordered);  // the profilers write rows in start-time order
  }
}

TEST_CASE("real op_statistic totals per op type equal the kernel table's", "[real]") {
  if (!shared_present()) return;
  const auto stats = files_named(
      [](const std::string& n) { return n.rfind("op_statistic", 0) == 0; });
  REQUIRE(stats.size() >= 5);
  for (const auto& s : stats) {
    INFO(rel(s));
    std::map<std::string, double> expected;
    for (const auto& r : read_op_statistic(s)) expected[r.type] += r.total_us;
    CHECK(!expected.empty());
    // The kernel table beside it (msprof: op_summary_<same ts>.csv; torch_npu: kernel_details).
    std::vector<fs::path> tables;
    for (const auto& e : fs::directory_iterator(s.parent_path())) {
      if (is_kernel_table(e.path().filename().string())) tables.push_back(e.path());
    }
    REQUIRE(tables.size() == 1);
    std::map<std::string, double> mine;
    (void)read_kernel_table(tables[0], [&](const KernelRow& r) { mine[r.type] += r.duration_us; });
    for (const auto& [type, total] : expected) {
      INFO(type);
      CHECK(mine[type] == Approx(total).epsilon(1e-6).margin(0.01));
    }
  }
}

TEST_CASE("every real summary and timeline file is read with the MANIFEST's counts", "[real]") {
  if (!shared_present()) return;
  const auto m = manifest();
  std::size_t seen = 0;
  for (const auto& f : files_named([](const std::string& n) {
         return n.rfind("api_statistic", 0) == 0 || n.rfind("task_time", 0) == 0 ||
                n == "trace_view.json" || n.rfind("profiler_info", 0) == 0;
       })) {
    INFO(rel(f));
    const std::string n = f.filename().string();
    ++seen;
    if (n.rfind("api_statistic", 0) == 0) {
      CHECK(read_api_statistic(f).size() == leading_count(m.at(rel(f))));
    } else if (n.rfind("task_time", 0) == 0) {
      CHECK(read_task_time(f).size() == leading_count(m.at(rel(f))));
    } else if (n == "trace_view.json") {
      const auto t = read_trace_json(f);
      CHECK(t.events == leading_count(m.at(rel(f))));
      CHECK(t.device_tasks > 0);
    } else {
      // 2025 files carry the rank only; the CANN 8.3 ones add cann_version.
      const auto info = read_profiler_info(f);
      CHECK(info.rank_id.has_value());
    }
  }
  CHECK(seen >= 20);
}

TEST_CASE("every real profile is found and analysed without error", "[real]") {
  if (!shared_present()) return;
  const auto d = discover_profiles(kShared);
  // 11 msinsight folders with a kernel table + 2 neo-pan PROF_ folders + 1 msprof op folder + 4
  // folders holding only a profiler database (3 torch_npu .db, msinsight's msprof_0.db) + 10
  // MindSpore runs (op table beside aicore_intermediate_0_detail.csv).
  CHECK(d.profiles.size() == 28);
  std::vector<Report> reports;
  for (const auto& p : d.profiles) {
    INFO(p.name);
    reports.push_back(analyze(p, AnalyzeOptions{}));
    CHECK(reports.back().ops > 0);
  }
  const auto j = nlohmann::json::parse(render_json(reports));
  CHECK(j["profiles"].size() == d.profiles.size());
}

TEST_CASE("the real CANN 8.3 training step reads as the research describes", "[real]") {
  if (!shared_present()) return;
  const auto d = discover_profiles(kShared / "Ascend_msinsight/test/st/level2/rank_0_ascend_pt");
  REQUIRE(d.profiles.size() == 1);
  const Report r = analyze(d.profiles.front(), AnalyzeOptions{});
  // profile_formats.md: 2463 kernels, 15 COMMUNICATION; 20 AIC at 1650 MHz by cycle arithmetic.
  CHECK(r.ops + r.communication_ops == 2463);
  CHECK(r.communication_ops == 15);
  REQUIRE(r.chip.cube_cores.has_value());
  CHECK(*r.chip.cube_cores == 20);
  CHECK(*r.chip.freq_mhz == 1650);
  CHECK(r.cann_version == "8.3.RC1");
  // op_statistic: FlashAttentionScoreGrad is the top type at 27.294 % of device op time.
  CHECK(r.op_types.front().type == "FlashAttentionScoreGrad");
  CHECK(r.op_types.front().total_us == Approx(63128.66));
}

TEST_CASE("a real training step exports to a graph the model loads", "[real]") {
  if (!shared_present()) return;
  const auto d = discover_profiles(kShared / "Ascend_msinsight/test/st/level2/rank_0_ascend_pt");
  const auto g = graph_from_profile(d.profiles.front(), 13);
  CHECK(g.ops == 2448);
  CHECK(g.dropped_communication == 15);
  npusim::test::TempDir t;
  const npusim::Graph graph = npusim::load_graph_file(t.write("g.toml", g.toml));
  CHECK(graph.size() == 2448);
}

TEST_CASE("every real CSV parses with rows as wide as its header", "[real]") {
  if (!shared_present()) return;
  std::size_t files = 0;
  for (const auto& f : files_named([](const std::string& n) {
         return n.size() > 4 && n.substr(n.size() - 4) == ".csv";
       })) {
    INFO(rel(f));
    ++files;
    npusim::profile::CsvReader r(f);
    std::size_t short_rows = 0, rows = 0;
    while (r.next()) {
      ++rows;
      if (r.size() < r.header().size()) ++short_rows;
    }
    // The one broken row of the 2023 kernel table (and its op_summary twin) is the only one.
    CHECK(short_rows <= 1);
    CHECK(rows > 0);
  }
  // As many as MANIFEST.tsv lists (the corpus grows: 52 CSV files in Nov 2026, 72 in Dec).
  std::size_t listed = 0;
  for (const auto& [name, count] : manifest()) {
    listed += name.size() > 4 && name.substr(name.size() - 4) == ".csv";
  }
  CHECK(files == listed);
}
