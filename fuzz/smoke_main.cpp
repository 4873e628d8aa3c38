// The `main` of the fuzz smoke (fuzz/README.md): every harness's LLVMFuzzerTestOneInput, renamed
// and compiled into this one program without libFuzzer (fuzz/CMakeLists.txt), in the ci build
// (ASan+UBSan), so CI keeps every harness compiling and running without a second,
// coverage-instrumented build of the libraries. It runs the named harness on every seed, then
// mutates seeds at random (bit flips, byte insertions and deletions, copied and cut ranges,
// truncation) until its time is up. No coverage guidance: this keeps harnesses from rotting;
// finding defects is scripts/fuzz.sh's work.
//
//   fuzz_smoke HARNESS SECONDS RNG_SEED SEED_FILE_OR_FOLDER...
//
// A folder's files are taken recursively. A seed ending in .sql stands for the SQLite database
// it creates (the repository keeps no binary database). Before it dies, a sanitizer report
// leaves the input in ./smoke-crash-<harness> (run it again with SECONDS 0 and that file).
#include <sqlite3.h>

#include <algorithm>
#include <exception>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/smoke_harnesses.h"

// The sanitizer runtime's, when one is linked (weak: the smoke also builds without sanitizers).
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

Bytes g_current;          // the input being run, for the death callback
std::string g_crash_file;  // where it goes

void on_death() {
  if (std::FILE* f = std::fopen(g_crash_file.c_str(), "wb")) {
    std::fwrite(g_current.data(), 1, g_current.size(), f);
    std::fclose(f);
    std::fprintf(stderr, "fuzz smoke: input written to %s\n", g_crash_file.c_str());
  }
}

Bytes read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The bytes of the database a .sql seed creates, through an in-memory SQLite.
Bytes database_from_sql(const fs::path& p) {
  const Bytes sql = read_bytes(p);
  const std::string text(sql.begin(), sql.end());
  sqlite3* db = nullptr;
  Bytes out;
  if (sqlite3_open(":memory:", &db) == SQLITE_OK &&
      sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK) {
    sqlite3_int64 size = 0;
    if (unsigned char* image = sqlite3_serialize(db, "main", &size, 0)) {
      out.assign(image, image + size);
      sqlite3_free(image);
    }
  }
  sqlite3_close(db);
  if (out.empty()) std::cerr << "fuzz smoke: warning: " << p << " made no database\n";
  return out;
}

void add_seed(const fs::path& p, std::vector<Bytes>& seeds) {
  seeds.push_back(p.extension() == ".sql" ? database_from_sql(p) : read_bytes(p));
}

Bytes mutate(Bytes b, std::mt19937_64& rng) {
  const auto pick = [&](std::size_t n) {
    return n == 0 ? std::size_t{0} : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const std::size_t edits = 1 + pick(4);
  for (std::size_t e = 0; e < edits; ++e) {
    switch (pick(6)) {
      case 0:  // flip a bit
        if (!b.empty()) b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
        break;
      case 1:  // insert a byte, often one that matters to a parser
      {
        static constexpr std::uint8_t kSpecial[] = {',', '"', '\n', '=', '[', ']', '{', '}',
                                                    ':', '-', '0', '9', 0,   0xFF, 0xD0, '\\'};
        const auto v = pick(2) == 0 ? kSpecial[pick(sizeof kSpecial)]
                                    : static_cast<std::uint8_t>(pick(256));
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), v);
        break;
      }
      case 2:  // delete a range
        if (!b.empty()) {
          const std::size_t at = pick(b.size());
          const std::size_t n = 1 + pick(std::min<std::size_t>(64, b.size() - at));
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
                  b.begin() + static_cast<std::ptrdiff_t>(at + n));
        }
        break;
      case 3:  // copy a range elsewhere
        if (!b.empty() && b.size() < (1u << 20)) {
          const std::size_t at = pick(b.size());
          const std::size_t n = 1 + pick(std::min<std::size_t>(256, b.size() - at));
          const Bytes part(b.begin() + static_cast<std::ptrdiff_t>(at),
                           b.begin() + static_cast<std::ptrdiff_t>(at + n));
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), part.begin(),
                   part.end());
        }
        break;
      case 4:  // cut the end off
        b.resize(pick(b.size() + 1));
        break;
      default:  // overwrite a digit with another, a number's edge
        for (std::size_t tries = 0; tries < 16 && !b.empty(); ++tries) {
          std::uint8_t& c = b[pick(b.size())];
          if (c >= '0' && c <= '9') {
            c = static_cast<std::uint8_t>('0' + pick(10));
            break;
          }
        }
        break;
    }
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const auto& harnesses = npusim::fuzz::smoke_harnesses();
  const auto harness =
      argc < 2 ? harnesses.end()
               : std::find_if(harnesses.begin(), harnesses.end(),
                              [&](const auto& h) { return std::string(h.name) == argv[1]; });
  if (argc < 5 || harness == harnesses.end()) {
    std::cerr << "usage: " << argv[0] << " HARNESS SECONDS RNG_SEED SEED_FILE_OR_FOLDER...\n"
              << "harnesses:";
    for (const auto& h : harnesses) std::cerr << " " << h.name;
    std::cerr << "\n";
    return 2;
  }
  const double seconds = std::stod(argv[2]);
  std::mt19937_64 rng(std::stoull(argv[3]));
  g_crash_file = std::string("smoke-crash-") + harness->name;
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(on_death);

  std::vector<Bytes> seeds;
  for (int i = 4; i < argc; ++i) {
    const fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // the same order on every machine
      for (const auto& f : files) add_seed(f, seeds);
    } else if (fs::is_regular_file(p)) {
      add_seed(p, seeds);
    } else {
      std::cerr << "fuzz smoke: no such seed file or folder: " << p << "\n";
      return 2;
    }
  }
  if (seeds.empty()) {
    std::cerr << "fuzz smoke: no seeds\n";
    return 2;
  }
  std::size_t runs = 0;
  // A harness lets only InputError through its catch; anything else escaping is a finding.
  const auto run = [&](Bytes input) {
    g_current = std::move(input);
    try {
      harness->run(g_current.data(), g_current.size());
    } catch (const std::exception& e) {
      std::cerr << "fuzz smoke: uncaught exception: " << e.what() << "\n";
      on_death();
      return false;
    }
    ++runs;
    return true;
  };
  for (const Bytes& s : seeds) {
    if (!run(s)) return 1;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (!run(mutate(seeds[rng() % seeds.size()], rng))) return 1;
  }
  std::cout << "fuzz smoke: " << harness->name << ": " << runs << " inputs (" << seeds.size() << " seeds) in " << seconds
            << " s\n";
  return 0;
}
