// The shared TOML reader: typed getters, ranges, positions, unknown keys. Each case parses a
// small document from a string, so the expected line:col can be read off the test itself.
#include "model/toml_reader.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/error.h"

using npusim::InputError;
using npusim::parse_toml_string;
using npusim::TableReader;
using npusim::TomlFile;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

TEST_CASE("a number may be written as a TOML integer or float", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("a = 3\nb = 2.5\n", "t.toml");
  TableReader r(doc);
  CHECK(r.number("a", 0, kInf) == 3.0);
  CHECK(r.number("b", 0, kInf) == 2.5);
  CHECK_NOTHROW(r.finish());
}

TEST_CASE("range errors name the interval with open and closed ends", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("[cube]\nx = 0\ny = 1.5\nz = -1\n", "t.toml");
  TableReader cube = TableReader(doc).sub_table("cube");
  CHECK_THROWS_WITH((void)cube.number("x", 0, 1, true, false),
                    "t.toml:2:5: error: [cube].x: expected a number in (0, 1], got 0");
  CHECK_THROWS_WITH((void)cube.number("y", 0, 1, false, true),
                    "t.toml:3:5: error: [cube].y: expected a number in [0, 1), got 1.5");
  CHECK_THROWS_WITH((void)cube.number("z", 0, kInf, true, false),
                    "t.toml:4:5: error: [cube].z: expected a number > 0, got -1");
  CHECK_THROWS_WITH((void)cube.number("z", -kInf, -2),
                    "t.toml:4:5: error: [cube].z: expected a number <= -2, got -1");
  CHECK(cube.number("x", 0, 1) == 0.0);  // closed bound accepts the bound
}

TEST_CASE("nan and inf are rejected even without bounds", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("a = nan\nb = -inf\n", "t.toml");
  TableReader r(doc);
  CHECK_THROWS_WITH((void)r.number("a", -kInf, kInf),
                    "t.toml:1:5: error: a: expected a finite number, got nan");
  CHECK_THROWS_WITH((void)r.optional_number("b", -kInf, kInf),
                    "t.toml:2:5: error: b: expected a finite number, got -inf");
}

TEST_CASE("integers reject floats and out-of-range values", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("n = 2.0\nm = 9\n", "t.toml");
  TableReader r(doc);
  CHECK_THROWS_WITH((void)r.integer("n", 1, 8),
                    "t.toml:1:5: error: n: expected an integer in [1, 8], got a float");
  CHECK_THROWS_WITH((void)r.integer("m", 1, 8),
                    "t.toml:2:5: error: m: expected an integer in [1, 8], got 9");
  CHECK(r.integer("m", 1, std::numeric_limits<std::int64_t>::max()) == 9);
}

TEST_CASE("a missing required key is reported at its table", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("\n[memory]\nblock_bytes = 32\n", "t.toml");
  TableReader mem = TableReader(doc).sub_table("memory");
  CHECK_THROWS_WITH((void)mem.string("kind"),
                    "t.toml:2:1: error: [memory]: missing required key 'kind'");
  CHECK_FALSE(mem.optional_boolean("flag").has_value());
  CHECK_THROWS_WITH((void)TableReader(doc).sub_table("host"),
                    "t.toml:1:1: error: top level: missing required table [host]");
}

TEST_CASE("finish names the first unknown key and every accepted key, sorted", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("[s]\nb = 1\ntypo = 2\nalso = 3\n", "t.toml");
  TableReader s = TableReader(doc).sub_table("s");
  (void)s.integer("b", 0, 9);
  (void)s.optional_integer("a", 0, 9);  // absent but accepted
  s.accept({"c"});
  CHECK_THROWS_WITH(s.finish(),
                    "t.toml:3:1: error: [s]: unknown key 'typo'; accepted keys: a, b, c");
  CHECK(s.accepted_keys() == std::vector<std::string>{"a", "b", "c"});
  CHECK(s.keys() == std::vector<std::string>{"b", "typo", "also"});
}

TEST_CASE("wrong value types say what was found", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("s = 1\nb = \"yes\"\nt = 3\n", "t.toml");
  TableReader r(doc);
  CHECK_THROWS_WITH((void)r.string("s"), "t.toml:1:5: error: s: expected a string, got an integer");
  CHECK_THROWS_WITH((void)r.boolean("b"), "t.toml:2:5: error: b: expected a boolean, got a string");
  CHECK_THROWS_WITH((void)r.sub_table("t"),
                    "t.toml:3:5: error: t: expected a table, got an integer");
}

TEST_CASE("arrays are checked element by element", "[toml_reader]") {
  const TomlFile doc =
      parse_toml_string("w = [0.5, 0.25]\nn = [1, 2, 0]\ns = [\"a\", 1]\n", "t.toml");
  TableReader r(doc);
  CHECK(r.number_array("w", 0, 1) == std::vector<double>{0.5, 0.25});
  CHECK_THROWS_WITH((void)r.integer_array("n", 1, 10),
                    "t.toml:2:12: error: n[2]: expected an integer in [1, 10], got 0");
  CHECK_THROWS_WITH((void)r.string_array("s"),
                    "t.toml:3:11: error: s[1]: expected a string, got an integer");
}

TEST_CASE("arrays of tables give one reader per element with its own path", "[toml_reader]") {
  const TomlFile doc =
      parse_toml_string("[[op]]\ntype = \"Add\"\n[[op]]\ntyp = \"Mul\"\n", "g.toml");
  TableReader root(doc);
  std::vector<TableReader> ops = root.table_array("op");
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].string("type") == "Add");
  CHECK_NOTHROW(ops[0].finish());
  CHECK(ops[1].path() == "op[1]");
  CHECK_THROWS_WITH((void)ops[1].string("type"),
                    "g.toml:3:1: error: [op[1]]: missing required key 'type'");
  CHECK(root.table_array("absent").empty());
}

