#include "profile/discover.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "model/error.h"
#include "profile/db_reader.h"
#include "profile/mindspore_reader.h"

namespace npusim::profile {

namespace fs = std::filesystem;

std::vector<fs::path> ProfileSource::files() const {
  std::vector<fs::path> out = kernel_files;
  for (const auto* f : {&op_statistic, &task_time, &api_statistic, &pcie, &trace_json,
                        &profiler_info, &database, &communication_json, &profiler_metadata}) {
    if (*f && std::find(out.begin(), out.end(), **f) == out.end()) out.push_back(**f);
  }
  return out;
}

namespace {

enum class FileRole {
  kNone, kKernel, kOpStatistic, kTaskTime, kApiStatistic, kPcie, kTrace, kInfo, kDatabase,
  kCommunication, kMetadata
};

bool starts_with(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, std::string_view p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// File names as msprof (op_summary_<ts>.csv, op_summary_slice_0_<ts>.csv, op_summary_0_1_1.csv)
// and torch_npu (kernel_details.csv, trace_view.json, profiler_info_<rank>.json) write them.
FileRole role_of(const fs::path& p) {
  const std::string n = p.filename().string();
  if (ends_with(n, ".csv")) {
    if (starts_with(n, "op_summary") || starts_with(n, "kernel_details") ||
        n == "OpBasicInfo.csv") {
      return FileRole::kKernel;
    }
    if (starts_with(n, "op_statistic")) return FileRole::kOpStatistic;
    if (starts_with(n, "task_time")) return FileRole::kTaskTime;
    if (starts_with(n, "api_statistic")) return FileRole::kApiStatistic;
    if (starts_with(n, "pcie")) return FileRole::kPcie;
  } else if (ends_with(n, ".json")) {
    if (n == "trace_view.json" || (starts_with(n, "msprof_") && !starts_with(n, "msprof_tx")))
      return FileRole::kTrace;
    if (starts_with(n, "profiler_info")) return FileRole::kInfo;
    if (n == "communication.json") return FileRole::kCommunication;
    if (n == "profiler_metadata.json") return FileRole::kMetadata;
  } else if (is_profiler_db_name(n)) {
    return FileRole::kDatabase;
  }
  return FileRole::kNone;
}

bool is_prof_dir(const fs::path& p) { return starts_with(p.filename().string(), "PROF_"); }
bool is_ascend_pt_dir(const fs::path& p) { return ends_with(p.filename().string(), "_ascend_pt"); }

void put(ProfileSource& s, FileRole role, const fs::path& file, std::vector<std::string>& notes) {
  auto set = [&](std::optional<fs::path>& slot, const char* what) {
    if (slot && *slot != file) {
      // Several exports in one folder: the later name (timestamps sort) wins, and we say so.
      const fs::path keep = std::max(*slot, file);
      notes.push_back(fmt::format("{}: several {} files; using {}", s.name, what,
                                  keep.filename().string()));
      slot = keep;
      return;
    }
    slot = file;
  };
  switch (role) {
    case FileRole::kKernel: s.kernel_files.push_back(file); break;
    case FileRole::kOpStatistic: set(s.op_statistic, "op_statistic"); break;
    case FileRole::kTaskTime: set(s.task_time, "task_time"); break;
    case FileRole::kApiStatistic: set(s.api_statistic, "api_statistic"); break;
    case FileRole::kPcie: set(s.pcie, "pcie"); break;
    case FileRole::kTrace: set(s.trace_json, "timeline JSON"); break;
    case FileRole::kInfo: set(s.profiler_info, "profiler_info"); break;
    case FileRole::kDatabase: set(s.database, "profiler database"); break;
    case FileRole::kCommunication: set(s.communication_json, "communication.json"); break;
    case FileRole::kMetadata: set(s.profiler_metadata, "profiler_metadata"); break;
    case FileRole::kNone: break;
  }
}

// The name of a profile: the nearest PROF_* or *_ascend_pt ancestor (with the path below it),
// relative to where the search started.
std::string profile_name(const fs::path& folder, const fs::path& search_root) {
  fs::path anchor;
  for (fs::path p = folder; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (is_ascend_pt_dir(p) || is_prof_dir(p)) {
      anchor = p;
      break;
    }
  }
  const fs::path base = anchor.empty() ? folder : anchor;
  std::error_code ec;
  fs::path rel = fs::relative(base, search_root, ec);
  std::string name = (ec || rel.empty() || rel == ".") ? base.filename().string() : rel.string();
  // Keep device_N and similar below the anchor so two devices of one PROF_ stay apart.
  if (!anchor.empty() && folder != anchor) {
    const fs::path below = fs::relative(folder, anchor, ec);
    std::string tail;
    for (const auto& part : below) {
      const std::string s = part.string();
      if (starts_with(s, "device_") || starts_with(s, "rank")) tail += "/" + s;
    }
    name += tail;
  }
  return name.empty() ? folder.string() : name;
}

// The per-op source when there is no CSV kernel table: the database, else the timeline.
void choose_kernel_source(ProfileSource& s) {
  if (!s.kernel_files.empty()) return;
  if (s.database) {
    s.kernel_files.push_back(*s.database);
    s.kernel_source = "db";
  } else if (s.trace_json) {
    s.kernel_files.push_back(*s.trace_json);
    s.kernel_source = "trace";
  }
}

// The PROF_* or *_ascend_pt folder a profile folder belongs to (itself when it is none).
fs::path anchor_of(const fs::path& folder) {
  for (fs::path p = folder; !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (is_ascend_pt_dir(p) || is_prof_dir(p)) return p;
  }
  return folder;
}

}  // namespace

Discovery discover_profiles(const fs::path& path, const ReadOptions& read) {
  std::error_code ec;
  const std::string shown = path.string();
  if (!fs::exists(path, ec)) throw InputError({shown, 0, 0}, "no such file or folder");
  Discovery d;

  if (fs::is_regular_file(path, ec)) {
    ProfileSource s;
    s.name = path.filename().string();
    s.folder = path.parent_path();
    s.producer = "file";
    FileRole role = role_of(path);
    // A CSV under another name is read as a kernel table: if it is not one, the reader's error
    // (wrong delimiter, missing columns listed with the columns found) says what is wrong.
    if (role == FileRole::kNone && path.extension() == ".csv") role = FileRole::kKernel;
    if (role == FileRole::kNone) {
      throw InputError({shown, 0, 0},
                       "not a profiler file npusim reads: expected op_summary_*.csv, "
                       "kernel_details.csv, op_statistic*.csv, task_time_*.csv, "
                       "api_statistic*.csv, pcie_*.csv, ascend_pytorch_profiler_*.db, "
                       "msprof_*.db, msprof_*.json or trace_view.json");
    }
    if (role != FileRole::kKernel && role != FileRole::kOpStatistic &&
        role != FileRole::kDatabase && role != FileRole::kTrace) {
      throw InputError({shown, 0, 0},
                       "this file alone holds no per-op times: point at an op_summary / "
                       "kernel_details / op_statistic / profiler .db / timeline JSON file, or at "
                       "the profile folder");
    }
    put(s, role, path, d.notes);
    choose_kernel_source(s);
    s.read = read;
    d.profiles.push_back(std::move(s));
    return d;
  }

  // Group the files by the folder they sit in: one folder of summaries = one device or rank.
  std::map<fs::path, std::vector<std::pair<FileRole, fs::path>>> by_folder;
  std::vector<fs::path> infos;  // profiler_info_*.json sit one level above ASCEND_PROFILER_OUTPUT
  std::vector<fs::path> metadata;  // so does profiler_metadata.json
  std::vector<fs::path> mindspore;  // CSVs beside an aicore_intermediate_<N>_detail.csv
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw InputError({shown, 0, 0}, fmt::format("cannot list the folder: {}", ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 16) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    FileRole role = role_of(it->path());
    // MindSpore names its op table after the workload; a CSV is one when its folder holds the
    // AI Core time file and its header has full_op_name and op_info.
    if (role == FileRole::kNone && it->path().extension() == ".csv" &&
        !is_mindspore_times_name(it->path().filename().string())) {
      mindspore.push_back(it->path());
      continue;
    }
    if (role == FileRole::kNone) continue;
    if (role == FileRole::kInfo) {
      infos.push_back(it->path());
      continue;
    }
    if (role == FileRole::kMetadata) {
      metadata.push_back(it->path());
      continue;
    }
    by_folder[it->path().parent_path()].emplace_back(role, it->path());
  }

  std::set<fs::path> mindspore_folders;
  std::map<fs::path, bool> has_times;  // folder -> holds an aicore_intermediate_<N>_detail.csv
  for (const auto& file : mindspore) {
    auto [slot, fresh] = has_times.emplace(file.parent_path(), false);
    if (fresh) {
      for (fs::directory_iterator di(file.parent_path(), ec), end; !ec && di != end;
           di.increment(ec)) {
        slot->second = slot->second || is_mindspore_times_name(di->path().filename().string());
      }
    }
    if (slot->second && looks_like_mindspore_op_table(file)) {
      by_folder[file.parent_path()].emplace_back(FileRole::kKernel, file);
      mindspore_folders.insert(file.parent_path());
    }
  }

  // torch_npu keeps the raw msprof data (PROF_*) inside *_ascend_pt next to its own
  // ASCEND_PROFILER_OUTPUT: the same kernels twice. Prefer ASCEND_PROFILER_OUTPUT.
  std::vector<fs::path> torch_roots;
  for (const auto& [folder, files] : by_folder) {
    if (folder.filename() == "ASCEND_PROFILER_OUTPUT") torch_roots.push_back(folder.parent_path());
  }
  for (auto& [folder, files] : by_folder) {
    bool shadowed = false;
    for (const auto& root : torch_roots) {
      const auto rel = fs::relative(folder, root, ec);
      if (!ec && !rel.empty() && *rel.begin() != ".." && is_prof_dir(root / *rel.begin())) {
        shadowed = true;
      }
    }
    const std::string name = profile_name(folder, path);
    if (shadowed) {
      d.notes.push_back(fmt::format("{}: raw msprof output inside a torch_npu folder, "
                                    "ASCEND_PROFILER_OUTPUT used instead",
                                    fs::relative(folder, path, ec).string()));
      continue;
    }
    ProfileSource s;
    s.name = name;
    s.folder = folder;
    s.producer = folder.filename() == "ASCEND_PROFILER_OUTPUT" ? "torch_npu"
                 : mindspore_folders.count(folder)                 ? "mindspore"
                                                                    : "msprof";
    std::sort(files.begin(), files.end());
    for (const auto& [role, file] : files) put(s, role, file, d.notes);
    std::sort(s.kernel_files.begin(), s.kernel_files.end());
    for (const auto& info : infos) {
      if (info.parent_path() == folder.parent_path() || info.parent_path() == folder) {
        s.profiler_info = info;
      }
    }
    for (const auto& m : metadata) {
      if (m.parent_path() == folder.parent_path() || m.parent_path() == folder) {
        s.profiler_metadata = m;
      }
    }
    choose_kernel_source(s);
    s.read = read;
    if (s.kernel_files.empty() && !s.op_statistic) {
      // A timeline-only folder without the hardware track is still passed over here: the
      // profile_info / api files alone hold no per-op times.
      d.notes.push_back(fmt::format("{}: no op_summary / kernel_details / op_statistic / "
                                    "profiler database / timeline file, skipped",
                                    name));
      continue;
    }
    if (s.kernel_files.size() > 1) {
      d.notes.push_back(fmt::format("{}: {} kernel tables read as one (slices)", name,
                                    s.kernel_files.size()));
    }
    d.profiles.push_back(std::move(s));
  }
  // msprof writes PROF_*/msprof_<ts>.db beside PROF_*/mindstudio_profiler_output/*.csv: one
  // profile read twice. A database- or timeline-only folder whose PROF_* / *_ascend_pt holds a
  // CSV kernel table elsewhere is dropped.
  std::vector<fs::path> csv_anchors;
  for (const auto& p : d.profiles) {
    if (p.kernel_source == "csv" && !p.kernel_files.empty()) {
      csv_anchors.push_back(anchor_of(p.folder));
    }
  }
  std::vector<ProfileSource> kept;
  for (auto& p : d.profiles) {
    const fs::path a = anchor_of(p.folder);
    if (p.kernel_source != "csv" &&
        std::find(csv_anchors.begin(), csv_anchors.end(), a) != csv_anchors.end()) {
      d.notes.push_back(fmt::format("{}: {} not read, the CSV kernel table of the same profile "
                                    "is",
                                    p.name, p.kernel_files.front().filename().string()));
      continue;
    }
    kept.push_back(std::move(p));
  }
  d.profiles = std::move(kept);
  if (d.profiles.empty()) {
    throw InputError({shown, 0, 0},
                     "no profile found: expected a PROF_* folder (mindstudio_profiler_output/"
                     "op_summary_*.csv or msprof_*.db), a *_ascend_pt folder "
                     "(ASCEND_PROFILER_OUTPUT/kernel_details.csv, ascend_pytorch_profiler_*.db "
                     "or trace_view.json), a MindSpore folder (<workload>.csv with op_info beside "
                     "aicore_intermediate_<N>_detail.csv) or such a file");
  }
  std::sort(d.profiles.begin(), d.profiles.end(),
            [](const ProfileSource& a, const ProfileSource& b) { return a.name < b.name; });
  return d;
}

}  // namespace npusim::profile
