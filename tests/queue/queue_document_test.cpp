// Tests for queue.yaml as text: entry spans, taking the first job while
// every other byte stays as written, and appending jobs.
#include "runner/queue/queue_document.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "runner/config/config_error.h"
#include "runner/queue/front_taker.h"
#include "support/config_failure.h"
#include "support/job_text.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::describe;

std::vector<std::string> all_jobs(const std::string& text) {
  std::vector<std::string> jobs;
  QueueDocument doc = testing::value_of(parse_queue_document(text, "queue.yaml"));
  for (const auto& span : doc.entries)
    for (const auto& job : expand(span.entry)) jobs.push_back(describe(job));
  return jobs;
}

std::string take(const std::string& text) {
  return text_without_first_job(testing::value_of(parse_queue_document(text, "queue.yaml")));
}

std::string with_crlf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

bool has_bare_newline(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) return true;
  return false;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// True when the line at `pos` is blank or a comment indented deeper than `indent`.
bool deeper_comment_or_blank(const std::string& text, std::size_t pos, int indent) {
  std::size_t end = text.find('\n', pos);
  std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  std::size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return true;
  return line[first] == '#' && first > static_cast<std::size_t>(indent);
}

int g_dropped_comment_runs = 0;

// Takes the first job until none is left, checking at every step that the
// jobs come out in expand() order, that only the first entry's bytes change
// (when `same_bytes`), and that the first entry became at most k entries.
std::string drain_and_check(const std::string& text, bool same_bytes = true) {
  std::vector<std::string> expected = all_jobs(text);
  std::vector<std::string> taken;
  std::string current = text;
  bool crlf_only = current.find('\n') != std::string::npos && !has_bare_newline(current);
  for (std::size_t step = 0; step <= expected.size(); ++step) {
    QueueDocument doc = testing::value_of(parse_queue_document(current, "queue.yaml"));
    std::optional<JobSpec> job = peek_first_job(doc);
    if (!job) break;
    taken.push_back(describe(*job));
    std::string next = text_without_first_job(doc);
    QueueDocument after = testing::value_of(parse_queue_document(next, "queue.yaml"));
    const EntrySpan& first = doc.entries.front();
    EXPECT_LE(after.entries.size() + 1, doc.entries.size() + first.entry.keys.size()) << current;
    if (same_bytes && doc.block_style) {
      EXPECT_EQ(next.substr(0, first.begin), current.substr(0, first.begin)) << current;
      // Everything after the entry is kept, except comments indented below
      // it that would otherwise run into a block scalar ending the entry.
      std::string tail = current.substr(first.end);
      std::size_t dropped = 0;
      while (!ends_with(next, tail.substr(dropped)) && dropped < tail.size() &&
             deeper_comment_or_blank(tail, dropped, first.indent))
        dropped = tail.find('\n', dropped) == std::string::npos ? tail.size()
                                                                : tail.find('\n', dropped) + 1;
      EXPECT_TRUE(ends_with(next, tail.substr(dropped))) << current << "\n=>\n" << next;
      if (dropped > 0) ++g_dropped_comment_runs;
    }
    if (crlf_only) {
      EXPECT_FALSE(has_bare_newline(next)) << next;
    }
    current = next;
  }
  EXPECT_EQ(taken, expected) << text;
  EXPECT_TRUE(all_jobs(current).empty()) << current;
  return current;
}

