#include "profile/csv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <system_error>

namespace npusim::profile {

namespace {

// Large enough that a few hundred thousand typical rows need one read; grows for a longer record.
constexpr std::size_t kCsvBlockBytes = std::size_t{1} << 20;

}  // namespace

CsvReader::CsvReader(const std::filesystem::path& file) : file_(file.string()) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  if (!ec) block_bytes_ = bytes + 1;  // a small file is read in one block of its own size
  fp_ = std::fopen(file_.c_str(), "rb");
  if (fp_ == nullptr) {
    throw InputError({file_, 0, 0}, "cannot open the file for reading");
  }
  read_header_or_close();
}

CsvReader::CsvReader(std::string name, std::string_view text) : file_(std::move(name)), text_(text) {
  block_bytes_ = text_.size() + 1;
  // fmemopen of a zero-length buffer fails on some libcs: an empty text reads as an empty file.
  fp_ = text_.empty() ? std::tmpfile() : fmemopen(text_.data(), text_.size(), "rb");
  if (fp_ == nullptr) throw InputError({file_, 0, 0}, "cannot read the text");
  read_header_or_close();
}

// A constructor that throws runs no destructor: close the file here, or every unreadable table
// leaks a descriptor (fuzz_csv ran out of them after about 300k empty inputs).
void CsvReader::read_header_or_close() {
  try {
    read_header();
  } catch (...) {
    std::fclose(fp_);
    fp_ = nullptr;
    throw;
  }
}

void CsvReader::read_header() {
  // Zeroing a whole 1 MiB block for a small table cost more than reading it (a profile folder
  // holds many small CSVs; a fuzzer reads thousands of inputs per second).
  buf_.resize(std::clamp<std::size_t>(block_bytes_, 4096, kCsvBlockBytes));
  if (!read_record()) {
    throw InputError({file_, 1, 0}, "empty file: expected a header line of column names");
  }
  header_line_ = record_line_;
  header_.reserve(fields_.size());
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    std::string_view f = fields_[i];
    // A UTF-8 byte-order mark some exporters put before the first column name.
    if (i == 0 && f.size() >= 3 && static_cast<unsigned char>(f[0]) == 0xEF &&
        static_cast<unsigned char>(f[1]) == 0xBB && static_cast<unsigned char>(f[2]) == 0xBF) {
      f = clean_field(f.substr(3));
    }
    header_.emplace_back(f);
  }
  // msprof op's OpBasicInfo.csv ends its header with a comma: drop the empty last column name.
  while (!header_.empty() && header_.back().empty()) header_.pop_back();
}

CsvReader::~CsvReader() {
  if (fp_ != nullptr) std::fclose(fp_);
}

bool CsvReader::fill() {
  if (eof_) return false;
  // Move the unread tail to the front, then grow if a single record fills the whole buffer.
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  const std::size_t n = std::fread(buf_.data() + end_, 1, buf_.size() - end_, fp_);
  bytes_read_ += n;
  end_ += n;
  if (n == 0) {
    if (std::ferror(fp_) != 0) throw InputError({file_, next_line_, 0}, "read error");
    eof_ = true;
    return false;
  }
  return true;
}

bool CsvReader::next() {
  while (read_record()) {
    // Skip blank lines (a trailing empty line is common); a record of one empty field is blank.
    if (fields_.size() > 1 || (fields_.size() == 1 && !fields_[0].empty())) return true;
  }
  return false;
}

bool CsvReader::read_record() {
  fields_.clear();
  // Find the end of the record: the first newline outside quotes. The fast path (no quote in
  // the line) is one memchr; lines with quotes are scanned character by character.
  std::size_t scan = pos_;
  std::uint32_t newlines_inside = 0;
  bool in_quotes = false;
  for (;;) {
    if (scan >= end_) {
      const std::size_t consumed = scan - pos_;
      if (!fill()) {
        if (end_ == pos_) return false;  // nothing left
        if (in_quotes) {
          throw InputError({file_, next_line_, 0},
                           "a quoted field is never closed: the file is truncated or malformed");
        }
        // Last record without a trailing newline.
        record_line_ = next_line_;
        next_line_ += newlines_inside;
        char* b = buf_.data() + pos_;
        char* e = buf_.data() + end_;
        pos_ = end_;
        split_fields(b, e);
        return true;
      }
      scan = pos_ + consumed;
      continue;
    }
    char* p = buf_.data() + scan;
    const std::size_t avail = end_ - scan;
    if (!in_quotes) {
      const void* nl = std::memchr(p, '\n', avail);
      const std::size_t span = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) : avail;
      const void* q = std::memchr(p, '"', span);
      if (q == nullptr) {
        if (nl == nullptr) {
          scan = end_;
          continue;
        }
        // Record ends at nl.
        record_line_ = next_line_;
        next_line_ += newlines_inside + 1;
        char* b = buf_.data() + pos_;
        char* e = p + span;
        pos_ = scan + span + 1;
        split_fields(b, e);
        return true;
      }
      const std::size_t qoff = static_cast<std::size_t>(static_cast<const char*>(q) - p);
      scan += qoff + 1;
      in_quotes = true;
      continue;
    }
    // Inside quotes: a doubled quote is an escaped quote and does not close the field, but for
    // finding the record's end toggling on every quote gives the same answer.
    const void* q = std::memchr(p, '"', avail);
    const std::size_t span = q ? static_cast<std::size_t>(static_cast<const char*>(q) - p) : avail;
    for (const char* nl = p; (nl = static_cast<const char*>(std::memchr(nl, '\n', span - static_cast<std::size_t>(nl - p)))) != nullptr; ++nl) {
      ++newlines_inside;
    }
    if (q == nullptr) {
      scan = end_;
      continue;
    }
    scan += span + 1;
    in_quotes = false;
  }
}

void CsvReader::split_fields(char* begin, char* end) {
  // Unquoting is done in place: the output never grows, so a write pointer trails the reader.
  char* p = begin;
  for (;;) {
    char* out_start = p;
    char* w = p;
    // Leading blanks before an opening quote.
    char* r = p;
    while (r < end && (*r == ' ' || *r == '\t')) ++r;
    if (r < end && *r == '"') {
      ++r;
      for (;;) {
        // Copy up to the next quote in one move.
        const void* q = std::memchr(r, '"', static_cast<std::size_t>(end - r));
        char* stop = q ? static_cast<char*>(const_cast<void*>(q)) : end;
        const auto n = static_cast<std::size_t>(stop - r);
        if (w != r) std::memmove(w, r, n);
        w += n;
        r = stop;
        if (r >= end) break;  // unterminated at end of record: keep what is there
        if (r + 1 < end && r[1] == '"') {
          *w++ = '"';
          r += 2;
          continue;
        }
        ++r;  // closing quote
        break;
      }
      // Anything between the closing quote and the delimiter (msprof's trailing TAB) is kept
      // and then trimmed by clean_field.
      while (r < end && *r != ',') *w++ = *r++;
    } else {
      // Fields are short (a few characters): a plain loop beats a memchr call per field.
      r = p;
      while (r < end && *r != ',') ++r;
      w = r;
    }
    fields_.push_back(clean_field(std::string_view(out_start, static_cast<std::size_t>(w - out_start))));
    if (r >= end) break;
    p = r + 1;  // skip the comma
    if (p > end) break;
    if (p == end) {
      fields_.emplace_back();  // a trailing comma ends with an empty field
      break;
    }
  }
}

}  // namespace npusim::profile
