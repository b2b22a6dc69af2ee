// Cuts a job's byte stream into lines for the terminal. '\n', '\r' and
// "\r\n" each end one line, so tqdm-style progress bars ('\r'-terminated)
// show up as lines; a "\r\n" split across two feeds is still one terminator.
// A bare '\r' that ends an empty line (the cursor return tqdm writes before
// every redraw) is not a line. Lines longer than k_max_line bytes come out
// in pieces of k_max_line bytes, so memory stays bounded.
//
// Threading: none; one splitter per job and stream.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace runner {

// Splits a byte stream into lines, calling on_line(std::string_view) for
// each one, without its terminator. Views are valid only during the call.
class LineSplitter {
 public:
  static constexpr std::size_t k_max_line = 64 * 1024;

  template <typename OnLine>
  void feed(std::string_view bytes, OnLine&& on_line);
  // The stream ended: emits a trailing unterminated line, if any.
  template <typename OnLine>
  void finish(OnLine&& on_line);

  // Bytes of an unterminated line held back.
  std::size_t pending() const { return m_partial.size(); }

 private:
  template <typename OnLine>
  void take_line(const char* begin, const char* end, OnLine& on_line);
  template <typename OnLine>
  void keep_partial(const char* begin, const char* end, OnLine& on_line);

  std::string m_partial;
  bool m_after_cr = false;  // the last byte seen was a '\r' ending a line
  bool m_empty_cr = false;  // ... and that line was empty (emitted only for "\r\n")
};

namespace detail {

inline const char* find_line_end(const char* p, const char* end) {
  for (; p != end; ++p) {
    // Every byte above '\r' is an ordinary one; test the cheap case first.
    if (static_cast<unsigned char>(*p) <= '\r' && (*p == '\n' || *p == '\r')) return p;
  }
  return end;
}

}  // namespace detail

template <typename OnLine>
void LineSplitter::feed(std::string_view bytes, OnLine&& on_line) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  while (p != end) {
    if (m_after_cr) {
      if (*p == '\n') {
        if (m_empty_cr) on_line(std::string_view());
        ++p;
      }
      m_after_cr = false;
      m_empty_cr = false;
      continue;
    }
    const char* eol = detail::find_line_end(p, end);
    if (eol == end) {
      keep_partial(p, end, on_line);
      return;
    }
    if (*eol == '\r') {
      m_after_cr = true;
      m_empty_cr = m_partial.empty() && eol == p;
      if (!m_empty_cr) take_line(p, eol, on_line);
    } else {
      take_line(p, eol, on_line);
    }
    p = eol + 1;
  }
}

template <typename OnLine>
void LineSplitter::finish(OnLine&& on_line) {
  m_after_cr = false;
  m_empty_cr = false;
  if (m_partial.empty()) return;
  on_line(std::string_view(m_partial));
  m_partial.clear();
}

template <typename OnLine>
void LineSplitter::take_line(const char* begin, const char* end, OnLine& on_line) {
  if (!m_partial.empty()) {
    std::size_t room = k_max_line - m_partial.size();
    std::size_t n = std::min<std::size_t>(room, end - begin);
    m_partial.append(begin, n);
    begin += n;
    on_line(std::string_view(m_partial));
    m_partial.clear();
    if (begin == end) return;
  }
  while (static_cast<std::size_t>(end - begin) > k_max_line) {
    on_line(std::string_view(begin, k_max_line));
    begin += k_max_line;
  }
  on_line(std::string_view(begin, end - begin));
}

template <typename OnLine>
void LineSplitter::keep_partial(const char* begin, const char* end, OnLine& on_line) {
  if (m_partial.size() + (end - begin) <= k_max_line) {
    m_partial.append(begin, end);
    return;
  }
  if (!m_partial.empty()) {
    std::size_t n = k_max_line - m_partial.size();
    m_partial.append(begin, n);
    begin += n;
    on_line(std::string_view(m_partial));
    m_partial.clear();
  }
  while (static_cast<std::size_t>(end - begin) > k_max_line) {
    on_line(std::string_view(begin, k_max_line));
    begin += k_max_line;
  }
  m_partial.assign(begin, end);
}

}  // namespace runner
