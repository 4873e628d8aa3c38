#pragma once
// A validated, position-aware reader over toml++ tables, shared by every TOML loader
// (hw specs, overlays, scenarios, graphs). CONVENTIONS.md: validate at load time into typed
// structs, report semantic errors at the exact file:line:col, reject unknown keys by naming the
// accepted ones, and never use value_or() for a required key.
//
// Usage:
//
//   const TomlFile doc = parse_toml_file("hw_specs/ascend910b3.toml");  // throws InputError
//   TableReader root(doc);
//   TableReader cube = root.sub_table("cube");                   // required [cube]
//   const double eff = cube.number("efficiency", 0, 1, /*lo_open=*/true, /*hi_open=*/false);
//   const auto tile = cube.optional_integer("tile_m", 1, 4096);  // std::optional<std::int64_t>
//   if (eff < 0.5) cube.fail("efficiency", "too low for a cube");  // error at the value
//   cube.finish();  // throws on the first key that was never asked for
//   root.finish();
//
// Errors read like a compiler diagnostic, e.g.
//   hw_specs/ascend910b3.toml:14:13: error: [cube].efficiency: expected a number in (0, 1], got 1.7
//   hw_specs/ascend910b3.toml:12:1: error: [cube]: missing required key 'efficiency'
//   hw_specs/ascend910b3.toml:13:1: error: [cube]: unknown key 'eficiency'; accepted keys: a, b, c
//
// A TableReader points into the TomlFile it was made from: keep the TomlFile alive while any
// reader of it is in use.

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace npusim {

/// One parsed TOML document and the file name errors will carry.
struct TomlFile {
  std::string file;  ///< path as the user gave it (used in every diagnostic)
  toml::table root;  ///< the document's top-level table
};

/// Reads and parses a TOML file. A missing or unreadable file, a directory, or a syntax error
/// becomes an InputError (syntax errors at the parser's line:col with its description).
[[nodiscard]] TomlFile parse_toml_file(const std::filesystem::path& file);

/// Parses TOML text; `file` is the name used in diagnostics (e.g. "<command line>").
[[nodiscard]] TomlFile parse_toml_string(std::string_view text, const std::string& file);

/// Refuses a non-ASCII character outside strings and comments (and right after a line-ending
/// backslash in a multi-line string) with an InputError at its line:col: TOML does not allow
/// it there, and toml++ 3.3 reaches undefined behaviour on some (model/toml_guard.cpp).
/// parse_toml_file and parse_toml_string call it; so must any other caller of toml::parse.
void check_toml_text(std::string_view text, const std::string& file);

/// The position of a toml++ node (or key) as a SourcePos in `file`.
[[nodiscard]] SourcePos toml_pos(const std::string& file, const toml::source_region& region);

/// "a string", "an integer", "a table", ... for messages.
[[nodiscard]] const char* toml_type_name(const toml::node& node) noexcept;

/// Typed, range-checked access to one table of a TomlFile. Every getter records the key as
/// accepted (whether or not it is present), so finish() can reject the keys nobody asked for.
class TableReader {
 public:
  /// The top-level table of `doc`.
  explicit TableReader(const TomlFile& doc);
  /// Any table inside a document: `path` is its dotted name ("vector.cycles_per_repeat"),
  /// empty for the top level.
  TableReader(const toml::table& table, std::string file, std::string path);

  /// Required number (TOML integer or float) in the range lo..hi; `lo_open`/`hi_open` exclude
  /// the bound. NaN and infinities are rejected. Use +-infinity for an unbounded side.
  [[nodiscard]] double number(std::string_view key, double lo, double hi, bool lo_open = false,
                              bool hi_open = false);
  /// Optional number, same checks; nullopt when the key is absent.
  [[nodiscard]] std::optional<double> optional_number(std::string_view key, double lo, double hi,
                                                      bool lo_open = false, bool hi_open = false);
  /// Required TOML integer in [lo, hi] (a float such as 2.0 is rejected).
  [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t lo, std::int64_t hi);
  /// Optional integer in [lo, hi].
  [[nodiscard]] std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t lo,
                                                             std::int64_t hi);
  /// Required string (may be empty).
  [[nodiscard]] std::string string(std::string_view key);
  /// Optional string.
  [[nodiscard]] std::optional<std::string> optional_string(std::string_view key);
  /// Required boolean.
  [[nodiscard]] bool boolean(std::string_view key);
  /// Optional boolean.
  [[nodiscard]] std::optional<bool> optional_boolean(std::string_view key);
  /// Required sub-table; a missing one is reported at this table's position.
  [[nodiscard]] TableReader sub_table(std::string_view key);
  /// Optional sub-table.
  [[nodiscard]] std::optional<TableReader> optional_sub_table(std::string_view key);
  /// Required array of numbers, each in lo..hi as for number(); may be empty.
  [[nodiscard]] std::vector<double> number_array(std::string_view key, double lo, double hi,
                                                 bool lo_open = false, bool hi_open = false);
  /// Required array of integers, each in [lo, hi]; may be empty.
  [[nodiscard]] std::vector<std::int64_t> integer_array(std::string_view key, std::int64_t lo,
                                                        std::int64_t hi);
  /// Required array of strings; may be empty.
  [[nodiscard]] std::vector<std::string> string_array(std::string_view key);
  /// Array of tables (`[[key]]`); empty when the key is absent. Element i has path "key[i]".
  [[nodiscard]] std::vector<TableReader> table_array(std::string_view key);

  /// Marks keys as accepted without reading them (e.g. keys another component reads).
  void accept(std::initializer_list<std::string_view> keys);
  /// Throws InputError at the first key (in document order) that no getter asked for, naming
  /// every accepted key, sorted.
  void finish() const;

  /// True when the key is present (does not mark it accepted).
  [[nodiscard]] bool has(std::string_view key) const;
  /// Keys present in the table, in document order.
  [[nodiscard]] std::vector<std::string> keys() const;
  /// The keys accepted so far, sorted.
  [[nodiscard]] std::vector<std::string> accepted_keys() const;

  /// Throws InputError "`[path].key`: `message`" at the key's value (or at the table when the
  /// key is absent). For cross-field checks after the value was read.
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  /// Throws InputError "`[path]`: `message`" at the table's position.
  [[noreturn]] void fail_table(const std::string& message) const;

  /// Position of the table itself.
  [[nodiscard]] SourcePos pos() const;
  /// Position of a present key's value; the table's position when absent.
  [[nodiscard]] SourcePos value_pos(std::string_view key) const;
  /// Dotted path of the table ("" for the top level).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The file diagnostics name.
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  /// The underlying table (for loaders with free-form content).
  [[nodiscard]] const toml::table& table() const noexcept { return *table_; }
  /// "[cube].efficiency" (top level: "efficiency").
  [[nodiscard]] std::string key_label(std::string_view key) const;
  /// "[cube]" (top level: "top level").
  [[nodiscard]] std::string table_label() const;

 private:
  const toml::node* find(std::string_view key);
  const toml::node& require(std::string_view key);
  [[noreturn]] void fail_at(const toml::node& node, std::string_view key,
                            const std::string& message) const;
  double check_number(const toml::node& node, std::string_view key, double lo, double hi,
                      bool lo_open, bool hi_open) const;
  std::int64_t check_integer(const toml::node& node, std::string_view key, std::int64_t lo,
                             std::int64_t hi) const;
  std::string check_string(const toml::node& node, std::string_view key) const;
  const toml::array& require_array(std::string_view key);

  const toml::table* table_;
  std::string file_;
  std::string path_;
  std::set<std::string, std::less<>> accepted_;
};

}  // namespace npusim