const std::vector<std::string>& queue_shapes() {
  static const std::vector<std::string> shapes = {
      // The SPEC example with comments everywhere.
      "# My queue\n"
      "# second header line\n"
      "\n"
      "- nvidia-smi   # check GPUs\n"
      "# describes the sweep\n"
      "- command: docker exec leaderboard<<gpu>> python bench.py --model <<model>>\n"
      "  model: [llama-7B, vicuna-13B]   # two models\n"
      "  # batches below\n"
      "  batch: [1, 2, 4]\n"
      "\n"
      "- echo done\n",
      // No final newline.
      "- a\n- command: b\n  x: [1, 2]",
      "- command: [a, b, c]",
      // Document markers.
      "%YAML 1.2\n---\n- a\n- command: [b, c]\n...\n# after the end\n",
      // Block scalars whose lines look like comments or are blank.
      "- command: |\n"
      "    echo one\n"
      "    # not a comment\n"
      "\n"
      "    echo two\n"
      "  model: [a, b]\n"
      "# real comment\n"
      "- command: |+\n"
      "    keep\n"
      "\n"
      "  x: [1, 2]\n"
      "\n"
      "- last\n",
      "- command: |\n"
      "    echo hi\n"
      "    # part of the script\n"
      "  # a real comment\n"
      "  x: [1, 2]\n"
      "- next\n",
      "- x: [1, 2]\n"
      "  command: |\n"
      "    echo hi\n"
      "    # part of the script\n"
      "\n"
      "  # a real comment\n"
      "- next\n",
      "- x: [1, 2]\n"
      "  command: |+\n"
      "    keep two blank lines\n"
      "\n"
      "\n"
      "- next\n",
      "- x: [1, 2]\n"
      "  command: >-\n"
      "    folded\n"
      "    text\n"
      "\n"
      "# comment\n"
      "- next\n",
      // Quoted scalars over several lines.
      "- m: [1, 2]\n"
      "  command: \"echo a\n"
      "\n"
      "    # still the string\"\n"
      "- z\n",
      "- m: [1, 2]\n"
      "  command: 'it''s\n"
      "    # also the string'\n"
      "\n"
      "- z\n",
      // Multi-line plain scalars.
      "- command: echo this is\n"
      "    a long command\n"
      "  n: [1, 2]\n"
      "\n"
      "- b\n",
      // Flow lists over several lines.
      "- command: [\n"
      "    \"first cmd\",\n"
      "    second\n"
      "  ]\n"
      "  m: [a,\n"
      "    b]   # trailing\n"
      "- tail\n",
      // An indented list, dashes on their own lines, comments after dashes.
      "  - a\n  - command: b\n    m: [1, 2]\n  # end\n",
      "-\n  command: a\n  m: [1, 2]\n- # comment\n  command: b\n  n: [x, y]\n",
      // Block lists as values (Pegasus' style).
      "# Multi-GPU jobs\n"
      "\n"
      "# 8-GPU sweep\n"
      "- command:\n"
      "    - |\n"
      "      CUDA_VISIBLE_DEVICES={{slots}} \\\n"
      "      torchrun train.py --model {{model}}\n"
      "  slots:\n"
      "    - 8\n"
      "  model:\n"
      "    - qwen3-8b\n"
      "    - llama-7b\n"
      "  dataset:\n"
      "    - wikitext\n"
      "    - c4\n"
      "\n"
      "# scaling\n"
      "- command:\n"
      "  - python benchmark.py --model {{model}}\n"
      "  slots:\n"
      "  - 1\n"
      "  - 2\n"
      "  model:\n"
      "  - llama-7b\n",
      // Tags and quoting.
      "- !!str echo\n- command: !!str run\n  m: [1, !!str 2]\n- 'quoted: yes'\n",
      "- \"a: b\"\n- command: \"x # y\"\n  v: ['{x}', \"[y]\", '*z', '']\n",
      // A byte order mark.
      "\xEF\xBB\xBF# c\n- a\n- command: b\n  m: [1, 2]\n",
      "\xEF\xBB\xBF- command: [a, b]\n- c\n",
      // A bigger product.
      "- command: run <<a>> <<b>> <<c>>\n  a: [1, 2, 3, 4, 5]\n  b: [x, y, z, w]\n  c: [p, q, r]\n",
      // Nothing but the list.
      "- a\n- b\n- c\n",
  };
  return shapes;
}

TEST(QueueDocumentTest, DrainingAnyShapeGivesAllJobsInOrderAndKeepsOtherBytes) {
  for (const auto& shape : queue_shapes()) {
    SCOPED_TRACE(shape);
    drain_and_check(shape);
  }
}

