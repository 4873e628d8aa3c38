// Reading speed and memory of the streaming timeline reader (profile/trace_reader.h): a
// trace_view.json-like file of NPUSIM_BENCH_TRACE_MB MiB (default 1024) is generated in the
// temporary folder with torch_npu's mix of tracks (Python and CANN host events, flow events,
// counters, and one Ascend Hardware kernel in eight events), then read. Reports events/s, kernel
// rows/s, bytes/s and the process's peak RSS (getrusage), which must follow the kernel count, not
// the file size. The file is removed at the end.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "profile/readers.h"

namespace {

namespace fs = std::filesystem;

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;  // KiB on Linux
}

std::uint64_t g_events = 0;
std::uint64_t g_kernels = 0;

const fs::path& generated_file() {
  static const fs::path file = [] {
    const char* env = std::getenv("NPUSIM_BENCH_TRACE_MB");
    const double mib = env ? std::atof(env) : 1024.0;
    const auto target = static_cast<std::uintmax_t>(mib * (1 << 20));
    const fs::path dir =
        fs::temp_directory_path() / ("npusim_bench_trace_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path f = dir / "trace_view.json";
    std::FILE* out = std::fopen(f.string().c_str(), "wb");
    std::fputs("[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"tid\":0,\"args\":{\"name\":"
               "\"Python\"}},\n{\"name\":\"process_name\",\"pid\":200,\"tid\":0,\"args\":{\"name\":"
               "\"Ascend Hardware\"},\"ph\":\"M\"},\n{\"name\":\"process_name\",\"pid\":300,\"tid\":"
               "0,\"args\":{\"name\":\"CANN\"},\"ph\":\"M\"},\n",
               out);
    std::uintmax_t written = 0;
    long long t = 1736408883704643LL;
    char buf[2048];
    for (std::uint64_t i = 0; written < target; ++i) {
      t += 7;
      const int frac = static_cast<int>(i % 1000);
      const int n = std::snprintf(
          buf, sizeof buf,
          "{\"ph\":\"X\",\"name\":\"aten::linear\",\"pid\":100,\"tid\":100,\"ts\":\"%lld.%03d\","
          "\"dur\":12.5,\"args\":{\"Call stack\":\"model.py(12): forward; module.py(1501): "
          "_call_impl\",\"Sequence number\":%llu,\"Fwd thread id\":0}},\n"
          "{\"ph\":\"X\",\"name\":\"aten::addmm\",\"pid\":100,\"tid\":100,\"ts\":\"%lld.%03d\","
          "\"dur\":8.25,\"args\":{\"Sequence number\":%llu}},\n"
          "{\"ph\":\"X\",\"name\":\"aclnnMatmul\",\"pid\":300,\"tid\":100,\"ts\":\"%lld.%03d\","
          "\"dur\":4.1,\"args\":{\"Thread Id\":100,\"Mode\":\"ACL_OP\",\"level\":\"acl\","
          "\"id\":\"0\",\"item_id\":\"0\",\"connection_id\":%llu}},\n"
          "{\"ph\":\"X\",\"name\":\"LaunchKernel\",\"pid\":300,\"tid\":100,\"ts\":\"%lld.%03d\","
          "\"dur\":1.9,\"args\":{\"Thread Id\":100,\"level\":\"runtime\"}},\n"
          "{\"ph\":\"s\",\"bp\":\"e\",\"name\":\"HostToDevice%llu\",\"id\":\"%llu\",\"pid\":300,"
          "\"tid\":100,\"ts\":\"%lld.%03d\",\"cat\":\"HostToDevice\"},\n"
          "{\"name\":\"aclnnMatmul_MatMulCommon_MatMulV2_%llu\",\"pid\":200,\"tid\":2,\"ts\":"
          "\"%lld.%03d\",\"dur\":53.7410625,\"args\":{\"Model Id\":4294967295,\"Task Type\":"
          "\"AI_CORE\",\"Physic Stream Id\":2,\"Task Id\":%llu,\"Batch Id\":0,\"Subtask Id\":"
          "4294967295,\"connection_id\":%llu},\"ph\":\"X\"},\n"
          "{\"name\":\"EVENT_RECORD\",\"pid\":200,\"tid\":2,\"ts\":\"%lld.%03d\",\"dur\":0.02,"
          "\"args\":{\"Task Type\":\"EVENT_RECORD_SQE\",\"Physic Stream Id\":2,\"Task Id\":%llu},"
          "\"ph\":\"X\"},\n"
          "{\"name\":\"HBM\",\"ts\":\"%lld.%03d\",\"pid\":400,\"tid\":0,\"args\":{\"Read(MB/s)\":"
          "1024.5,\"Write(MB/s)\":512.25},\"ph\":\"C\"},\n",
          t, frac, static_cast<unsigned long long>(i), t + 1, frac,
          static_cast<unsigned long long>(i), t + 2, frac, static_cast<unsigned long long>(i),
          t + 3, frac, static_cast<unsigned long long>(i), static_cast<unsigned long long>(i),
          t + 4, frac, static_cast<unsigned long long>(i), t + 5, frac,
          static_cast<unsigned long long>(i), static_cast<unsigned long long>(i), t + 6, frac,
          static_cast<unsigned long long>(i), t + 6, frac);
      std::fwrite(buf, 1, static_cast<std::size_t>(n), out);
      written += static_cast<std::uintmax_t>(n);
      g_events += 8;
      ++g_kernels;
    }
    std::fputs("{\"name\":\"AI Core Freq\",\"ts\":\"1.0\",\"pid\":500,\"tid\":0,\"args\":{\"MHz\":"
               "1800},\"ph\":\"C\"}\n]\n",
               out);
    std::fclose(out);
    g_events += 4;
    return f;
  }();
  return file;
}

void BM_ReadTraceKernels(benchmark::State& state) {
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
  const auto it = static_cast<double>(state.iterations());
  state.counters["kernel_rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(g_events) * it, benchmark::Counter::kIsRate);
  state.counters["bytes_per_s"] = benchmark::Counter(bytes * it, benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(peak_rss_kib()) / 1024.0;
}
BENCHMARK(BM_ReadTraceKernels)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const fs::path& f = generated_file();
  std::printf("generated %s: %.1f MiB, %llu events, %llu kernels; peak RSS after generating "
              "%.1f MiB\n",
              f.string().c_str(), static_cast<double>(fs::file_size(f)) / (1 << 20),
              static_cast<unsigned long long>(g_events),
              static_cast<unsigned long long>(g_kernels),
              static_cast<double>(peak_rss_kib()) / 1024.0);
  benchmark::RunSpecifiedBenchmarks();
  std::printf("peak RSS of the process: %.1f MiB\n", static_cast<double>(peak_rss_kib()) / 1024.0);
  std::error_code ec;
  fs::remove_all(f.parent_path(), ec);
  benchmark::Shutdown();
  return 0;
}
