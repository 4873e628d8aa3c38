#include "fuzz/fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace npusim::fuzz {
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("npusim_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);  // best effort: a crash leaves the folder for the post-mortem
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

const fs::path& scratch_dir() {
  static const Scratch scratch;
  return scratch.dir;
}

fs::path write_file(const std::string& name, const std::uint8_t* data, std::size_t size) {
  fs::path path = scratch_dir() / name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("fuzz: cannot write " + path.string());
  const bool ok = size == 0 || std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("fuzz: cannot write " + path.string());
  return path;
}

fs::path write_file(const std::string& name, std::string_view text) {
  return write_file(name, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

fs::path source_dir() { return fs::path(NPUSIM_SOURCE_DIR); }

}  // namespace npusim::fuzz