// Writes random queue files the way people do: comments anywhere, keys in
// any order, scalars plain or quoted, lists in flow or block style, block
// scalars, indented lists, CRLF, no final newline.
class QueueWriter {
 public:
  explicit QueueWriter(unsigned seed) : m_random(seed) {}

  std::string file() {
    m_indent = coin(25) ? 2 : 0;
    std::string out;
    if (coin(50)) out += "# queue\n";
    if (coin(20)) out += "\n";
    int entries = 1 + pick(4);
    for (int i = 0; i < entries; ++i) {
      out += gap();
      out += entry();
    }
    if (coin(30)) out += gap();
    if (coin(15)) {
      while (!out.empty() && out.back() == '\n') out.pop_back();
      out += coin(50) ? "" : "\n\n";
    }
    if (coin(20)) out = with_crlf(out);
    return out;
  }

 private:
  int pick(int n) { return static_cast<int>(m_random() % static_cast<unsigned>(n)); }
  bool coin(int percent) { return pick(100) < percent; }
  std::string pad(int extra = 0) const { return std::string(m_indent + extra, ' '); }

  std::string gap() {
    std::string out;
    int lines = pick(3);
    for (int i = 0; i < lines; ++i) {
      int kind = pick(3);
      if (kind == 0) out += "\n";
      if (kind == 1) out += pad() + "# about the next entry\n";
      if (kind == 2) out += pad(4) + "# deeper comment\n";
    }
    return out;
  }

  std::string single_value() {
    static const std::vector<std::string> values = {
        "a",    "llama-7B", "x y", "a: b",      "it's", "#hash", "say \"hi\"",         "1", "true",
        "null", "-x",       "{b}", "<<model>>", "é",    "c,d",   "tail # not comment", ""};
    return values[pick(static_cast<int>(values.size()))];
  }

  std::string multi_value() {
    static const std::vector<std::string> values = {"line1\nline2\n", "echo a\n# not a comment\n",
                                                    "x\n\ny", "keep\n\n", "one\n  two\n"};
    return values[pick(static_cast<int>(values.size()))];
  }

