// A guard in front of toml++ 3.3.0 (Debian's libtomlplusplus-dev): its whitespace test reaches
// __builtin_unreachable for a non-ASCII code point in several ranges (U+00A1..U+0499,
// U+2C6E..U+3067, U+FB56..U+FEFE) wherever the parser looks for whitespace, undefined behaviour
// our fuzz_hw_spec harness found (upstream marzer/tomlplusplus#295, fixed by #305 after 3.3.0;
// the line-ending-backslash case is #190). TOML allows non-ASCII text only inside strings
// (quoted keys included) and comments, so rejecting it elsewhere before toml++ sees it follows
// the TOML 1.0 grammar and turns the undefined behaviour into a file:line:col error.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "model/toml_reader.h"

namespace npusim {

namespace {

enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };

struct Cursor {
  std::string_view text;
  std::size_t i = 0;
  std::uint32_t line = 1;
  std::uint32_t column = 1;  // in code points, as toml++ counts them

  [[nodiscard]] bool at_end() const { return i >= text.size(); }
  [[nodiscard]] unsigned char peek(std::size_t ahead = 0) const {
    return i + ahead < text.size() ? static_cast<unsigned char>(text[i + ahead]) : 0;
  }
  [[nodiscard]] bool starts(std::string_view s) const { return text.substr(i, s.size()) == s; }
  void advance() {
    const unsigned char c = peek();
    ++i;
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
      ++column;
    }
  }
};

[[noreturn]] void fail(const std::string& file, const Cursor& at, const char* what) {
  throw InputError({file, at.line, at.column}, what);
}

// TOML's escapes are ASCII letters; toml++ 3.3 runs its whitespace test over a non-ASCII
// character after a backslash while reporting the bad escape (fuzz_graph's finding: `\` and
// U+FEBF), so that is refused here first, at the character.
void refuse_non_ascii_escape(Cursor& c, const std::string& file) {
  if (c.peek(1) < 0x80) return;
  c.advance();
  fail(file, c, "a non-ASCII character after a backslash is no TOML escape (\\n, \\t, \\uXXXX, ...)");
}

// In a multi-line basic string, a backslash that ends its line trims the whitespace and
// newlines that follow; the first character after them is where toml++ 3.3 misbehaves.
void skip_line_ending_backslash(Cursor& c, const std::string& file) {
  std::size_t j = c.i + 1;
  while (j < c.text.size() && (c.text[j] == ' ' || c.text[j] == '\t')) ++j;
  if (j < c.text.size() && c.text[j] == '\r') ++j;
  if (j >= c.text.size() || c.text[j] != '\n') {  // an ordinary escape: skip the next byte
    refuse_non_ascii_escape(c, file);
    c.advance();
    if (!c.at_end()) c.advance();
    return;
  }
  while (!c.at_end() && (c.peek() == '\\' || c.peek() == ' ' || c.peek() == '\t' ||
                         c.peek() == '\r' || c.peek() == '\n')) {
    c.advance();
  }
  if (c.peek() >= 0x80) {
    fail(file, c,
         "a non-ASCII character right after a line-ending backslash is not read reliably by "
         "toml++ 3.3 (upstream bug #190): put any other character first");
  }
}

// A quote opens a string only where TOML has one: a key at the start of a line, after a '.'
// of a key, or after '{' or ',' inside an inline table; a value after '=', or after '[' or ','
// inside an array. Elsewhere (`e = -"...`, `e = 2['...`) toml++ 3.3 does not read a string
// either, and runs its whitespace test over what follows (fuzz_graph's findings: `e=-"` and
// `e=2['` each followed by a non-ASCII letter), so the text after it is checked as plain text.
// The structure is followed just far enough to know that: whether the line is still in its key
// (before its '='), and which brackets are open: a table header's, an array's, an inline table's.
class Structure {
 public:
  [[nodiscard]] bool may_open() const { return may_open_; }

