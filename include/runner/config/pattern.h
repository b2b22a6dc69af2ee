// A regular expression a user wrote in queue.yaml (`metrics:`, `ready_log:`),
// matched against what jobs print: text runner does not trust, a line may
// be megabytes long. PCRE2 (Perl syntax, which ECMAScript's is nearly a
// subset of), compiled with its JIT where it can be, every match bounded by
// a step limit and a memory limit: a match that would run past them ends,
// and says so, instead of running for hours or overflowing the stack. The
// only file that includes PCRE2's header is pattern.cpp. Pure logic.
//
// Threading: a Pattern may be copied and matched from one thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// One match: where it is in the text searched, and its capture groups.
struct PatternMatch {
  std::size_t begin = 0;
  std::size_t end = 0;
  // Group 1, 2, ...: its text, or nullopt when it took no part in the match.
  std::vector<std::optional<std::string>> groups;
};

// A compiled pattern.
class Pattern {
 public:
  // `text` compiled, or why it does not compile ("missing closing
  // parenthesis at offset 11").
  static Result<Pattern> compile(std::string_view text);

  const std::string& text() const;
  // How many capture groups it has.
  std::size_t group_count() const;
  // The name of each capture group, 1, 2, ... in order: its name
  // (`(?<addr>...)`), or its number for a group without one.
  const std::vector<std::string>& group_names() const;

  // The first match in `text` that starts at or after `from`, nullopt when
  // there is none; an error when the match ran into a limit (neither a
  // match nor surely none), PCRE2's words for it ("match limit exceeded").
  Result<std::optional<PatternMatch>> search(std::string_view text, std::size_t from = 0) const;

 private:
  struct Compiled;
  explicit Pattern(std::shared_ptr<const Compiled> compiled);
  std::shared_ptr<const Compiled> m_compiled;
};

}  // namespace runner
