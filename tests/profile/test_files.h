#pragma once
// Helpers for profile tests: small CSV files written to a fresh temporary folder.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace npusim::test {

/// A temporary folder removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("npusim_profile_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Writes `content` byte for byte to `name` under the folder (creating sub-folders).
  std::filesystem::path write(const std::string& name, const std::string& content) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << content;
    return p;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string data_dir() { return NPUSIM_TEST_DATA_DIR; }
inline std::string crafted_msprof() {
  return data_dir() +
         "/profiles/msprof_crafted/PROF_000001_20260101000000000_CRAFTED/mindstudio_profiler_output/"
         "op_summary_20260101000000.csv";
}

}  // namespace npusim::test