  void see(unsigned char ch) {
    const char top = open_.empty() ? '\0' : open_.back();
    switch (ch) {
      case '\n':
        if (top == 'h') open_.clear();  // a header left open is toml++'s to report
        if (!open_.empty()) break;      // a newline inside an array is whitespace
        may_open_ = in_key_ = true;
        break;
      case '=':
        may_open_ = true;
        in_key_ = false;
        break;
      case '[':
        if (may_open_) {
          const bool header = in_key_ && (top == '\0' || top == 'h');
          open_.push_back(header ? 'h' : '[');
          in_key_ = header;
        } else {
          in_key_ = false;
        }
        break;  // may_open_ stays: what follows a '[' allowed here may be a string
      case '{':
        if (may_open_ && !in_key_) open_.push_back('{');
        in_key_ = may_open_ = may_open_ && !in_key_;
        break;
      case ']':
      case '}':
        if (!open_.empty()) open_.pop_back();
        may_open_ = in_key_ = false;
        break;
      case ',':
        may_open_ = top == '[' || top == '{';
        in_key_ = top == '{';
        break;
      case '.':
        may_open_ = in_key_;
        break;
      default:
        may_open_ = false;
    }
  }

 private:
  bool may_open_ = true;
  bool in_key_ = true;
  std::string open_;  // 'h' header, '[' array, '{' inline table
};

}  // namespace

void check_toml_text(std::string_view text, const std::string& file) {
  Cursor c{text};
  State s = State::Normal;
  Structure st;  // fed every character of plain text other than a space or tab
  while (!c.at_end()) {
    const unsigned char ch = c.peek();
    const bool opens = st.may_open();
    if (s == State::Normal && ch != ' ' && ch != '\t' && ch != '\r' && ch != '#' &&
        (!opens || (ch != '"' && ch != '\''))) {
      st.see(ch);
    }
    switch (s) {
      case State::Normal:
        if (ch == '#') {
          s = State::Comment;
        } else if (!opens && (ch == '"' || ch == '\'')) {
          // not a string: checked as plain text
        } else if (c.starts("\"\"\"")) {
          s = State::MultiBasic;
          c.advance();
          c.advance();
        } else if (c.starts("'''")) {
          s = State::MultiLiteral;
          c.advance();
          c.advance();
        } else if (ch == '"') {
          s = State::Basic;
        } else if (ch == '\'') {
          s = State::Literal;
        } else if (ch >= 0x80) {
          fail(file, c,
               "a non-ASCII character outside a string or comment (TOML allows it only in "
               "strings, quoted keys and comments)");
        }
        break;
      case State::Comment:
        if (ch == '\n') {
          s = State::Normal;
          st.see('\n');
        }
        break;
      case State::Basic:
        if (ch == '\\') {
          refuse_non_ascii_escape(c, file);
          c.advance();  // the escaped character is content
        } else if (ch == '"' || ch == '\n') {
          s = State::Normal;  // an unclosed string is toml++'s to report
          st.see(ch);
        }
        break;
      case State::Literal:
        if (ch == '\'' || ch == '\n') {
          s = State::Normal;
          st.see(ch);
        }
        break;
      case State::MultiBasic:
      case State::MultiLiteral: {
        const char quote = s == State::MultiBasic ? '"' : '\'';
        if (s == State::MultiBasic && ch == '\\') {
          skip_line_ending_backslash(c, file);
          continue;
        }
        if (ch == static_cast<unsigned char>(quote) && c.starts(std::string(3, quote))) {
          // Up to two more quotes before the closing three are content ("""a""""" ends a"").
          std::size_t run = 0;
          while (c.peek(run) == static_cast<unsigned char>(quote)) ++run;
          for (std::size_t k = 0; k + 1 < (run > 5 ? 3 : run); ++k) c.advance();
          s = State::Normal;
          st.see(static_cast<unsigned char>(quote));
        }
        break;
      }
    }
    if (!c.at_end()) c.advance();
  }
}

}  // namespace npusim
