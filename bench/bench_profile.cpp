// Reading speed and memory of the streaming kernel-table reader: a 1,000,000-row op_summary in
// the current msprof layout (46 columns, triple-quoted shapes, TAB after timestamps) is
// generated in a temporary folder, then read row by row. Reports rows/s and bytes/s (Google
// Benchmark counters) and the process's peak RSS (getrusage), which must not grow with the file.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "profile/advisor.h"
#include "profile/discover.h"
#include "profile/readers.h"

namespace {

namespace fs = std::filesystem;

constexpr int kRows = 1'000'000;

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

// One op_summary in the CANN 8.x msprof layout, rows in start-time order on two streams.
const fs::path& generated_file() {
  static const fs::path file = [] {
    const fs::path dir = fs::temp_directory_path() /
                         ("npusim_bench_profile_" + std::to_string(::getpid()) +
                          "/PROF_000001_BENCH/mindstudio_profiler_output");
    fs::create_directories(dir);
    const fs::path f = dir / "op_summary_20260101000000.csv";
    std::ofstream out(f, std::ios::binary);
    out << "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start "
           "Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 "
           "Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data "
           "Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),"
           "aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,"
           "aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,"
           "aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,"
           "aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,"
           "aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)\n";
    long long t = 1780000000000000LL;
    char line[1024];
    for (int i = 0; i < kRows; ++i) {
      const bool mm = i % 4 == 0;
      t += 12;
      const int n = std::snprintf(
          line, sizeof line,
          "0,4294967295,%d,%d,%s_%d,%s,dynamic,%s,%lld.%03d\t,%d.%03d,%d.000000,%d,0,NO,"
          "\"\"\"%s\"\"\",FLOAT16;FLOAT16,ND;ND,\"\"\"%s\"\"\",FLOAT16,ND,N/A,%s\n",
          i, mm ? 2 : 3, mm ? "aclnnMatmul_MatMulV2" : "aclnnAdd_AddAiCore_Add", i,
          mm ? "MatMulV2" : "Add", mm ? "AI_CORE" : "AI_VECTOR_CORE", t, i % 1000, 10 + i % 7,
          i % 1000, i % 13, mm ? 20 : 40, mm ? "1024,4096;4096,4096" : "1024,4096;1024,4096",
          "1024,4096",
          mm ? "9.5,313500,7.1,0.75,1.2,0.12,2.0,0.2,8.0,0.84,1.0,0.1,0.01,0.0,0,0.0,0.0,0.0,"
               "0.0,0.0,0.0,0.0,0.0,0.01,47.5"
             : "0.0,0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,9.1,600600,3.0,0.33,0.5,0.05,"
               "8.2,0.9,4.0,0.44,0.01,0.0");
      out.write(line, n);
    }
    return f;
  }();
  return file;
}

void BM_ReadKernelTable(benchmark::State& state) {
  const fs::path& f = generated_file();
  const auto bytes = static_cast<double>(fs::file_size(f));
  std::uint64_t rows = 0;
  double checksum = 0;
  for (auto _ : state) {
    const auto info = npusim::profile::read_kernel_table(
        f, [&](const npusim::profile::KernelRow& r) { checksum += r.duration_us; });
    rows += info.rows;
  }
  benchmark::DoNotOptimize(checksum);
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
  state.counters["bytes_per_s"] = benchmark::Counter(
      bytes * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(peak_rss_kib()) / 1024.0;
}
BENCHMARK(BM_ReadKernelTable)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AnalyzeProfile(benchmark::State& state) {
  const fs::path& f = generated_file();
  const auto d = npusim::profile::discover_profiles(f.parent_path().parent_path());
  for (auto _ : state) {
    const auto r = npusim::profile::analyze(d.profiles.front(), {});
    benchmark::DoNotOptimize(r.ops);
  }
  state.counters["rows_per_s"] = benchmark::Counter(
      static_cast<double>(kRows) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(peak_rss_kib()) / 1024.0;
}
BENCHMARK(BM_AnalyzeProfile)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const long before = peak_rss_kib();
  const fs::path& f = generated_file();
  std::printf("generated %s: %d rows, %.1f MiB; peak RSS after generating %.1f MiB\n",
              f.string().c_str(), kRows, static_cast<double>(fs::file_size(f)) / (1 << 20),
              static_cast<double>(before) / 1024.0);
  benchmark::RunSpecifiedBenchmarks();
  std::printf("peak RSS of the process: %.1f MiB\n", static_cast<double>(peak_rss_kib()) / 1024.0);
  std::error_code ec;
  fs::remove_all(f.parent_path().parent_path().parent_path(), ec);
  benchmark::Shutdown();
  return 0;
}