  static bool plain_safe(const std::string& value) {
    if (value.empty() || !(std::isalnum(static_cast<unsigned char>(value[0])) || value[0] == '<'))
      return false;
    if (value == "null" || value == "true") return false;
    for (char c : value)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string("<>_./=- ").find(c) == std::string::npos)
        return false;
    return value.back() != ' ';
  }

  static std::string double_quoted(const std::string& value) {
    std::string out = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
    return out + "\"";
  }

  // A single-line scalar in some style that gives back `value`.
  std::string inline_scalar(const std::string& value) {
    if (value.find('\n') != std::string::npos) return double_quoted(value);
    int style = pick(3);
    if (style == 0 && plain_safe(value)) return value;
    if (style == 1) {
      std::string out = "'";
      for (char c : value) out += c == '\'' ? std::string("''") : std::string(1, c);
      return out + "'";
    }
    return double_quoted(value);
  }

  // A value after "key:" or "- " in block context, with a final newline.
  std::string block_scalar(const std::string& value, int body) {
    if (value.find('\n') == std::string::npos || coin(20))
      return " " + inline_scalar(value) + (coin(20) ? "   # note\n" : "\n");
    bool keep = value.size() >= 2 && value.compare(value.size() - 2, 2, "\n\n") == 0;
    std::string out = keep ? " |+\n" : value.back() == '\n' ? " |\n" : " |-\n";
    std::string text = value;
    if (keep || value.back() == '\n') text.pop_back();
    std::size_t start = 0;
    while (true) {
      std::size_t stop = text.find('\n', start);
      std::string line =
          text.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
      out += line.empty() ? "\n" : pad(body) + line + "\n";
      if (stop == std::string::npos) break;
      start = stop + 1;
    }
    return out;
  }

  std::vector<std::string> values_for(bool command) {
    std::vector<std::string> values;
    int count = 1 + pick(3);
    for (int i = 0; i < count; ++i)
      values.push_back(command ? "run " + std::to_string(i) + (coin(30) ? "\n" + multi_value() : "")
                               : single_value());
    return values;
  }

  std::string key_text(const std::string& name, const std::vector<std::string>& values) {
    std::string out = name + ":";
    bool multi_line = false;
    for (const auto& value : values)
      multi_line = multi_line || value.find('\n') != std::string::npos;
    if (values.size() == 1 && coin(60)) return out + block_scalar(values[0], 4);
    if (multi_line || coin(40)) {
      int item = coin(50) ? 2 : 4;
      out += coin(20) ? "  # list\n" : "\n";
      for (const auto& value : values) {
        out += pad(item) + "-" + block_scalar(value, item + 2);
        if (coin(10)) out += pad(item) + "# between items\n";
      }
      return out;
    }
    out += " [";
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out += coin(20) ? ",\n" + pad(6) : ", ";
      out += inline_scalar(values[i]);
    }
    return out + "]" + (coin(15) ? "  # flow\n" : "\n");
  }

  std::string entry() {
    if (coin(25)) {
      std::string value = coin(30) ? multi_value() : "echo " + single_value();
      return pad() + "-" + block_scalar(value, 2);
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    int params = pick(3);
    for (int i = 0; i < params; ++i) keys.push_back({"p" + std::to_string(i), values_for(false)});
    if (coin(20))
      keys.push_back(
          {"slots", coin(50) ? std::vector<std::string>{"2"} : std::vector<std::string>{"1", "2"}});
    keys.insert(keys.begin() + pick(static_cast<int>(keys.size()) + 1),
                {"command", values_for(true)});
    std::string out = pad() + "-";
    if (coin(10))
      out += coin(50) ? "\n" + pad(2) : "  # dash\n" + pad(2);
    else
      out += " ";
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i > 0) {
        if (coin(10)) out += pad(2) + "# inside\n";
        out += pad(2);
      }
      out += key_text(keys[i].first, keys[i].second);
    }
    return out;
  }

  std::mt19937 m_random;
  int m_indent = 0;
};

TEST(QueueDocumentTest, DrainingRandomQueueFilesGivesAllJobsInOrderAndKeepsOtherBytes) {
  for (unsigned seed = 1; seed <= 150; ++seed) {
    std::string text = QueueWriter(seed).file();
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    Result<QueueDocument> doc = parse_queue_document(text, "queue.yaml");
    ASSERT_TRUE(doc.ok()) << doc.status().located_message();
    EXPECT_TRUE(doc->block_style);
    drain_and_check(text);
  }
}

// FrontTaker must give exactly what taking one job at a time, with a parse
// after each, gives: the same text, entries, lines, spans and jobs.
void expect_same_document(const QueueDocument& got, const QueueDocument& want) {
  ASSERT_EQ(got.text, want.text);
  EXPECT_EQ(got.block_style, want.block_style);
  ASSERT_EQ(got.entries.size(), want.entries.size());
  for (std::size_t i = 0; i < got.entries.size(); ++i) {
    SCOPED_TRACE("entry " + std::to_string(i));
    const EntrySpan& a = got.entries[i];
    const EntrySpan& b = want.entries[i];
    EXPECT_EQ(a.begin, b.begin);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.indent, b.indent);
    EXPECT_EQ(a.entry.line, b.entry.line);
    EXPECT_EQ(a.entry.column, b.entry.column);
    EXPECT_EQ(a.entry.plain, b.entry.plain);
    ASSERT_EQ(a.entry.keys.size(), b.entry.keys.size());
    for (std::size_t k = 0; k < a.entry.keys.size(); ++k) {
      EXPECT_EQ(a.entry.keys[k].name, b.entry.keys[k].name);
      EXPECT_EQ(a.entry.keys[k].values, b.entry.keys[k].values);
      EXPECT_EQ(a.entry.keys[k].was_list, b.entry.keys[k].was_list);
      EXPECT_EQ(a.entry.keys[k].line, b.entry.keys[k].line);
    }
  }
}

