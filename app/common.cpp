#include "app/common.h"

#include <fmt/format.h>

#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>
#include <system_error>

#include "frontend/import.h"
#include "model/error.h"
#include "model/graph_source.h"

namespace npusim::app {

namespace fs = std::filesystem;

std::vector<fs::path> data_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("NPUSIM_DATA_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  dirs.emplace_back(NPUSIM_INSTALL_DATA_DIR);
  dirs.emplace_back(NPUSIM_SOURCE_DATA_DIR);
  return dirs;
}

std::vector<fs::path> hw_spec_dirs() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& d : data_dirs()) {
    if (fs::is_directory(d / "hw_specs", ec)) out.push_back(d / "hw_specs");
  }
  return out;
}

HwSpec load_hw(const std::string& name_or_path, const std::vector<std::string>& overlays) {
  const fs::path file = resolve_hw_spec(name_or_path, hw_spec_dirs());
  std::vector<fs::path> ov(overlays.begin(), overlays.end());
  return load_hw_spec(file, ov);
}

Correction load_correction(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "cannot open the correction file for reading");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Correction::parse(text, path);
}

void write_output_file(const fs::path& path, const std::string& content) {
  if (path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  fs::path tmp = path;
  tmp += ".npusim-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      // The folder is missing or not writable: say which (errno from the failed open).
      throw InputError({path.string(), 0, 0},
                       fmt::format("cannot open for writing: {}", std::strerror(errno)));
    }
    out << content;
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      throw InputError({path.string(), 0, 0}, "write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();  // e.g. "Is a directory"
    fs::remove(tmp, ec);
    throw InputError({path.string(), 0, 0},
                     "cannot rename the finished output into place: " + why);
  }
}

fs::path resolve_scenario(const std::string& given) {
  std::error_code ec;
  if (fs::is_regular_file(given, ec)) return given;
  if (given.find('/') == std::string::npos) {
    const std::string file = fs::path(given).extension() == ".toml" ? given : given + ".toml";
    for (const fs::path& d : data_dirs()) {
      if (fs::is_regular_file(d / "scenarios" / file, ec)) return d / "scenarios" / file;
    }
  }
  throw InputError({given, 0, 0}, "no such scenario file (nor a bundled scenario of that name)");
}

std::function<std::string(const std::string&)> finite_range(double lo, double hi) {
  return [lo, hi](const std::string& text) -> std::string {
    double v = 0;
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || p != end || !std::isfinite(v) || v < lo || v > hi) {
      return fmt::format("'{}': expected a finite number in [{}, {}]", text, lo, hi);
    }
    return {};
  };
}

void warn(const std::string& what) { std::cerr << "warning: " << what << '\n'; }

void install_model_importer() {
  set_model_file_importer([](const ModelFileRequest& req) {
    frontend::OnnxImportOptions o;
    o.batch_dim = req.batch_dim;
    o.set_dims = req.dims;
    frontend::ImportResult r;
    try {
      r = frontend::import_onnx(req.file, o);
    } catch (const InputError& e) {
      // Say which scenario line led there, then the importer's own diagnosis.
      throw InputError(req.pos, fmt::format("[graph].onnx: {}", e.what()));
    }
    // Sweeps load the scenario once per point, on several threads: warn once per file.
    static std::mutex mu;
    static std::set<std::string> warned;
    const std::lock_guard<std::mutex> lock(mu);
    if (warned.insert(req.file.string()).second) {
      for (const auto& w : r.warnings) warn(req.file.string() + ": " + frontend::format_warning(w));
    }
    return std::move(r.graph);
  });
}

}  // namespace npusim::app