TEST_CASE("syntax errors carry the parser's position and description", "[toml_reader]") {
  CHECK_THROWS_WITH(parse_toml_string("a = 1\nb = = 2\n", "t.toml"),
                    Catch::Matchers::StartsWith("t.toml:2:5: error: "));
  CHECK_THROWS_WITH(npusim::parse_toml_file("/nonexistent/x.toml"),
                    "/nonexistent/x.toml: error: cannot open file: no such file");
}

TEST_CASE("fail points at a value that a cross-field check rejects", "[toml_reader]") {
  const TomlFile doc = parse_toml_string("[chip]\ncube = 8\nvector = 7\n", "t.toml");
  TableReader chip = TableReader(doc).sub_table("chip");
  CHECK_THROWS_WITH(chip.fail("vector", "must equal cube (8)"),
                    "t.toml:3:10: error: [chip].vector: must equal cube (8)");
  CHECK_THROWS_AS(chip.fail_table("x"), InputError);
}

TEST_CASE("non-ASCII text is read in strings, quoted keys and comments and refused elsewhere",
          "[toml_reader][fuzz]") {
  // Allowed by TOML and read as written.
  const TomlFile ok = parse_toml_string(
      "# 1.2 µs per launch, Übertragung\nname = \"Ascend 910B — µarch\"\n\"ключ\" = 'é'\n"
      "text = \"\"\"\nΩ\"\"\"\"\nlit = '''\nЖ'''  # ж\n",
      "t.toml");
  CHECK(ok.root["name"].value_or(std::string()) == "Ascend 910B — µarch");
  CHECK(ok.root["ключ"].value_or(std::string()) == "é");
  CHECK(ok.root["text"].value_or(std::string()) == "Ω\"");
  CHECK(ok.root["lit"].value_or(std::string()) == "Ж");
  // Where toml++ 3.3 reaches undefined behaviour (fuzz_hw_spec's finding: a Cyrillic letter in
  // a table name), a file:line:col error instead.
  CHECK_THROWS_WITH(parse_toml_string("a = 1\n[intervals\xD0\x9E]\np90 = 1\n", "t.toml"),
                    Catch::StartsWith("t.toml:2:11: error: a non-ASCII character outside a "
                                      "string or comment"));
  CHECK_THROWS_WITH(parse_toml_string("x = 1 \xC2\xA7\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:7: error:"));
  CHECK_THROWS_WITH(parse_toml_string("s = \"\"\"\\\n  \xC2\xA7\"\"\"\n", "t.toml"),
                    Catch::StartsWith("t.toml:2:3: error: a non-ASCII character right after a "
                                      "line-ending backslash"));
  // A quote where TOML has no string (after '-') opens none for toml++ either, which then runs
  // its whitespace test over what follows (fuzz_graph's finding): checked as plain text.
  CHECK_THROWS_WITH(parse_toml_string("e=-\"\xD1\x8A\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:5: error: a non-ASCII character outside a "
                                      "string or comment"));
  // A '[' after a value opens no array, so the quote after it opens no string for toml++
  // (fuzz_graph's second finding, `e=2['` and a Greek letter): plain text again.
  CHECK_THROWS_WITH(parse_toml_string("e=2['*\xCD\x9B'\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:7: error: a non-ASCII character outside a "
                                      "string or comment"));
  CHECK_THROWS_WITH(parse_toml_string("e=2.'\xD1\x8A'\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:6: error: a non-ASCII character outside a "));
  CHECK_THROWS_WITH(parse_toml_string("e=2,'\xD1\x8A'\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:6: error: a non-ASCII character outside a "));
  // A backslash before a non-ASCII character is no escape; toml++ 3.3 reaches its UB while
  // saying so (fuzz_graph's third finding), so the guard says it first, in either string kind.
  CHECK_THROWS_WITH(parse_toml_string("s = \"\"\"\\\\\\\xEF\xBA\xBF\"\"\"\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:11: error: a non-ASCII character after a "
                                      "backslash is no TOML escape"));
  CHECK_THROWS_WITH(parse_toml_string("s = \"\\\xC2\xA7\"\n", "t.toml"),
                    Catch::StartsWith("t.toml:1:7: error: a non-ASCII character after a "));
  // Strings in every place TOML has them stay strings.
  const TomlFile places = parse_toml_string(
      "a.\"é\".c = [\"ж\", 'ü']\n[\"τ\"]\nt = { k = \"ø\" }\n", "t.toml");
  CHECK(places.root["a"]["é"]["c"][1].value_or(std::string()) == "ü");
  CHECK(places.root["τ"]["t"]["k"].value_or(std::string()) == "ø");
  const TomlFile nested = parse_toml_string(
      "[[\"ä\".'ö']]\nm = [\n  'ü',\n  [\"é\"],\n  { \"ß\" = \"ø\", t.'ñ' = 1 },\n]\n", "t.toml");
  const auto* list = nested.root["ä"]["ö"].as_array();
  REQUIRE(list != nullptr);
  CHECK((*list)[0].as_table()->at("m").as_array()->size() == 3);
  CHECK((*(*list)[0].as_table())["m"][2]["ß"].value_or(std::string()) == "ø");
  // An ordinary escape in a multi-line string is content, not a line ending.
  CHECK(parse_toml_string("s = \"\"\"a\\\"\xC2\xA7\"\"\"\n", "t.toml").root["s"].value_or(
            std::string()) == "a\"\xC2\xA7");
}
