#include "model/toml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>
#include <utility>

namespace npusim {

namespace fs = std::filesystem;

namespace {

// The range part of "expected a number in (0, 1]"; an infinite side reads as "> 0" instead of
// an interval with an infinity in it.
// `noun` is "a number" or "a finite number".
std::string number_range_text(const char* noun, double lo, double hi, bool lo_open, bool hi_open) {
  const bool lo_inf = std::isinf(lo);
  const bool hi_inf = std::isinf(hi);
  if (lo_inf && hi_inf) return noun;
  if (hi_inf) return fmt::format("{} {} {}", noun, lo_open ? ">" : ">=", lo);
  if (lo_inf) return fmt::format("{} {} {}", noun, hi_open ? "<" : "<=", hi);
  return fmt::format("{} in {}{}, {}{}", noun, lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
}

std::string integer_range_text(std::int64_t lo, std::int64_t hi) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if (lo == kMin && hi == kMax) return "an integer";
  if (hi == kMax) return fmt::format("an integer >= {}", lo);
  if (lo == kMin) return fmt::format("an integer <= {}", hi);
  return fmt::format("an integer in [{}, {}]", lo, hi);
}

TomlFile parse_with(const std::string& file, const auto& parse) {
  try {
    return TomlFile{file, parse()};
  } catch (const toml::parse_error& e) {
    throw InputError(toml_pos(file, e.source()), std::string(e.description()));
  }
}

}  // namespace

SourcePos toml_pos(const std::string& file, const toml::source_region& region) {
  return SourcePos{file, static_cast<std::uint32_t>(region.begin.line),
                   static_cast<std::uint32_t>(region.begin.column)};
}

const char* toml_type_name(const toml::node& node) noexcept {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

TomlFile parse_toml_file(const fs::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (!fs::exists(st)) throw InputError({name, 0, 0}, "cannot open file: no such file");
  if (fs::is_directory(st)) throw InputError({name, 0, 0}, "is a directory, expected a TOML file");
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw InputError({name, 0, 0}, "cannot read file");
  return parse_toml_string(text, name);
}

TomlFile parse_toml_string(std::string_view text, const std::string& file) {
  check_toml_text(text, file);
  return parse_with(file, [&] { return toml::parse(text, std::string_view(file)); });
}

TableReader::TableReader(const TomlFile& doc) : TableReader(doc.root, doc.file, "") {}

TableReader::TableReader(const toml::table& table, std::string file, std::string path)
    : table_(&table), file_(std::move(file)), path_(std::move(path)) {}

std::string TableReader::table_label() const {
  return path_.empty() ? std::string("top level") : fmt::format("[{}]", path_);
}

std::string TableReader::key_label(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("[{}].{}", path_, key);
}

SourcePos TableReader::pos() const { return toml_pos(file_, table_->source()); }

SourcePos TableReader::value_pos(std::string_view key) const {
  const toml::node* node = table_->get(key);
  return node != nullptr ? toml_pos(file_, node->source()) : pos();
}

bool TableReader::has(std::string_view key) const { return table_->contains(key); }

namespace {

// toml::table iterates in key order; users read files top to bottom, so order keys by where
// they are written.
std::vector<const toml::key*> keys_in_document_order(const toml::table& table) {
  std::vector<const toml::key*> keys;
  keys.reserve(table.size());
  for (auto&& [k, v] : table) keys.push_back(&k);
  std::stable_sort(keys.begin(), keys.end(), [](const toml::key* a, const toml::key* b) {
    const auto& pa = a->source().begin;
    const auto& pb = b->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return keys;
}

}  // namespace

std::vector<std::string> TableReader::keys() const {
  std::vector<std::string> out;
  for (const toml::key* k : keys_in_document_order(*table_)) out.emplace_back(k->str());
  return out;
}

std::vector<std::string> TableReader::accepted_keys() const {
  return {accepted_.begin(), accepted_.end()};
}

void TableReader::accept(std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) accepted_.emplace(k);
}

void TableReader::fail(std::string_view key, const std::string& message) const {
  throw InputError(value_pos(key), fmt::format("{}: {}", key_label(key), message));
}

void TableReader::fail_table(const std::string& message) const {
  throw InputError(pos(), fmt::format("{}: {}", table_label(), message));
}

void TableReader::fail_at(const toml::node& node, std::string_view key,
                          const std::string& message) const {
  throw InputError(toml_pos(file_, node.source()), fmt::format("{}: {}", key_label(key), message));
}

const toml::node* TableReader::find(std::string_view key) {
  accepted_.emplace(key);
  return table_->get(key);
}

const toml::node& TableReader::require(std::string_view key) {
  const toml::node* node = find(key);
  if (node == nullptr) fail_table(fmt::format("missing required key '{}'", key));
  return *node;
}

double TableReader::check_number(const toml::node& node, std::string_view key, double lo, double hi,
                                 bool lo_open, bool hi_open) const {
  double v = 0;
  if (const auto* i = node.as_integer()) {
    v = static_cast<double>(i->get());
  } else if (const auto* f = node.as_floating_point()) {
    v = f->get();
  } else {
    fail_at(node, key, fmt::format("expected a number, got {}", toml_type_name(node)));
  }
  if (!std::isfinite(v)) {
    fail_at(node, key,
            fmt::format("expected {}, got {}",
                        number_range_text("a finite number", lo, hi, lo_open, hi_open), v));
  }
  const bool below = lo_open ? !(v > lo) : !(v >= lo);
  const bool above = hi_open ? !(v < hi) : !(v <= hi);
  if (below || above) {
    fail_at(node, key,
            fmt::format("expected {}, got {}",
                        number_range_text("a number", lo, hi, lo_open, hi_open), v));
  }
  return v;
}

std::int64_t TableReader::check_integer(const toml::node& node, std::string_view key,
                                        std::int64_t lo, std::int64_t hi) const {
  const auto* i = node.as_integer();
  if (i == nullptr) {
    fail_at(node, key,
            fmt::format("expected {}, got {}", integer_range_text(lo, hi), toml_type_name(node)));
  }
  const std::int64_t v = i->get();
  if (v < lo || v > hi) {
    fail_at(node, key, fmt::format("expected {}, got {}", integer_range_text(lo, hi), v));
  }
  return v;
}

std::string TableReader::check_string(const toml::node& node, std::string_view key) const {
  const auto* s = node.as_string();
  if (s == nullptr) {
    fail_at(node, key, fmt::format("expected a string, got {}", toml_type_name(node)));
  }
  return s->get();
}

double TableReader::number(std::string_view key, double lo, double hi, bool lo_open, bool hi_open) {
  return check_number(require(key), key, lo, hi, lo_open, hi_open);
}

std::optional<double> TableReader::optional_number(std::string_view key, double lo, double hi,
                                                   bool lo_open, bool hi_open) {
  const toml::node* node = find(key);
  if (node == nullptr) return std::nullopt;
  return check_number(*node, key, lo, hi, lo_open, hi_open);
}

std::int64_t TableReader::integer(std::string_view key, std::int64_t lo, std::int64_t hi) {
  return check_integer(require(key), key, lo, hi);
}

std::optional<std::int64_t> TableReader::optional_integer(std::string_view key, std::int64_t lo,
                                                          std::int64_t hi) {
  const toml::node* node = find(key);
  if (node == nullptr) return std::nullopt;
  return check_integer(*node, key, lo, hi);
}

std::string TableReader::string(std::string_view key) { return check_string(require(key), key); }

std::optional<std::string> TableReader::optional_string(std::string_view key) {
  const toml::node* node = find(key);
  if (node == nullptr) return std::nullopt;
  return check_string(*node, key);
}

bool TableReader::boolean(std::string_view key) {
  const toml::node& node = require(key);
  const auto* b = node.as_boolean();
  if (b == nullptr) {
    fail_at(node, key, fmt::format("expected a boolean, got {}", toml_type_name(node)));
  }
  return b->get();
}

std::optional<bool> TableReader::optional_boolean(std::string_view key) {
  if (find(key) == nullptr) return std::nullopt;
  return boolean(key);
}

TableReader TableReader::sub_table(std::string_view key) {
  const toml::node* node = find(key);
  if (node == nullptr)
    fail_table(fmt::format("missing required table [{}]",
                           path_.empty() ? std::string(key) : path_ + "." + std::string(key)));
  const auto* t = node->as_table();
  if (t == nullptr) {
    fail_at(*node, key, fmt::format("expected a table, got {}", toml_type_name(*node)));
  }
  return TableReader(*t, file_, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

std::optional<TableReader> TableReader::optional_sub_table(std::string_view key) {
  if (find(key) == nullptr) return std::nullopt;
  return sub_table(key);
}

const toml::array& TableReader::require_array(std::string_view key) {
  const toml::node& node = require(key);
  const auto* a = node.as_array();
  if (a == nullptr)
    fail_at(node, key, fmt::format("expected an array, got {}", toml_type_name(node)));
  return *a;
}

std::vector<double> TableReader::number_array(std::string_view key, double lo, double hi,
                                              bool lo_open, bool hi_open) {
  const toml::array& a = require_array(key);
  std::vector<double> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(check_number(a[i], fmt::format("{}[{}]", key, i), lo, hi, lo_open, hi_open));
  }
  return out;
}

std::vector<std::int64_t> TableReader::integer_array(std::string_view key, std::int64_t lo,
                                                     std::int64_t hi) {
  const toml::array& a = require_array(key);
  std::vector<std::int64_t> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(check_integer(a[i], fmt::format("{}[{}]", key, i), lo, hi));
  }
  return out;
}

std::vector<std::string> TableReader::string_array(std::string_view key) {
  const toml::array& a = require_array(key);
  std::vector<std::string> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    out.push_back(check_string(a[i], fmt::format("{}[{}]", key, i)));
  }
  return out;
}

std::vector<TableReader> TableReader::table_array(std::string_view key) {
  const toml::node* node = find(key);
  std::vector<TableReader> out;
  if (node == nullptr) return out;
  const auto* a = node->as_array();
  if (a == nullptr) {
    fail_at(*node, key, fmt::format("expected an array of tables, got {}", toml_type_name(*node)));
  }
  const std::string base = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  out.reserve(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto* t = (*a)[i].as_table();
    if (t == nullptr) {
      fail_at((*a)[i], fmt::format("{}[{}]", key, i),
              fmt::format("expected a table, got {}", toml_type_name((*a)[i])));
    }
    out.emplace_back(*t, file_, fmt::format("{}[{}]", base, i));
  }
  return out;
}

void TableReader::finish() const {
  for (const toml::key* key : keys_in_document_order(*table_)) {
    const toml::key& k = *key;
    if (accepted_.find(k.str()) != accepted_.end()) continue;
    std::string accepted;
    for (const auto& a : accepted_) {
      if (!accepted.empty()) accepted += ", ";
      accepted += a;
    }
    const std::string what = accepted.empty()
                                 ? fmt::format("{}: unknown key '{}'; this table accepts no keys",
                                               table_label(), k.str())
                                 : fmt::format("{}: unknown key '{}'; accepted keys: {}",
                                               table_label(), k.str(), accepted);
    throw InputError(toml_pos(file_, k.source()), what);
  }
}

}  // namespace npusim
