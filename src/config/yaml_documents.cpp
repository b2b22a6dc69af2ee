// YAML text read into documents, with clear errors (see yaml_documents.h).
#include "runner/config/yaml_documents.h"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <string_view>

namespace runner {

namespace {

int line_of(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }
int column_of(const YAML::Mark& mark) { return mark.column >= 0 ? mark.column + 1 : 0; }

// Whether a document of `text` could start at a `,`, which yaml-cpp's
// LoadAll reads forever (an empty document there, again and again, each
// kept in memory). Only a `,` that begins a token can: one first on its
// line or after a blank, after a closing bracket or quote, or in a word
// that holds an anchor, alias or tag (`[]!a,` as well as `!a,`). One pass;
// text with NULs (UTF-16, UTF-32) always could.
bool may_start_a_document_at_a_comma(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return true;
  std::size_t word = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  bool word_has_a_mark = false;  // an anchor's, alias's or tag's
  for (std::size_t i = word; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      word = i + 1;
      word_has_a_mark = false;
    } else if (c == '!' || c == '&' || c == '*') {
      word_has_a_mark = true;
    } else if (c == ',' && (i == word || word_has_a_mark ||
                            std::string_view("]}\"'").find(text[i - 1]) != std::string_view::npos)) {
      return true;
    }
  }
  return false;
}

// Sees each document start and whether it is where the one before started:
// a parser that no longer moves.
class DocumentStarts : public YAML::EventHandler {
 public:
  bool stuck() const { return m_stuck; }
  const YAML::Mark& mark() const { return m_mark; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    m_stuck = m_started && mark.pos == m_mark.pos;
    m_started = true;
    m_mark = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool m_started = false;
  bool m_stuck = false;
  YAML::Mark m_mark;
};

// A failure naming the `,` a document of `text` starts at, if one does.
Status refuse_a_document_at_a_comma(const std::string& text, const std::string& path) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts))
    if (starts.stuck())
      return Status::at(path, line_of(starts.mark()), column_of(starts.mark()),
                        "a `,` outside of [ ] and { } starts nothing here: remove it, or put "
                        "the list it belongs to in [ ]");
  return Status();
}

}  // namespace

Result<std::vector<YAML::Node>> load_yaml_documents(const std::string& text,
                                                    const std::string& path) {
  try {
    if (may_start_a_document_at_a_comma(text))
      if (Status refused = refuse_a_document_at_a_comma(text, path); !refused) return refused;
    return YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& error) {
    // The parser counts a level per list and mapping; the one that would
    // make `depth()` is refused.
    return Status::at(
        path, line_of(error.mark), column_of(error.mark),
        fmt::format("lists and mappings are nested too deeply here (more than {} levels); an "
                    "entry needs at most three (the file's list, the entry's mapping, a list of "
                    "values): remove the extra nesting",
                    error.depth() - 1));
  } catch (const YAML::Exception& error) {
    return Status::at(path, line_of(error.mark), column_of(error.mark),
                      fmt::format("not valid YAML: {}; fix the syntax here", error.msg));
  }
}

}  // namespace runner
