#include "profile/trace_reader.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace npusim::profile {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;

namespace {

constexpr std::size_t kTraceBlockBytes = std::size_t{4} << 20;

// One device task or hcom op kept until the tracks are known (process_name events may come
// anywhere in the file).
// Compact (a KernelRow is ~600 bytes): a 1 GB trace holds about a million of these.
struct Candidate {
  std::int64_t pid = 0;
  std::int64_t start_ns = 0;
  std::int64_t stream_id = -1;
  std::int64_t task_id = -1;
  double duration_us = 0;
  std::string name;
  std::uint32_t line = 0;
  std::uint8_t task_type = 0;  // index into kTaskTypes; 0 = communication (hcom_* op)
  bool hardware = false;       // has a "Task Type": a hardware-track task; else an hcom_* op
};

constexpr std::array<std::string_view, 7> kTaskTypes{
    "COMMUNICATION", "AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "DSA_SQE"};

std::uint8_t task_type_index(std::string_view t) {
  for (std::size_t i = 1; i < kTaskTypes.size(); ++i) {
    if (kTaskTypes[i] == t) return static_cast<std::uint8_t>(i);
  }
  return 0;
}

// What one event said, parsed from its own bytes.
struct Event {
  std::string_view ph, name, task_type, meta_name, ts_text;
  std::int64_t pid = 0, tid = -1, stream = -1, task = -1;
  double dur_us = 0, mhz = 0;
  bool has_pid = false, has_dur = false, has_mhz = false, has_stream = false;
};

class TraceReader {
 public:
  TraceReader(const fs::path& file, const ReadOptions& options)
      : file_(file.string()), options_(options) {}

  KernelFileInfo run(const std::function<void(const KernelRow&)>& on_row) {
    info_.file = file_;
    info_.source_kind = "trace";
    info_.has_start_time = true;
    info_.has_stream_id = true;
    info_.missing_optional = {"OP Type", "Input Shapes", "Task Wait Time(us)", "Block Dim",
                              "aic_total_cycles", "cube_utilization(%)",
                              "aic_mte2_ratio/aiv_mte2_ratio"};
    scan();
    finish(on_row);
    return info_;
  }

 private:
  // Cuts the event array into events. Top level: '[' (an array of events) or '{' (an object
  // whose array values hold the events, "traceEvents"). Strings are tracked so braces inside
  // names do not count.
  void scan() {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> fp(std::fopen(file_.c_str(), "rb"), &std::fclose);
    if (!fp) throw InputError({file_, 0, 0}, "cannot open the file for reading");
    // A small file gets a block of its own size: zeroing 4 MiB per file dominated reading the
    // many small timelines of a profile folder (and a fuzzer's inputs).
    std::error_code size_error;
    const auto file_bytes = std::filesystem::file_size(file_, size_error);
    std::vector<char> block(size_error ? kTraceBlockBytes
                                       : std::clamp<std::size_t>(file_bytes + 1, 4096, kTraceBlockBytes));
    std::vector<char> stack;  // open containers
    bool in_string = false, escape = false, started = false;
    std::size_t event_depth = 0;  // stack size at which '{' opens an event
    std::uint32_t line = 1;
    std::uint32_t event_line = 0;
    bool capturing = false;
    for (;;) {
      const std::size_t n = std::fread(block.data(), 1, block.size(), fp.get());
      if (n == 0) {
        if (std::ferror(fp.get()) != 0) throw InputError({file_, line, 0}, "read error");
        break;
      }
      const char* b = block.data();
      std::size_t capture_from = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const char c = b[i];
        if (c == '\n') ++line;
        if (in_string) {
          if (escape) {
            escape = false;
          } else if (c == '\\') {
            escape = true;
          } else if (c == '"') {
            in_string = false;
          }
          continue;
        }
        switch (c) {
          case '"': in_string = true; break;
          case '[':
          case '{':
            if (!started) {
              started = true;
              event_depth = c == '[' ? 1 : 2;
            } else if (c == '{' && stack.size() == event_depth && !capturing) {
              capturing = true;
              capture_from = i;
              event_line = line;
              event_.clear();
            }
            stack.push_back(c);
            break;
          case ']':
          case '}':
            if (!stack.empty()) stack.pop_back();
            if (capturing && stack.size() == event_depth) {
              event_.append(b + capture_from, i + 1 - capture_from);
              capturing = false;
              parse_event(event_line);
            }
            break;
          case ' ': case '\t': case '\r': case '\n': case ',': case ':': break;
          default:
            if (!started) {
              throw InputError({file_, line, 0}, "expected a JSON array of trace events (or an "
                                                 "object with \"traceEvents\")");
            }
        }
      }
      if (capturing) {
        event_.append(b + capture_from, n - capture_from);
      }
    }
    if (!started) throw InputError({file_, 1, 0}, "empty file: expected a JSON array of events");
    if (capturing || in_string || !stack.empty()) {
      const InputError cut({file_, capturing ? event_line : line, 0},
                           "the file ends inside an event: truncated");
      info_.truncated = std::string(cut.what());
      skip_row(info_, cut, options_);
    }
    if (info_.broken_rows > 0 && info_.broken_rows > events_) {
      throw InputError({file_, 0, 0}, fmt::format("{} of {} events are malformed: not read "
                                                  "(first: {})",
                                                  info_.broken_rows, info_.broken_rows + events_,
                                                  info_.broken_row_messages.front()));
    }
  }

  void parse_event(std::uint32_t line) {
    const std::size_t len = event_.size();
    event_.append(simdjson::SIMDJSON_PADDING, '\0');
    Event e;
    const simdjson::error_code err = parse(simdjson::padded_string_view(event_.data(), len,
                                                                       event_.size()),
                                           e);
    if (err != simdjson::SUCCESS) {
      skip_row(info_, InputError({file_, line, 0},
                                 fmt::format("malformed JSON in this event: {}",
                                             simdjson::error_message(err))),
               options_);
      return;
    }
    ++events_;
    use(e, line);
  }

  simdjson::error_code parse(simdjson::padded_string_view json, Event& e) {
    od::document doc;
    if (auto err = parser_.iterate(json).get(doc)) return err;
    od::object obj;
    if (auto err = doc.get_object().get(obj)) return err;
    for (auto field : obj) {
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return err;
      od::value v;
      if (auto err = field.value().get(v)) return err;
      if (key == "ph") {
        if (auto err = v.get_string().get(e.ph)) return err;
      } else if (key == "name") {
        if (auto err = v.get_string().get(e.name)) return err;
      } else if (key == "pid" || key == "tid") {
        std::int64_t x = 0;
        od::json_type t;
        if (auto err = v.type().get(t)) return err;
        if (t == od::json_type::number) {
          if (auto err = v.get_int64().get(x)) return err;
        } else {
          continue;  // a string pid ("HCCL") is a label, not a track id we match
        }
        if (key == "pid") {
          e.pid = x;
          e.has_pid = true;
        } else {
          e.tid = x;
        }
      } else if (key == "ts") {
        // Timestamps are µs with ns digits, as a string (torch_npu) or a number (msprof): the
        // raw text keeps every digit.
        od::json_type t;
        if (auto err = v.type().get(t)) return err;
        if (t == od::json_type::string) {
          if (auto err = v.get_string().get(e.ts_text)) return err;
        } else {
          e.ts_text = v.raw_json_token();
          while (!e.ts_text.empty() && (e.ts_text.back() == ' ' || e.ts_text.back() == '\n' ||
                                        e.ts_text.back() == '\r' || e.ts_text.back() == '\t')) {
            e.ts_text.remove_suffix(1);
          }
        }
      } else if (key == "dur") {
        if (auto err = v.get_double().get(e.dur_us)) return err;
        e.has_dur = true;
      } else if (key == "args") {
        od::object args;
        if (v.get_object().get(args) != simdjson::SUCCESS) continue;
        for (auto a : args) {
          std::string_view k;
          if (auto err = a.unescaped_key().get(k)) return err;
          od::value av;
          if (auto err = a.value().get(av)) return err;
          if (k == "Task Type") {
            if (auto err = av.get_string().get(e.task_type)) return err;
          } else if (k == "name") {
            if (av.get_string().get(e.meta_name) != simdjson::SUCCESS) e.meta_name = {};
          } else if (k == "Physic Stream Id" || k == "Stream Id") {
            if (av.get_int64().get(e.stream) == simdjson::SUCCESS) e.has_stream = true;
          } else if (k == "Task Id") {
            if (av.get_int64().get(e.task) != simdjson::SUCCESS) e.task = -1;
          } else if (k == "MHz") {
            if (av.get_double().get(e.mhz) == simdjson::SUCCESS) e.has_mhz = true;
          }
        }
      }
    }
    return simdjson::SUCCESS;
  }

  void use(const Event& e, std::uint32_t line) {
    if (e.ph == "M") {
      if (e.name == "process_name" && e.has_pid) {
        if (e.meta_name == "Ascend Hardware") hardware_pids_.insert(e.pid);
        if (e.meta_name == "HCCL") hccl_pids_.insert(e.pid);
        any_process_names_ = true;
      }
      return;
    }
    if (e.ph == "C") {
      if (e.name == "AI Core Freq" && e.has_mhz) {
        if (!info_.aicore_freq_mhz || e.mhz > *info_.aicore_freq_mhz) info_.aicore_freq_mhz = e.mhz;
        // Every sample, for the advisor's falling-clock rule; a counter track is small (one
        // sample per frequency change), so memory stays bounded by the kernels kept.
        const auto ns = parse_time_us_to_ns(e.ts_text);
        freq_samples_.emplace_back(ns ? static_cast<double>(*ns) / 1000.0 : 0.0, e.mhz);
      }
      return;
    }
    if (e.ph != "X") return;
    if (e.has_pid) ++x_by_pid_[e.pid];
    const bool hardware = !e.task_type.empty();
    const bool hcom = !hardware && e.name.substr(0, 5) == "hcom_";
    if (!hardware && !hcom) return;
    // The hardware task types that are kernels (kernel_details lists them, DSA_SQE included);
    // the other tasks of the hardware track are runtime work (events, notifies, copies).
    const std::uint8_t type_index = hardware ? task_type_index(e.task_type) : 0;
    if (hardware && type_index == 0) {
      ++runtime_tasks_[std::string(e.task_type)];
      return;
    }
    const auto start = parse_time_us_to_ns(e.ts_text);
    if (!start || !e.has_dur || !(e.dur_us >= 0 && e.dur_us <= kMaxRowDurationUs)) {
      skip_row(info_, InputError({file_, line, 0},
                                 fmt::format("event '{}': {}", e.name,
                                             !start ? fmt::format("'ts' is not a timestamp in "
                                                                  "microseconds: '{}'", e.ts_text)
                                                    : "'dur' is missing, negative or "
                                                      "above one day")),
               options_);
      return;
    }
    Candidate c;
    c.pid = e.pid;
    c.hardware = hardware;
    c.line = line;
    c.name = std::string(e.name);
    c.task_type = type_index;
    c.start_ns = *start;
    c.duration_us = e.dur_us;
    c.stream_id = e.has_stream ? e.stream : (hardware ? e.tid : -1);
    c.task_id = e.task;
    candidates_.push_back(std::move(c));
  }

  void finish(const std::function<void(const KernelRow&)>& on_row) {
    // Keep the hardware track's tasks and the HCCL track's ops; a file without process names
    // (hand-cut) is taken at its word.
    std::vector<const Candidate*> kept;
    kept.reserve(candidates_.size());
    for (const auto& c : candidates_) {
      const auto& pids = c.hardware ? hardware_pids_ : hccl_pids_;
      if (!any_process_names_ || pids.count(c.pid)) kept.push_back(&c);
    }
    std::stable_sort(kept.begin(), kept.end(), [](const Candidate* a, const Candidate* b) {
      return a->start_ns < b->start_ns;
    });
    KernelRow row;
    for (const auto* c : kept) {
      row.line = c->line;
      row.name = c->name;
      row.task_type = std::string(kTaskTypes[c->task_type]);
      row.kind = classify_task(row.task_type, row.name);
      row.start_ns = c->start_ns;
      row.duration_us = c->duration_us;
      row.stream_id = c->stream_id;
      row.task_id = c->task_id;
      ++info_.rows;
      on_row(row);
    }
    std::string l = fmt::format("timeline JSON ({} events; device tasks from the Ascend Hardware "
                                "track: no op types, shapes, wait or PMU)",
                                events_);
    if (info_.aicore_freq_mhz) l += fmt::format(", AI Core Freq {} MHz", *info_.aicore_freq_mhz);
    std::uint64_t runtime = 0;
    for (const auto& [t, n] : runtime_tasks_) runtime += n;
    if (runtime > 0) l += fmt::format(", {} runtime tasks (events, notifies, copies) not listed", runtime);
    if (info_.broken_rows > 0) {
      l += fmt::format(", {} malformed events skipped{}", info_.broken_rows,
                       info_.truncated ? " (truncated file)" : "");
    }
    info_.layout = l;
  }

  std::string file_;
  ReadOptions options_;
  KernelFileInfo info_;
  od::parser parser_;
  std::string event_;
  std::uint64_t events_ = 0;
  std::set<std::int64_t> hardware_pids_, hccl_pids_;
  bool any_process_names_ = false;
  std::vector<Candidate> candidates_;
  std::map<std::string, std::uint64_t> runtime_tasks_;
  std::map<std::int64_t, std::uint64_t> x_by_pid_;  // X events per track
  std::vector<std::pair<double, double>> freq_samples_;  // AI Core Freq (ts µs, MHz)

 public:
  /// After run(): the facts read_trace_json reports.
  [[nodiscard]] TraceInfo summary() const {
    TraceInfo t;
    t.file = file_;
    t.events = events_;
    for (const auto pid : hardware_pids_) {
      const auto it = x_by_pid_.find(pid);
      if (it != x_by_pid_.end()) t.device_tasks += it->second;
    }
    t.aicore_freq_mhz = info_.aicore_freq_mhz;
    t.aicore_freq_samples = freq_samples_;
    return t;
  }
};

}  // namespace

TraceInfo read_trace_json(const fs::path& file) {
  // The same streaming read, strict: a summary is of the whole file or nothing.
  TraceReader r(file, ReadOptions{true});
  (void)r.run([](const KernelRow&) {});
  return r.summary();
}

KernelFileInfo read_trace_kernels(const fs::path& file,
                                  const std::function<void(const KernelRow&)>& on_row,
                                  const ReadOptions& options) {
  TraceReader r(file, options);
  return r.run(on_row);
}

}  // namespace npusim::profile
