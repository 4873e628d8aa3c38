// Op defects written in a file (a graph's op table) are reported at that file's line, with the
// same words as on the command line (tests/app/cli_test.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "model/graph.h"

using namespace npusim;

namespace {

std::string load_error(const std::string& name) {
  const std::string path = std::string(NPUSIM_TEST_DATA_DIR) + "/bad/" + name;
  try {
    (void)load_graph_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string at(const std::string& name, int line, int col) {
  return std::string(NPUSIM_TEST_DATA_DIR) + "/bad/" + name + ":" + std::to_string(line) + ":" +
         std::to_string(col) + ": error: ";
}

}  // namespace

TEST_CASE("op files with a bad dimension, dtype or count fail with their exact file:line message",
          "[op_desc][bad]") {
  CHECK(load_error("op_zero_dim.toml") ==
        at("op_zero_dim.toml", 5, 1) + "shape 0 '4,0': dimension 0 must be > 0");
  CHECK(load_error("op_negative_dim.toml") ==
        at("op_negative_dim.toml", 5, 1) + "shape 0 '4,-3': dimension -3 must be > 0");
  CHECK(load_error("op_overflow.toml") ==
        at("op_overflow.toml", 5, 1) +
            "shape 0 '4294967296,4294967296': element count overflows 64 bits");
  CHECK(load_error("op_unknown_dtype.toml").rfind(
            at("op_unknown_dtype.toml", 5, 1) + "unknown dtype 'FLOAT17'; accepted: FLOAT16", 0) == 0);
  CHECK(load_error("op_count_mismatch.toml") ==
        at("op_count_mismatch.toml", 5, 1) +
            "inputs: 3 shapes but 2 dtypes; give one dtype per shape (or one for all)");
}
