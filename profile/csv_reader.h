#pragma once
// A small streaming CSV reader for profiler output (msprof, torch_npu). It reads the file in
// large blocks and hands out one record at a time as string views into its own buffer, so memory
// stays bounded however long the file is. It copes with what the real files contain: quoted
// fields with commas, triple-quoted shapes (`"""1,4000;400,1"""`), quoted fields spanning lines,
// CRLF line ends, a trailing TAB after timestamps, a UTF-8 byte-order mark.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace npusim::profile {

/// Reads one CSV file record by record. Field views stay valid until the next call to next().
class CsvReader {
 public:
  /// Opens `file` and reads its header record. Throws InputError when the file cannot be opened
  /// or holds no header (empty file).
  explicit CsvReader(const std::filesystem::path& file);
  /// Reads `text` held in memory as if it were a file called `name` (tests, fuzzing).
  CsvReader(std::string name, std::string_view text);
  ~CsvReader();
  CsvReader(const CsvReader&) = delete;
  CsvReader& operator=(const CsvReader&) = delete;

  /// Header fields, cleaned like data fields.
  [[nodiscard]] const std::vector<std::string>& header() const noexcept { return header_; }
  /// 1-based line of the header record.
  [[nodiscard]] std::uint32_t header_line() const noexcept { return header_line_; }

  /// Advances to the next non-empty record; false at the end of the file.
  /// Throws InputError on a quoted field that never closes (a truncated file).
  bool next();
  /// Number of fields in the current record.
  [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
  /// Field `i` of the current record, cleaned: surrounding spaces, TABs and CR removed and the
  /// extra quotes of msprof's triple-quoted fields stripped. Empty view when `i` >= size().
  [[nodiscard]] std::string_view field(std::size_t i) const noexcept {
    return i < fields_.size() ? fields_[i] : std::string_view{};
  }
  /// 1-based line on which the current record starts.
  [[nodiscard]] std::uint32_t line() const noexcept { return record_line_; }
  /// The path as given.
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  /// Position of the current record (file and line), for errors.
  [[nodiscard]] SourcePos pos() const { return SourcePos{file_, record_line_, 0}; }
  /// Bytes read from the file so far.
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }

 private:
  void read_header_or_close();
  void read_header();
  bool read_record();       // fills fields_ from the next record; false at EOF
  bool fill();              // reads more bytes; false at EOF
  void split_fields(char* begin, char* end);

  std::string file_;
  std::string text_;  // the in-memory input of the text constructor (fmemopen reads it)
  std::FILE* fp_ = nullptr;
  std::vector<char> buf_;
  std::size_t block_bytes_ = std::size_t{1} << 20;  // first block: the file's size when known
  std::size_t pos_ = 0;  // first unread byte in buf_
  std::size_t end_ = 0;  // one past the last valid byte in buf_
  bool eof_ = false;
  std::uint32_t next_line_ = 1;  // line of the next unread byte
  std::uint32_t record_line_ = 0;
  std::uint32_t header_line_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::vector<std::string_view> fields_;
  std::vector<std::string> header_;
};

/// Removes surrounding spaces, TABs, CRs and quote characters (msprof writes shapes as
/// `"""1,2"""`, which plain CSV unquoting leaves as `"1,2"`).
[[nodiscard]] inline std::string_view clean_field(std::string_view s) noexcept {
  auto trim = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '"'; };
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && trim(s[b])) ++b;
  while (e > b && trim(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace npusim::profile