// Drains `text` in batches of 1, 2, 3, ... jobs with FrontTaker, each batch
// starting from the document the previous one finished with, and compares
// every job and every finished document with the one-job-at-a-time result.
void drain_in_batches_and_compare(const std::string& text) {
  QueueDocument reference = testing::value_of(parse_queue_document(text, "queue.yaml"));
  QueueDocument current = reference;
  for (int batch = 1; !reference.entries.empty(); ++batch) {
    SCOPED_TRACE("batch of " + std::to_string(batch) + " from:\n" + current.text);
    FrontTaker taker(std::move(current));
    for (int i = 0; i < batch; ++i) {
      std::optional<JobSpec> want = peek_first_job(reference);
      std::optional<JobSpec> got = taker.peek();
      ASSERT_EQ(got.has_value(), want.has_value());
      if (!want) break;
      EXPECT_EQ(describe(*got), describe(*want));
      EXPECT_EQ(got->line, want->line);
      ASSERT_TRUE(taker.take());
      reference =
          testing::value_of(parse_queue_document(text_without_first_job(reference), "queue.yaml"));
    }
    current = std::move(taker).finish();
    expect_same_document(current, reference);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_FALSE(FrontTaker(std::move(current)).peek().has_value());
}

TEST(QueueDocumentTest, TakingInBatchesMatchesTakingOneAtATime) {
  for (const auto& shape : queue_shapes()) {
    SCOPED_TRACE(shape);
    drain_in_batches_and_compare(shape);
    drain_in_batches_and_compare(with_crlf(shape));
  }
  for (const std::string& text :
       {std::string("- a\n- b\n- command: c <<x>>\n  x: [1, 2, 3]\n- d\n"),
        std::string("# only a comment\n"), std::string("[a, b, c]\n"),
        std::string("- &x run\n- *x\n- command: [e, f]\n  p: &y [1, 2]\n  q: *y\n"),
        std::string("- a && b\n- ls *.txt\n- command: x\n  m: [a&b, '*c']\n")}) {
    SCOPED_TRACE(text);
    drain_in_batches_and_compare(text);
  }
}

TEST(QueueDocumentTest, TakingRandomQueueFilesInBatchesMatchesTakingOneAtATime) {
  for (unsigned seed = 1; seed <= 150; ++seed) {
    std::string text = QueueWriter(seed).file();
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    drain_in_batches_and_compare(text);
  }
}

// Entries with long lists, which the taker drains mostly by cutting a value
// out of the text it wrote itself: plain values (cut) mixed with values that
// need quotes, lists that shrink to one value, several keys, indents, CRLF.
std::string long_list_file(unsigned seed) {
  std::mt19937 random(seed);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  static const std::vector<std::string> pool = {
      "a",   "llama-7B", "1",    "1.5",   "a/b", "x_y",  "true", "null",  "-x",
      "x y", "c,d",      "it's", "[1]",   "#h",  "a: b", "é",    "0x1F",  "1e3"};
  auto values = [&](int count) {
    std::string out = "[";
    for (int i = 0; i < count; ++i) {
      const std::string& value = pick(3) == 0 ? pool[pick(static_cast<int>(pool.size()))]
                                              : "v" + std::to_string(i);
      bool plain = value.find_first_of(" ,[]#:'") == std::string::npos && value != "-x" &&
                   value != "null";
      std::string quote = value.find('\'') == std::string::npos ? "'" : "\"";
      out += (i > 0 ? ", " : "") + (plain ? value : quote + value + quote);
    }
    return out + "]";
  };
  std::string indent(static_cast<std::size_t>(pick(3)), ' ');
  std::string text = pick(2) ? "# sweep\n" : "";
  int entries = 1 + pick(3);
  for (int e = 0; e < entries; ++e) {
    text += indent + "- command: run <<a>>" + (pick(2) ? " <<b>>" : "") + "\n";
    text += indent + "  a: " + values(1 + pick(12)) + "\n";
    if (pick(2)) text += indent + "  b: " + values(1 + pick(6)) + "\n";
    if (pick(3) == 0) text += indent + "- echo between\n";
  }
  return pick(4) == 0 ? with_crlf(text) : text;
}

TEST(QueueDocumentTest, DrainingLongListsMatchesTakingOneAtATime) {
  drain_in_batches_and_compare("- command: run <<i>>\n  i: [" + [] {
    std::string list;
    for (int i = 0; i < 60; ++i) list += (i > 0 ? ", " : "") + std::to_string(i);
    return list;
  }() + "]\n- echo after\n");
  for (unsigned seed = 1; seed <= 120; ++seed) {
    std::string text = long_list_file(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ":\n" + text);
    drain_in_batches_and_compare(text);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(QueueDocumentTest, DrainingCrlfFilesKeepsCrlf) {
  for (const auto& shape : queue_shapes()) {
    SCOPED_TRACE(shape);
    drain_and_check(with_crlf(shape));
  }
}

TEST(QueueDocumentTest, SpansCoverEntryLinesWithoutTheCommentsBetween) {
  std::string text =
      "# top\n"
      "- a\n"
      "\n"
      "# about b\n"
      "- command: b\n"
      "  # inside b\n"
      "  m: [1, 2]\n"
      "    # deeper, after b\n"
      "- c";
  QueueDocument doc = testing::value_of(parse_queue_document(text, "queue.yaml"));
  ASSERT_EQ(doc.entries.size(), 3u);
  EXPECT_TRUE(doc.block_style);
  auto span_text = [&](const EntrySpan& span) {
    return text.substr(span.begin, span.end - span.begin);
  };
  EXPECT_EQ(span_text(doc.entries[0]), "- a\n");
  EXPECT_EQ(span_text(doc.entries[1]), "- command: b\n  # inside b\n  m: [1, 2]\n");
  EXPECT_EQ(span_text(doc.entries[2]), "- c");
  for (const auto& span : doc.entries) EXPECT_EQ(span.indent, 0);
  EXPECT_EQ(doc.entries[1].entry.line, 5);
}

TEST(QueueDocumentTest, TakingRewritesOnlyTheFirstEntry) {
  std::string text =
      "# top comment\n"
      "- command: run\n"
      "  m: [a, b]\n"
      "  n: [1, 2]\n"
      "\n"
      "# about the next one\n"
      "- echo   'untouched'   # as written\n";
  EXPECT_EQ(take(text),
            "# top comment\n"
            "- command: run\n"
            "  m: [a]\n"
            "  n: [2]\n"
            "- command: run\n"
            "  m: [b]\n"
            "  n: [1, 2]\n"
            "\n"
            "# about the next one\n"
            "- echo   'untouched'   # as written\n");
}

TEST(QueueDocumentTest, AConsumedEntryLeavesTheCommentsAroundIt) {
  EXPECT_EQ(take("# top\n- a\n# about b\n- b\n"), "# top\n# about b\n- b\n");
  EXPECT_EQ(take("- command: [a, b]\n  # inside\n  m: x\n- c\n"), "- command: [b]\n  m: x\n- c\n");
  EXPECT_EQ(take("- command: [a, b]\n  # trailing\n- c\n"), "- command: [b]\n  # trailing\n- c\n");
  EXPECT_EQ(take("- a\n- b"), "- b");
  EXPECT_EQ(take("- command: [a, b]"), "- command: [b]\n");
  EXPECT_EQ(take("- only\n# the end\n"), "# the end\n");
}

TEST(QueueDocumentTest, CrlfStaysCrlf) {
  std::string text = "# c\r\n- a\r\n- command: [b, c]\r\n  m: x\r\n";
  std::string once = take(text);
  EXPECT_EQ(once, "# c\r\n- command: [b, c]\r\n  m: x\r\n");
  EXPECT_EQ(take(once), "# c\r\n- command: [c]\r\n  m: x\r\n");
}

TEST(QueueDocumentTest, IndentedListStaysIndented) {
  EXPECT_EQ(take("  - command: [a, b]\n  - c\n"), "  - command: [b]\n  - c\n");
}

TEST(QueueDocumentTest, FlowListIsRewrittenWhole) {
  std::string text = "# header\n[a, {command: b, m: [1, 2]}, c]  # trailing\n";
  QueueDocument doc = testing::value_of(parse_queue_document(text, "queue.yaml"));
  EXPECT_FALSE(doc.block_style);
  ASSERT_EQ(doc.entries.size(), 3u);
  EXPECT_EQ(take(text), "# header\n- command: b\n  m: [1, 2]\n- c\n");
  drain_and_check(text);
}

TEST(QueueDocumentTest, NothingToTakeFromEmptyQueues) {
  for (const std::string text :
       {"", "\n\n", "# only a comment\n", "[]\n", "~\n", "---\n", "null"}) {
    QueueDocument doc = testing::value_of(parse_queue_document(text, "queue.yaml"));
    EXPECT_TRUE(doc.entries.empty()) << text;
    EXPECT_FALSE(peek_first_job(doc).has_value()) << text;
    EXPECT_EQ(text_without_first_job(doc), text);
  }
}

TEST(QueueDocumentTest, AnchorsUsedByLaterEntriesStillGiveTheSameJobs) {
  drain_and_check("- command: [a, b]\n  m: &ms [x, y]\n- command: c\n  m: *ms\n", false);
}

TEST(QueueDocumentTest, MergeKeysGiveTheMergedJobsAndSurviveTheAnchorsEntryBeingTaken) {
  std::string text =
      "- &base\n"
      "  command: run <<m>> <<n>>\n"
      "  m: [x, y]\n"
      "  n: 1\n"
      "- <<: *base\n"
      "  m: z\n";
  EXPECT_EQ(all_jobs(text).size(), 3u);
  EXPECT_EQ(all_jobs(text).back(), all_jobs("- command: run <<m>> <<n>>\n  m: z\n  n: 1\n")[0]);
  drain_and_check(text, false);
}

TEST(QueueDocumentTest, NestingTooDeepIsNamedWithItsLineAndTheLimit) {
  std::string text = "- command: a\n  m:\n";
  std::string indent = "    ";
  for (int level = 0; level < 600; ++level, indent += "  ") text += indent + "- m:\n";
  {
    ConfigError error = testing::failure_of(parse_queue_document(text, "q.yaml"));
    EXPECT_EQ(error.file(), "q.yaml");
    // Each `- m:` line nests two levels, a list and a mapping.
    EXPECT_EQ(error.line(), 251) << error.what();
    EXPECT_NE(std::string(error.what()).find("nested too deeply here (more than 499 levels)"),
              std::string::npos)
        << error.what();
  }
}

TEST(QueueDocumentTest, ACommaThatStartsALineAfterTheListIsAnErrorNotAHang) {
  {
    ConfigError error = testing::failure_of(parse_queue_document("- echo a\n, echo b\n", "q.yaml"));
    EXPECT_EQ(error.line(), 2) << error.what();
    EXPECT_EQ(error.column(), 1) << error.what();
    EXPECT_NE(error.detail().find("`,` outside of [ ] and { }"), std::string::npos) << error.what();
  }
}

TEST(QueueDocumentTest, SyntaxErrorsGiveLineAndColumn) {
  {
    ConfigError error =
        testing::failure_of(parse_queue_document("- a\n- command: [b,\n  m: x\n", "q.yaml"));
    EXPECT_EQ(error.file(), "q.yaml");
    EXPECT_GT(error.line(), 1);
    EXPECT_GT(error.column(), 0);
    EXPECT_NE(std::string(error.what()).find("q.yaml:"), std::string::npos);
  }
}

TEST(QueueDocumentTest, ATopLevelThatIsNoListIsAnError) {
  for (const std::string text : {"command: a\n", "just a string\n"}) {
    {
      ConfigError error = testing::failure_of(parse_queue_document(text, "q.yaml"));
      EXPECT_EQ(error.line(), 1);
      EXPECT_NE(error.detail().find("list"), std::string::npos);
    }
  }
}

TEST(QueueDocumentTest, ASecondDocumentIsAnError) {
  {
    ConfigError error = testing::failure_of(parse_queue_document("- a\n---\n- b\n", "q.yaml"));
    EXPECT_EQ(error.line(), 3);
  }
}

TEST(QueueDocumentTest, InvalidEntriesAreReportedWithTheirLine) {
  {
    ConfigError error =
        testing::failure_of(parse_queue_document("- a\n\n- model: [x]\n", "q.yaml"));
    EXPECT_EQ(error.line(), 3);
    EXPECT_NE(error.detail().find("command"), std::string::npos);
  }
}

std::string append(const std::string& text, const std::string& items) {
  return text_with_appended(testing::value_of(parse_queue_document(text, "queue.yaml")),
                            testing::value_of(parse_queue_document(items, "jobs to add")));
}

TEST(QueueDocumentTest, AppendingKeepsTheFileAndAddsAtTheEnd) {
  EXPECT_EQ(append("# top\n- a   # note\n", "- b\n"), "# top\n- a   # note\n- b\n");
  EXPECT_EQ(append("- a", "- b\n"), "- a\n- b\n");
  EXPECT_EQ(append("- a\n# trailing\n", "# why\n- command: b\n  m: [1, 2]\n"),
            "- a\n# trailing\n# why\n- command: b\n  m: [1, 2]\n");
  EXPECT_EQ(append("- a\r\n", "- b\n- c\n"), "- a\r\n- b\r\n- c\r\n");
  EXPECT_EQ(append("  - a\n", "- command: |\n    two\n    lines\n"),
            "  - a\n  - command: |\n      two\n      lines\n");
  EXPECT_EQ(append("---\n- a\n...\n", "- b\n"), "---\n- a\n- b\n...\n");
}

TEST(QueueDocumentTest, AppendingToEmptyQueues) {
  EXPECT_EQ(append("", "- b\n"), "- b\n");
  EXPECT_EQ(append("# nothing yet\n", "- b\n"), "# nothing yet\n- b\n");
  EXPECT_EQ(append("# nothing yet", "- b\n"), "# nothing yet\n- b\n");
  EXPECT_EQ(append("---\n", "- b\n"), "---\n- b\n");
  EXPECT_EQ(append("# c\n[]\n", "- b\n"), "# c\n- b\n");
  EXPECT_EQ(append("~\n", "- b\n"), "- b\n");
  EXPECT_EQ(append("[a, c]\n", "- b\n"), "- a\n- c\n- b\n");
}

TEST(QueueDocumentTest, AppendedItemsInAnotherLayoutAreWrittenAnew) {
  EXPECT_EQ(append("- a\n", "[b, c]"), "- a\n- b\n- c\n");
  EXPECT_EQ(append("- a\n", "---\n- b\n"), "- a\n- b\n");
  EXPECT_EQ(append("- a\n", "  - b\n"), "- a\n- b\n");
  EXPECT_EQ(append("- a\n", "- b\r\n"), "- a\n- b\n");
}

TEST(QueueDocumentTest, AppendedJobsComeAfterTheOldOnes) {
  for (const auto& shape : queue_shapes()) {
    std::string items = "- command: added <<x>>\n  x: [1, 2]\n- |\n  multi\n  line\n";
    std::string text = append(shape, items);
    std::vector<std::string> expected = all_jobs(shape);
    for (const auto& job : all_jobs(items)) expected.push_back(job);
    EXPECT_EQ(all_jobs(text), expected) << text;
    QueueDocument doc = testing::value_of(parse_queue_document(shape, "queue.yaml"));
    if (doc.block_style && !doc.entries.empty()) {
      EXPECT_EQ(text.substr(0, doc.entries.back().end), shape.substr(0, doc.entries.back().end));
    }
  }
}

TEST(QueueDocumentTest, NoItemsAppendNothing) {
  EXPECT_EQ(append("- a\n", "# nothing\n"), "- a\n");
}

}  // namespace
}  // namespace runner
