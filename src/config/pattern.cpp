// A user's regular expression compiled and matched by PCRE2, with limits.
#include "runner/config/pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <pcre2.h>

namespace runner {

namespace {

// What one search may cost: steps of the matcher (PCRE2's default), memory
// for backtracking (KiB), and the JIT's stack (bytes).
constexpr std::uint32_t k_match_limit = 10'000'000;
constexpr std::uint32_t k_heap_limit_kib = 64 * 1024;
constexpr std::size_t k_jit_stack_start = 32 * 1024;
constexpr std::size_t k_jit_stack_max = 1024 * 1024;

// ECMAScript's ways where Perl's differ: `$` only at the end, `\u`/`\x` as
// ECMAScript reads them, `[^]` any character, `\1` of a group that took no
// part matches nothing.
constexpr std::uint32_t k_compile_options =
    PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF;

std::string error_text(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
    return fmt::format("error {}", code);
  return reinterpret_cast<const char*>(buffer);
}

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* pointer) const { Free(pointer); }
};

}  // namespace

struct Pattern::Compiled {
  std::string text;
  std::vector<std::string> group_names;
  std::unique_ptr<pcre2_code, Freer<pcre2_code, pcre2_code_free>> code;
  std::unique_ptr<pcre2_jit_stack, Freer<pcre2_jit_stack, pcre2_jit_stack_free>> jit_stack;
  std::unique_ptr<pcre2_match_context, Freer<pcre2_match_context, pcre2_match_context_free>> limits;
};

Pattern::Pattern(std::shared_ptr<const Compiled> compiled) : m_compiled(std::move(compiled)) {}

Result<Pattern> Pattern::compile(std::string_view text) {
  auto compiled = std::make_shared<Compiled>();
  compiled->text = std::string(text);
  std::unique_ptr<pcre2_compile_context, Freer<pcre2_compile_context, pcre2_compile_context_free>>
      context(pcre2_compile_context_create(nullptr));
  // `.` stops at '\r' as at '\n', as ECMAScript's does.
  pcre2_set_newline(context.get(), PCRE2_NEWLINE_ANYCRLF);
  int error = 0;
  PCRE2_SIZE offset = 0;
  compiled->code.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled->text.c_str()),
                                     compiled->text.size(), k_compile_options, &error, &offset,
                                     context.get()));
  if (!compiled->code)
    return Status::error(fmt::format("{} at offset {}", error_text(error), offset));
  // Without the JIT (a system that forbids it), PCRE2 interprets: slower,
  // under the same limits.
  if (pcre2_jit_compile(compiled->code.get(), PCRE2_JIT_COMPLETE) == 0)
    compiled->jit_stack.reset(pcre2_jit_stack_create(k_jit_stack_start, k_jit_stack_max, nullptr));
  compiled->limits.reset(pcre2_match_context_create(nullptr));
  pcre2_set_match_limit(compiled->limits.get(), k_match_limit);
  pcre2_set_heap_limit(compiled->limits.get(), k_heap_limit_kib);
  if (compiled->jit_stack)
    pcre2_jit_stack_assign(compiled->limits.get(), nullptr, compiled->jit_stack.get());

  std::uint32_t groups = 0;
  pcre2_pattern_info(compiled->code.get(), PCRE2_INFO_CAPTURECOUNT, &groups);
  for (std::uint32_t i = 1; i <= groups; ++i) compiled->group_names.push_back(std::to_string(i));
  // The name table: entries of a group number (2 bytes, most significant
  // first) and its name, NUL-terminated.
  std::uint32_t names = 0;
  std::uint32_t entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(compiled->code.get(), PCRE2_INFO_NAMECOUNT, &names);
  pcre2_pattern_info(compiled->code.get(), PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(compiled->code.get(), PCRE2_INFO_NAMETABLE, &table);
  for (std::uint32_t i = 0; i < names; ++i) {
    PCRE2_SPTR entry = table + i * entry_size;
    std::size_t group = (static_cast<std::size_t>(entry[0]) << 8) | entry[1];
    if (group >= 1 && group <= groups)
      compiled->group_names[group - 1] = reinterpret_cast<const char*>(entry + 2);
  }
  return Pattern(std::move(compiled));
}

const std::string& Pattern::text() const { return m_compiled->text; }

std::size_t Pattern::group_count() const { return m_compiled->group_names.size(); }

const std::vector<std::string>& Pattern::group_names() const { return m_compiled->group_names; }

Result<std::optional<PatternMatch>> Pattern::search(std::string_view text, std::size_t from) const {
  std::unique_ptr<pcre2_match_data, Freer<pcre2_match_data, pcre2_match_data_free>> data(
      pcre2_match_data_create_from_pattern(m_compiled->code.get(), nullptr));
  // PCRE2 takes no null subject, even an empty one.
  PCRE2_SPTR subject = reinterpret_cast<PCRE2_SPTR>(text.empty() ? "" : text.data());
  int found = pcre2_match(m_compiled->code.get(), subject, text.size(), from, 0, data.get(),
                          m_compiled->limits.get());
  if (found == PCRE2_ERROR_NOMATCH) return std::optional<PatternMatch>();
  if (found < 0) return Status::error(error_text(found));
  const PCRE2_SIZE* offsets = pcre2_get_ovector_pointer(data.get());
  PatternMatch match;
  match.begin = offsets[0];
  match.end = offsets[1];
  for (std::size_t i = 1; i <= group_count(); ++i) {
    if (offsets[2 * i] == PCRE2_UNSET)
      match.groups.emplace_back();
    else
      match.groups.emplace_back(text.substr(offsets[2 * i], offsets[2 * i + 1] - offsets[2 * i]));
  }
  return std::optional<PatternMatch>(std::move(match));
}

}  // namespace runner
