#pragma once
// Runs the built npusim binary and captures exit code, stdout and stderr (for CLI tests).

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace npusim::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `args` is appended to the binary path as is (quote what needs quoting).
inline CliResult run_cli(const std::string& args, const std::string& cwd = "") {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("npusim_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir);
  const std::string cmd = (cwd.empty() ? std::string() : "cd '" + cwd + "' && ") +
                          std::string(NPUSIM_BINARY) + " " + args + " >'" + (dir / "out").string() +
                          "' 2>'" + (dir / "err").string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_all(dir / "out");
  r.err = read_all(dir / "err");
  fs::remove_all(dir);
  return r;
}

}  // namespace npusim::test
